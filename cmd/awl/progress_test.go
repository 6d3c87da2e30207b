package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/provider/providertest"
)

// stuck is a stderr nobody reads: every write blocks for good.
type stuck struct{}

func (stuck) Write(p []byte) (int, error) { select {} }

// A stderr that blocks (a full pipe nobody drains) stalls neither the run
// nor its exit: the tools run, the answer reaches stdout, the exit code is
// the run's.
func TestBlockedStderrDoesNotStall(t *testing.T) {
	srv := providertest.New()
	defer srv.Close()
	srv.Enqueue(providertest.ToolCall("anthropic", "c1", "bash", `{"command":"echo ran > ran.txt"}`), providertest.Text("anthropic", "finished"))
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("AWL_SESSION_DIR", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("GITHUB_ACTIONS", "true")
	dir := t.TempDir()
	t.Chdir(dir)
	var out bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- Main(context.Background(), []string{"run", "--no-stdin", "go"}, nil, &out, stuck{}) }()
	select {
	case c := <-done:
		if c != 0 {
			t.Fatalf("exit %d", c)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("a blocked stderr stalled the run")
	}
	if out.String() != "finished\n" {
		t.Errorf("stdout %q", out.String())
	}
	if _, err := os.Stat(dir + "/ran.txt"); err != nil {
		t.Errorf("the tool did not run: %v", err)
	}
}

// On a terminal, outside CI, a status line is drawn under the step lines
// and redrawn in place (\r, erase line); it is cleared at the end, so the
// last thing on the terminal is the session hint. The same run on a pipe
// has no status line.
func TestLiveStatusOnTerminal(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	srv := providertest.New()
	defer srv.Close()
	srv.Enqueue(providertest.ToolCall("anthropic", "c1", "bash", `{"command":"sleep 1.2"}`), providertest.Text("anthropic", "finished"))
	// The test binary runs as awl when called by that name (TestMain).
	awl := filepath.Join(t.TempDir(), "awl")
	if err := os.Symlink(exe, awl); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(awl, "run", "--no-stdin", "go")
	cmd.Env = append(os.Environ(), "ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL="+srv.URL,
		"AWL_SESSION_DIR="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "CI=", "GITHUB_ACTIONS=", "TERM=xterm")
	cmd.Dir = t.TempDir()
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	ptmx, tty, err := pty.Open()
	if err != nil {
		testenv.Require(t, "no pseudo-terminal: "+err.Error())
	}
	defer ptmx.Close()
	pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 100})
	cmd.Stderr = tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var term bytes.Buffer
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			term.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, term.String())
	}
	<-readDone
	got := term.String()
	if stdout.String() != "finished\n" {
		t.Errorf("stdout %q", stdout.String())
	}
	// The status line while bash runs, redrawn at least once by the tick.
	if strings.Count(got, "· bash running") < 2 {
		t.Errorf("no live status line redrawn while the tool ran:\n%q", got)
	}
	if !strings.Contains(got, "\r\x1b[Kawl: tool bash: sleep 1.2 -> exit 0, ") {
		t.Errorf("the step line does not clear the status line first:\n%q", got)
	}
	lines := strings.Split(got, "\n")
	if len(lines) < 2 || !strings.HasSuffix(got, "\r\x1b[K") || !strings.Contains(lines[len(lines)-2], "awl: session ") {
		t.Errorf("the status line is not cleared at the end, under the last line:\n%q", got)
	}
	for line := range strings.SplitSeq(got, "\n") {
		if i := strings.LastIndex(line, "\r"); i >= 0 && len([]rune(line[i:])) > 101 {
			t.Errorf("status line wider than the terminal: %q", line)
		}
	}
}
