package procenv

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

const secretValue = "sk-procenv-SENTINEL-0123456789"

// With AWL_PROCENV_CHILD set the test binary hides AWL_TEST_SECRET and
// AWL_TEST_EMPTY, reports what it still sees itself and its environment
// block as it now is in memory (read with process_vm_readv, which a
// process may do to itself dumpable or not), and waits for stdin to close
// so the parent can read its /proc files.
func TestMain(m *testing.M) {
	if mode := os.Getenv("AWL_PROCENV_CHILD"); mode != "" {
		if mode == "procmem" {
			useProcessVM = false
		}
		if mode == "setenv" {
			// A variable set since the start is not in the block:
			// startBlock must not find it, and Hide still blanks.
			os.Setenv("AWL_TEST_ADDED", "x")
		}
		start, end, berr := envBounds()
		fast := "none"
		mem := &selfMem{}
		if block, at, ok := startBlock(mem); ok {
			fast = fmt.Sprintf("%v", at == start && int64(len(block)) == end-start)
		}
		mem.Close()
		err := Hide([]string{"AWL_TEST_SECRET", "AWL_TEST_EMPTY", "AWL_TEST_UNSET"})
		dumpable, _, _ := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_GET_DUMPABLE, 0, 0)
		fmt.Printf("err=%v dumpable=%d getenv=%s\n", err, dumpable, os.Getenv("AWL_TEST_SECRET"))
		block := make([]byte, max(end-start, 0))
		if berr == nil {
			_, berr = unix.ProcessVMReadv(os.Getpid(),
				[]unix.Iovec{{Base: &block[0], Len: uint64(len(block))}},
				[]unix.RemoteIovec{{Base: uintptr(start), Len: len(block)}}, 0)
		}
		fmt.Printf("%q %v\n", block, berr)
		fmt.Printf("startBlock=%s\n", fast)
		bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// childEnv is the environment the child hides two variables of.
var childEnv = []string{"AWL_PROCENV_CHILD=1", "BEFORE=kept-before", "AWL_TEST_SECRET=" + secretValue, "AWL_TEST_EMPTY=", "AFTER=kept-after"}

// childProcMemEnv is childEnv for a child told that process_vm_readv and
// process_vm_writev are refused.
var childProcMemEnv = append([]string{"AWL_PROCENV_CHILD=procmem"}, childEnv[1:]...)

// childSetenvEnv is childEnv for a child that sets a variable before it
// hides: the block is then found through /proc/self/stat.
var childSetenvEnv = append([]string{"AWL_PROCENV_CHILD=setenv"}, childEnv[1:]...)

// runChild runs the test binary bin as the child above, with cred if not
// nil, and checks that its block lost the secret, and only the secret,
// both as the child sees it in memory and, where this process may read
// it, in /proc/PID/environ. A reader of the same uid that is not root must
// be refused that file.
func runChild(t *testing.T, bin string, cred *syscall.Credential) {
	t.Helper()
	runChildWith(t, bin, cred, childEnv, "true")
}

// runChildWith runs the child with env and checks it, and that
// startBlock found the block where /proc/self/stat puts it (fast "true"),
// or declined ("none").
func runChildWith(t *testing.T, bin string, cred *syscall.Credential, env []string, fast string) {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
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
	r := bufio.NewReader(out)
	line, _ := r.ReadString('\n')
	if want := "err=<nil> dumpable=0 getenv=" + secretValue + "\n"; line != want {
		t.Fatalf("child reported %q, want %q", line, want)
	}
	line, _ = r.ReadString('\n')
	var block string
	if _, err := fmt.Sscanf(line, "%q <nil>\n", &block); err != nil {
		t.Fatalf("child's block line %q: %v", line, err)
	}
	checkBlock(t, "the child's environment block in memory", env, []byte(block))
	line, _ = r.ReadString('\n')
	if want := "startBlock=" + fast + "\n"; line != want {
		t.Errorf("child reported %q, want %q", line, want)
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid))
	if os.Geteuid() != 0 {
		// Of the same user and not root: a non-dumpable process's
		// environ is closed to us, which protects it too.
		if err == nil {
			t.Errorf("a process of the same uid read the non-dumpable child's environ: %q", environ)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	checkBlock(t, "/proc/PID/environ", env, environ)
}

func checkBlock(t *testing.T, what string, env []string, environ []byte) {
	t.Helper()
	if bytes.Contains(environ, []byte("SENTINEL")) {
		t.Fatalf("the secret is still in %s: %q", what, environ)
	}
	for _, want := range []string{"BEFORE=kept-before", "AFTER=kept-after", "AWL_TEST_SECRET=", "AWL_TEST_EMPTY=", env[0]} {
		if !strings.Contains("\x00"+string(environ), "\x00"+want+"\x00") {
			t.Errorf("%q missing from %s: %q", want, what, environ)
		}
	}
	if want := len(strings.Join(env, "\x00")) + 1; len(environ) != want {
		t.Errorf("%s is %d bytes, want the block's own %d: entries moved", what, len(environ), want)
	}
}

func TestHideBlanksTheValueInProcEnviron(t *testing.T) {
	runChild(t, os.Args[0], nil)
}

// TestHideThroughProcMem: where process_vm_readv and process_vm_writev
// are refused, Hide reads and writes the block through /proc/self/mem.
func TestHideThroughProcMem(t *testing.T) {
	runChildWith(t, os.Args[0], nil, childProcMemEnv, "true")
}

// TestHideAfterSetenv: a process that changed its environment since it
// started has a block that is not os.Environ's strings; startBlock must
// decline it, and Hide find the block through /proc/self/stat.
func TestHideAfterSetenv(t *testing.T) {
	runChildWith(t, os.Args[0], nil, childSetenvEnv, "none")
}

// unprivilegedUID is who the test runs the child as when it is root.
const unprivilegedUID = 65534

// TestHideBlanksAsUnprivilegedUser: a process without CAP_SYS_PTRACE or
// CAP_DAC_OVERRIDE blanks its block too (it must do so before it gives up
// dumpability, which closes its own /proc/self/mem to it). Run as root,
// the test runs the child as uid 65534, so that both cases run on a
// machine where the tests run as root.
func TestHideBlanksAsUnprivilegedUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: TestHideBlanksTheValueInProcEnviron already ran the child unprivileged")
	}
	// The test binary lies in a directory only root may enter: copy it
	// where the other uid can run it.
	dir, err := os.MkdirTemp("", "procenv")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "procenv.test")
	if err := os.WriteFile(bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	cred := &syscall.Credential{Uid: unprivilegedUID, Gid: unprivilegedUID}
	runChild(t, bin, cred)
	// Where process_vm_writev is refused, the block is written through
	// /proc/self/mem, which such a process can open only while it is
	// still dumpable.
	runChildWith(t, bin, cred, childProcMemEnv, "true")
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

// BenchmarkHide is what hiding adds to awl's start: prctl, reading the
// auxiliary vector, and reading and rewriting the environment block through
// /proc/self/mem. Target: < 2 ms. Run it with none of names set: once a
// call blanked one, the block is no longer os.Environ's strings, and each
// later call also reads /proc/self/stat (an awl process hides once).
func BenchmarkHide(b *testing.B) {
	names := []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENROUTER_API_KEY", "OLLAMA_API_KEY", "GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"}
	for b.Loop() {
		if err := Hide(names); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSelfMem: selfMem reads and writes this process's memory with
// process_vm_readv and process_vm_writev, without opening /proc/self/mem,
// and through /proc/self/mem when told those are refused.
func TestSelfMem(t *testing.T) {
	for _, vm := range []bool{true, false} {
		useProcessVM = vm
		buf := []byte("before-" + strconv.FormatBool(vm))
		addr := int64(uintptr(unsafe.Pointer(&buf[0])))
		m := &selfMem{}
		got := make([]byte, len(buf))
		if _, err := m.ReadAt(got, addr); err != nil || !bytes.Equal(got, buf) {
			t.Errorf("process_vm %v: read %q, %v; want %q", vm, got, err, buf)
		}
		want := bytes.ToUpper(buf)
		if _, err := m.WriteAt(want, addr); err != nil || !bytes.Equal(buf, want) {
			t.Errorf("process_vm %v: wrote %q, memory holds %q, %v", vm, want, buf, err)
		}
		if opened := m.f != nil; opened == vm {
			t.Errorf("process_vm %v: /proc/self/mem opened: %v", vm, opened)
		}
		m.Close()
		runtime.KeepAlive(buf)
	}
	useProcessVM = true
}
