//go:build unix

package rawfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFIFORefusedAtOnce: a FIFO with no writer is refused, not waited on
// (os.Open would block until something opens it to write).
func TestFIFORefusedAtOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadFile(p, 100); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		// Unblock the open so the goroutine ends.
		if w, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("ReadFile waits on a FIFO")
	}
}

// TestReadFileGrown: a file that grows between the fstat and the read is
// read to its end, and refused once it holds more than max.
func TestReadFileGrown(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("ab"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, max := range []int64{9000, 8999} {
		if err := os.WriteFile(p, []byte("ab"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, 9000), 0o644); err != nil {
			t.Fatal(err)
		}
		// What ReadFile does after its Open: read on past the size seen.
		got, err := readAll(f, max)
		f.Close()
		if max == 9000 && (err != nil || len(got) != 9000) {
			t.Errorf("grown: %d bytes, %v", len(got), err)
		}
		if max == 8999 && !errors.Is(err, ErrTooLarge) {
			t.Errorf("grown past max: %d bytes, %v", len(got), err)
		}
	}
}
