//go:build unix

package modelctx

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO named AGENTS.md (a hostile or broken repository) fails the
// gathering at once, naming it, instead of holding the run forever in an
// open that waits for a writer.
func TestGatherAgentsMDFIFO(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".git", "HEAD"), "")
	if err := syscall.Mkfifo(filepath.Join(root, "AGENTS.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Gather(Options{Cwd: root, Getenv: env(nil), Now: fixedNow})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "AGENTS.md") || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("err = %v, want one naming the FIFO as not a regular file", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Gather still waits on a FIFO named AGENTS.md after 5 s")
	}
}
