//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/awlrun/awl/internal/watchdog"
)

// childAttr puts a call's run in a process group of its own: a terminal's
// Ctrl-C reaches the server, which interrupts each run once.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// runTermScript reads "+PID" and "-PID" lines, keeping the list of the
// calls' runs still going; at end of input (the server exited, or was
// killed) it sends each SIGTERM, once: the run then ends its session as
// after any SIGTERM. The parent-death signal would not do: a server's
// threads die one by one, and the kernel sends it again at each, which a
// run takes for a second signal and exits at once, its session unended.
const runTermScript = `pids=" "
while IFS= read -r l; do
  case $l in
    +*) pids="$pids${l#+} ";;
    -*) n=" ${l#-} "; case $pids in *"$n"*) pids="${pids%%"$n"*} ${pids#*"$n"}";; esac;;
  esac
done
for p in $pids; do kill -s TERM "$p" 2>/dev/null; done`

// runWatch is the server's watchdog of its calls' runs (runTermScript),
// started with the first call.
type runWatch struct {
	once sync.Once
	mu   sync.Mutex
	w    *os.File
}

// track says that the run pid has started (add) or been reaped; without
// a watchdog (it could not start) it does nothing.
func (rw *runWatch) track(pid int, add bool) {
	rw.once.Do(func() {
		w, err := watchdog.Start(runTermScript, "awl-mcp-serve-watch")
		if err == nil {
			rw.w = w
		}
	})
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.w == nil {
		return
	}
	sign := "-"
	if add {
		sign = "+"
	}
	if _, err := fmt.Fprintf(rw.w, "%s%d\n", sign, pid); err != nil {
		rw.w.Close()
		rw.w = nil
	}
}

// errClientGone is why the calls end when the reader of the server's
// stdout has gone.
var errClientGone = errors.New("the client is gone (its end of stdout is closed)")

// watchReader calls gone once nobody can read w any more: w is a pipe or
// a socket whose other end is closed (poll reports POLLERR or POLLHUP,
// without a write). The server then interrupts its calls at once rather
// than run them to an answer nobody reads; a write would tell too, but a
// call may write nothing for many minutes. It watches until ctx is done;
// any other w (a file, a terminal) it leaves alone.
func watchReader(ctx context.Context, w io.Writer, gone func(error)) {
	if sw, ok := w.(*signalSafeWriter); ok {
		w = sw.w
	}
	f, ok := w.(*os.File)
	if !ok {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	fd := -1
	rc.Control(func(d uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(d), &st) == nil && (st.Mode&unix.S_IFMT == unix.S_IFIFO || st.Mode&unix.S_IFMT == unix.S_IFSOCK) {
			fd = int(d)
		}
	})
	if fd < 0 {
		return
	}
	go func() {
		// The descriptor stays open as long as the server runs: stdout
		// is closed by nobody.
		fds := []unix.PollFd{{Fd: int32(fd)}}
		for ctx.Err() == nil {
			n, err := unix.Poll(fds, 1000)
			if err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
				gone(errClientGone)
				return
			}
		}
	}()
}
