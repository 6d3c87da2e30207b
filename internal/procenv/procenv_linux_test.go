package procenv

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

const secretValue = "sk-procenv-SENTINEL-0123456789"

// With AWL_PROCENV_CHILD set the test binary hides AWL_TEST_SECRET and
// AWL_TEST_EMPTY, reports what it still sees itself, and waits for stdin to
// close so the parent can read its /proc files.
func TestMain(m *testing.M) {
	if os.Getenv("AWL_PROCENV_CHILD") != "" {
		err := Hide([]string{"AWL_TEST_SECRET", "AWL_TEST_EMPTY", "AWL_TEST_UNSET"})
		dumpable, _, _ := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_GET_DUMPABLE, 0, 0)
		fmt.Printf("err=%v dumpable=%d getenv=%s\n", err, dumpable, os.Getenv("AWL_TEST_SECRET"))
		bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestHideBlanksTheValueInProcEnviron(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "AWL_PROCENV_CHILD=1", "BEFORE=kept-before", "AWL_TEST_SECRET="+secretValue, "AWL_TEST_EMPTY=", "AFTER=kept-after")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if want := "err=<nil> dumpable=0 getenv=" + secretValue + "\n"; line != want {
		t.Fatalf("child reported %q, want %q", line, want)
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid))
	if err != nil {
		// Not root: a non-dumpable process's environ is closed to us,
		// which protects it too.
		t.Logf("reading the child's environ: %v", err)
		return
	}
	if bytes.Contains(environ, []byte("SENTINEL")) {
		t.Fatalf("the secret is still in /proc/PID/environ: %q", environ)
	}
	vars := strings.Split(string(environ), "\x00")
	for _, want := range []string{"BEFORE=kept-before", "AFTER=kept-after", "AWL_TEST_SECRET=", "AWL_TEST_EMPTY=", "AWL_PROCENV_CHILD=1"} {
		if !strings.Contains("\x00"+string(environ), "\x00"+want+"\x00") {
			t.Errorf("%q missing from the child's environ: %q", want, vars)
		}
	}
	if len(environ) != len(strings.Join(cmd.Env, "\x00"))+1 {
		t.Errorf("environ is %d bytes, want the block's own %d: entries moved", len(environ), len(strings.Join(cmd.Env, "\x00"))+1)
	}
}

func TestBlank(t *testing.T) {
	block := []byte("A=1\x00KEY=secret\x00KEYX=keep\x00KEY=again\x00=odd\x00NOEQ\x00")
	if !blank(block, []string{"KEY"}) {
		t.Fatal("blank reported no change")
	}
	if want := "A=1\x00KEY=\x00\x00\x00\x00\x00\x00\x00KEYX=keep\x00KEY=\x00\x00\x00\x00\x00\x00=odd\x00NOEQ\x00"; string(block) != want {
		t.Errorf("block = %q\nwant    %q", block, want)
	}
	if blank(block, []string{"KEY"}) {
		t.Error("blanking again reported a change")
	}
}

// BenchmarkHide is what hiding adds to awl's start: prctl, reading
// /proc/self/stat, and reading and rewriting the environment block through
// /proc/self/mem. Target: < 2 ms.
func BenchmarkHide(b *testing.B) {
	names := []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENROUTER_API_KEY", "OLLAMA_API_KEY", "GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"}
	for b.Loop() {
		if err := Hide(names); err != nil {
			b.Fatal(err)
		}
	}
}
