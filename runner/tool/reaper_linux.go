package tool

import (
	"fmt"
	"os"
	"sync"

	"github.com/awlrun/awl/internal/watchdog"
)

// reaperScript reads "+PGID" and "-PGID" lines on stdin, keeping the list
// of live tool process groups; at end of input (awl exited or was killed,
// closing the pipe) it SIGKILLs every group still listed.
const reaperScript = `set --
while IFS= read -r l; do
  case $l in
    +*) set -- "$@" "${l#+}";;
    -*) n=${l#-}; for p do shift; [ "$p" = "$n" ] || set -- "$@" "$p"; done;;
  esac
done
for p do kill -s KILL -- "-$p" 2>/dev/null; done`

// reaper is a small sh process, started on the first tool call, that
// outlives a SIGKILLed awl just long enough to kill the process groups of
// the tools that were running: the parent-death signal reaches only the
// process awl started, not what bash forked.
var reaper struct {
	once sync.Once
	mu   sync.Mutex
	w    *os.File
}

// trackGroup tells the reaper that the process group pgid is live (add) or
// gone. Without a reaper (it could not start) it does nothing.
func trackGroup(pgid int, add bool) {
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
