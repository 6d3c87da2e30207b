//go:build unix

package main

import (
	"fmt"
	"os"
	"sync"
	"syscall"

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
