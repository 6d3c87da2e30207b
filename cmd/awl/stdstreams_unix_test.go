//go:build unix

package main

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestStdStreamsAreCloseOnExecDuplicates: awl writes through duplicates of
// descriptors 1 and 2, so that a broken pipe fails a write (EPIPE) rather
// than killing awl without a caught SIGPIPE (sessions_pipe.txtar checks
// that end to end); they are closed on exec, so no tool inherits them.
func TestStdStreamsAreCloseOnExecDuplicates(t *testing.T) {
	stdout, stderr, catchPipe := stdStreams()
	defer stdout.Close()
	defer stderr.Close()
	if catchPipe {
		t.Fatal("stdStreams could not duplicate 1 and 2: signalContext would catch SIGPIPE")
	}
	for i, f := range []int{int(stdout.Fd()), int(stderr.Fd())} {
		orig := i + 1
		if f == orig || f <= 2 {
			t.Fatalf("descriptor %d is returned as %d, not a duplicate", orig, f)
		}
		flags, err := unix.FcntlInt(uintptr(f), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC == 0 {
			t.Errorf("the duplicate of %d (%d) is not closed on exec: flags %#x, %v", orig, f, flags, err)
		}
		var a, b unix.Stat_t
		if unix.Fstat(f, &a) != nil || unix.Fstat(orig, &b) != nil || a.Dev != b.Dev || a.Ino != b.Ino {
			t.Errorf("descriptor %d is not a duplicate of %d", f, orig)
		}
	}
}
