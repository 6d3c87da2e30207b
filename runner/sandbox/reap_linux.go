package sandbox

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Where awl cannot make a PID namespace (not root), it is the child
// subreaper of its process tree instead: a process a tool started that
// outlives its parent (`setsid -f`, a double fork) becomes awl's child
// rather than init's, and sweep ends every such process at the end of the
// run. It cannot when awl is SIGKILLed: the orphans go to init then, and
// outlive awl unless awl could make them a cgroup (cgroup_linux.go).
//
// A tool's process is told from awl's other children by what the sandbox
// gave it and no process can shed: no_new_privs, and with the network off
// the seccomp filter. awl itself has neither (when it has, only the filter
// tells, and with the network on nothing does: then nothing is swept).

// reaper is the subreaper state, made with the first sandbox that needs it.
var reaper struct {
	once sync.Once
	ok   bool // awl is a subreaper
	// nnp and filters are awl's own no_new_privs and seccomp filter
	// count, which its children inherit.
	nnp     bool
	filters int
}

// becomeSubreaper makes awl the child subreaper, once; it reports whether
// awl is one.
func becomeSubreaper() bool {
	reaper.once.Do(func() {
		if unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != nil {
			return
		}
		reaper.ok = true
		// This thread's marks, not the main thread's that /proc/PID
		// shows: Go may have run a confined command's starter on the
		// main thread, which then stays confined (a locked goroutine
		// that ends leaves the main thread wedged, not ended). A thread
		// that runs ordinary goroutines never is.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		reaper.nnp, reaper.filters = confinement("thread-self")
	})
	return reaper.ok
}

// confinement reads the no_new_privs and seccomp filter count of a
// process (/proc/PID/status, its main thread's) or of "thread-self".
func confinement(pid string) (nnp bool, filters int) {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return false, 0
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("NoNewPrivs:")); ok {
			nnp = string(bytes.TrimSpace(v)) == "1"
		} else if v, ok := bytes.CutPrefix(line, []byte("Seccomp_filters:")); ok {
			filters, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		}
	}
	return nnp, filters
}

// children lists the processes whose parent is awl, zombies included.
func children() []int {
	self := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) > 1 {
			if ppid, _ := strconv.Atoi(string(f[1])); ppid == self {
				out = append(out, pid)
			}
		}
	}
	return out
}

// sweep kills and reaps every process that a tool started and that
// outlived its parent, until none is left: killing one orphans its
// children to awl in turn. The processes the sandbox started itself (a
// command, an MCP server) are left to whoever waits for them.
func (s *Sandbox) sweep() {
	if s == nil || !s.reap {
		return
	}
	for range 100 {
		var found []int
		for _, pid := range children() {
			if s.started(pid) {
				continue
			}
			nnp, filters := confinement(strconv.Itoa(pid))
			if nnp && !reaper.nnp || filters > reaper.filters {
				found = append(found, pid)
			}
		}
		if len(found) == 0 {
			return
		}
		for _, pid := range found {
			unix.Kill(pid, unix.SIGKILL)
		}
		for _, pid := range found {
			var ws unix.WaitStatus
			for {
				if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
					break
				}
			}
		}
	}
}
