//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// stdStreams returns the files awl writes its standard output and error
// through: descriptors duplicated from 1 and 2, closed on exec. Go kills a
// program whose write to descriptor 1 or 2 fails with EPIPE, unless it
// catches SIGPIPE; a write through a duplicate fails with EPIPE as on any
// other descriptor. So a consumer that closes stdout early (`| head -1`)
// never kills a run halfway through a tool call: the writes fail, events
// stop, and the run finishes its session. Catching SIGPIPE did the same at
// the cost of a round trip to the runtime's signal-mask thread at every
// start (docs/performance.md). When a descriptor cannot be duplicated (it
// is closed, or the process is out of descriptors), the original file is
// returned and catchPipe is true: signalContext then catches SIGPIPE.
func stdStreams() (stdout, stderr *os.File, catchPipe bool) {
	stdout, stderr = os.Stdout, os.Stderr
	if fd, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3); err == nil {
		stdout = os.NewFile(uintptr(fd), "/dev/stdout")
	} else {
		catchPipe = true
	}
	if fd, err := unix.FcntlInt(2, unix.F_DUPFD_CLOEXEC, 3); err == nil {
		stderr = os.NewFile(uintptr(fd), "/dev/stderr")
	} else {
		catchPipe = true
	}
	return stdout, stderr, catchPipe
}
