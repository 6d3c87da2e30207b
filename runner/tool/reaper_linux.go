package tool

import (
	"fmt"
	"os"
	"sync"

	"github.com/awlrun/awl/internal/watchdog"
)

// reaperScript reads "+PGID" and "-PGID" lines on stdin, keeping the list
// of live process groups (tool calls', MCP servers'); at end of input (awl
// exited or was killed, closing the pipe) it SIGKILLs every group still
// listed.
const reaperScript = `set --
while IFS= read -r l; do
  case $l in
    +*) set -- "$@" "${l#+}";;
    -*) n=${l#-}; for p do shift; [ "$p" = "$n" ] || set -- "$@" "$p"; done;;
  esac
done
for p do kill -s KILL -- "-$p" 2>/dev/null; done`

// reaper is a small sh process, started on the first tool call or MCP
// server, that outlives awl just long enough to kill the process groups of
// the tools and servers that were running, however awl ended: SIGKILLed,
// or exiting at once after a signal's grace period (os.Exit, which runs no
// stop sequence). The parent-death signal reaches only the process awl
// started, not what it forked.
var reaper struct {
	once sync.Once
	mu   sync.Mutex
	w    *os.File
}

// TrackGroup tells the reaper that the process group pgid is live (add) or
// gone: a group still live when awl ends is killed, whatever its members
// became (a daemon's double fork stays in the group). A caller removes the
// group once it has killed it and reaped its leader, so that a pid reused
// later is not killed. Without a reaper (it could not start) it does
// nothing.
func TrackGroup(pgid int, add bool) {
	reaper.once.Do(startReaper)
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	if reaper.w == nil {
		return
	}
	sign := "-"
	if add {
		sign = "+"
	}
	if _, err := fmt.Fprintf(reaper.w, "%s%d\n", sign, pgid); err != nil {
		reaper.w.Close()
		reaper.w = nil
	}
}

func startReaper() {
	w, err := watchdog.Start(reaperScript, "awl-reaper")
	if err != nil {
		return
	}
	reaper.w = w
}
