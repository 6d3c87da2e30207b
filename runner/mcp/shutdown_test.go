package mcp

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/runner/mcp/mcptest"
	"github.com/awlrun/awl/runner/tool"
)

// parentLogVar makes the test binary a stand-in for awl: it starts a
// stubborn server logging to the named file, says "ready" on stdout and
// waits to be killed (TestServerDiesWithKilledParent). With
// parentNoReaperVar set it starts it with no PATH, so that the tools'
// reaper (sh) cannot start and the parent-death signal alone is left.
const (
	parentLogVar      = "AWL_TEST_MCP_PARENT_LOG"
	parentNoReaperVar = "AWL_TEST_MCP_PARENT_NO_REAPER"
)

func init() {
	log := os.Getenv(parentLogVar)
	if log == "" || os.Getenv(mcptest.ModeVar) != "" {
		return
	}
	if os.Getenv(parentNoReaperVar) != "" {
		os.Setenv("PATH", "")
	}
	srv := Server{Name: "stub", Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: map[string]string{mcptest.ModeVar: "stubborn", mcptest.LogVar: log}}
	m := Start(context.Background(), []Server{srv}, Options{Timeout: time.Minute, Stderr: os.Stderr, Environ: tool.ScrubEnviron(os.Environ()), Dir: os.TempDir()})
	if f := m.Failed(); len(f) > 0 {
		fmt.Println("failed", f[0].Err)
		os.Exit(1)
	}
	fmt.Println("ready")
	select {}
}

// stubbornLog is what a stubborn fake logged: its pid, its child's, and
// when it saw the end of its stdin and SIGTERM (0 if not).
type stubbornLog struct {
	pid, child           int
	eof, term, childTerm int64
}

func readStubbornLog(t *testing.T, path string) stubbornLog {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var l stubbornLog
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(fields[len(fields)-1], 10, 64)
		switch fields[0] {
		case "start":
			if fields[1] == "stubborn" {
				l.pid = int(n)
			}
		case "child":
			l.child = int(n)
		case "eof":
			l.eof = n
		case "term":
			l.term = n
		case "child-term":
			l.childTerm = n
		}
	}
	return l
}

// waitLogged waits until the fake and its child have logged their pids.
func waitLogged(t *testing.T, path string) stubbornLog {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			if l := readStubbornLog(t, path); l.pid != 0 && l.child != 0 {
				return l
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the stubborn server never logged its pid and its child's")
		}
	}
}

// gone reports whether pid no longer runs: no such process, or a zombie
// nobody reaped yet.
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && len(b) > i+2 && b[i+2] == 'Z'
}

func waitGone(t *testing.T, what string, pid int, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); !gone(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s (pid %d) still runs %s later", what, pid, within)
		}
	}
}

// TestStopSequence: stopping a stdio server that will not stop closes its
// stdin first, then after terminateAfter sends SIGTERM to its process group
// (its child gets it too), then after as long again kills the group. The
// times are lower bounds only: a loaded machine makes them longer, never
// shorter.
func TestStopSequence(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		testenv.Require(t, "needs /proc: "+err.Error())
	}
	srv, log := fake(t, "stub", "stubborn")
	m, stderr := start(t, []Server{srv}, Options{Timeout: time.Minute})
	if f := m.Failed(); len(f) > 0 {
		t.Fatalf("the stubborn server did not start: %v\n%s", f[0].Err, stderr.String())
	}
	l := waitLogged(t, log)
	begin := time.Now()
	done := make(chan struct{})
	go func() { m.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		syscall.Kill(-l.pid, syscall.SIGKILL)
		t.Fatal("Close did not return within 60 s: the server was never killed")
	}
	took := time.Since(begin)
	l = readStubbornLog(t, log)
	if l.eof == 0 {
		t.Error("the server never saw its stdin end: Close did not close it")
	}
	if l.term == 0 || l.childTerm == 0 {
		t.Fatalf("SIGTERM reached the server: %v, its child: %v; want both (the whole group)", l.term != 0, l.childTerm != 0)
	}
	// The documented 2 s, not terminateAfter: the test checks the
	// promise, whatever the constant says.
	const documented = 2 * time.Second
	const slack = 100 * time.Millisecond // between the two processes' clocks and the log
	if l.eof != 0 && time.Duration(l.term-l.eof) < documented-slack {
		t.Errorf("SIGTERM came %s after the end of stdin, want at least %s", time.Duration(l.term-l.eof), documented)
	}
	if took < 2*documented-slack {
		t.Errorf("Close returned after %s; a server that outlives its stdin and SIGTERM has %s before the kill", took, 2*documented)
	}
	waitGone(t, "the server", l.pid, 10*time.Second)
	waitGone(t, "the server's child", l.child, 10*time.Second)
}

// TestServerDiesWithKilledParent: a stdio server and what it started die
// with the process that started it, even when that process is SIGKILLed
// and cannot stop them: the tools' reaper kills the server's process
// group, its child with it. The server here outlives the end of its stdin,
// so nothing else would stop it, and its child has no parent-death signal
// of its own. Where the reaper could not start (no sh), the kernel's
// parent-death signal still kills the server.
func TestServerDiesWithKilledParent(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		testenv.Require(t, "needs /proc: "+err.Error())
	}
	t.Run("reaper", func(t *testing.T) {
		l := startAndKillParent(t, false)
		waitGone(t, "the server of a SIGKILLed parent", l.pid, 10*time.Second)
		waitGone(t, "the child of the server of a SIGKILLed parent", l.child, 10*time.Second)
	})
	t.Run("parent-death signal alone", func(t *testing.T) {
		l := startAndKillParent(t, true)
		defer syscall.Kill(l.child, syscall.SIGKILL)
		waitGone(t, "the server of a SIGKILLed parent without a reaper", l.pid, 10*time.Second)
	})
}

// startAndKillParent starts a stand-in for awl that starts a stubborn
// server (without the reaper if noReaper), SIGKILLs it once the server
// and its child run, and returns their pids. The server's group is killed
// when the test ends, whatever happened.
func startAndKillParent(t *testing.T, noReaper bool) stubbornLog {
	log := filepath.Join(t.TempDir(), "fake.log")
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), parentLogVar+"="+log)
	if noReaper {
		parent.Env = append(parent.Env, parentNoReaperVar+"=1")
	}
	parent.Stderr = os.Stderr
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("parent said %q, want ready", line)
	}
	l := waitLogged(t, log)
	t.Cleanup(func() { syscall.Kill(-l.pid, syscall.SIGKILL) })
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	parent.Wait()
	return l
}
