//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// ABI returns the kernel's Landlock ABI version, 0 when it has none.
func ABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// missingReason says why Landlock is missing.
func missingReason() string {
	_, err := llsys.LandlockGetABIVersion()
	switch {
	case errors.Is(err, syscall.EOPNOTSUPP):
		return "it is built in but not enabled at boot; add landlock to the lsm= kernel parameter"
	case errors.Is(err, syscall.ENOSYS):
		return "the kernel is older than 5.13 or built without CONFIG_SECURITY_LANDLOCK"
	case err != nil:
		return err.Error()
	}
	return "unknown"
}

// ruleset is a Landlock ruleset, made once per sandbox and applied to a
// new thread for each command.
type ruleset struct {
	fd    int
	flags uint32
	// filter is the seccomp filter, installed after the Landlock domain
	// (its network part only with the network off); nil where the filter
	// is not built.
	filter []unix.SockFilter

	mu sync.Mutex
	// launchers start the commands, [0] the tools' and checks', [1] the
	// MCP servers': made at the first command of each. Each has a
	// Landlock domain of its own, so the tools' cannot reach into the
	// servers' (see start).
	launchers [2]*launcher
}

// newRuleset makes the ruleset of p: reading and executing anywhere,
// writing only in p's writable directories and /dev/null, and, without
// p.Network, no TCP connect or bind (nor UDP, where the kernel restricts
// it). It covers what the kernel supports.
func newRuleset(p Policy) (*ruleset, error) {
	cfg := landlock.V11.BestEffort()
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles("/dev/null"),
	}
	if p.Network {
		cfg.HandledAccessNet = 0
		// Pathname UNIX sockets (a Docker or SSH agent socket) count as
		// network: reachable only when the network is. So do abstract
		// ones, which Landlock otherwise scopes to the command (ABI 6).
		rules[0] = landlock.RODirs("/").WithResolveUnix()
		cfg.Scoped &^= llsys.ScopeAbstractUnixSocket
	}
	if dirs := p.WritableDirs(); len(dirs) > 0 {
		rules = append(rules, landlock.RWDirs(dirs...).WithRefer())
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return nil, fmt.Errorf("make the Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return nil, errors.New("make the Landlock ruleset: the kernel has no Landlock")
	}
	rs := &ruleset{fd: fd, flags: flags}
	if len(seccompArchs) > 0 {
		rs.filter = filterProgram(seccompArchs, p.Network)
	}
	return rs, nil
}

func (rs *ruleset) close() {
	rs.mu.Lock()
	for _, l := range rs.launchers {
		if l != nil {
			l.stop()
		}
	}
	rs.mu.Unlock()
	unix.Close(rs.fd)
}

// launcher is an OS thread of awl's confined once to a ruleset (its
// Landlock domain, the filter, the capabilities, and as root the
// namespaces) that starts every command of it: a Landlock domain and a
// seccomp filter belong to a thread, and a process inherits those of the
// thread that forked it. Confining a new thread for each command instead
// costs a thread, a dozen system calls and some forty copies of the
// thread's credentials (one per capability cleared from the bounding
// set) each time.
//
// The thread runs nothing else: its goroutine is locked to it and never
// unlocked, so when the goroutine returns the runtime ends the thread
// instead of running other goroutines on it; nor does the runtime create
// threads from a locked one. It ends once the sandbox is closed and every
// process it started has exited: a command's parent-death signal
// (SysProcAttr.Pdeathsig) fires when the thread that forked it ends.
type launcher struct {
	reqs    chan launch
	done    chan struct{}
	err     error // why the thread could not be confined
	running sync.WaitGroup
}

// launch is one command for a launcher to start; err receives cmd.Start's
// error, and pidfd (or -1) a pidfd of the started process, opened before
// anyone could reap it. procs, when not -1, is the cgroup.procs of the
// cgroup the command, started stopped (cgroup.into), moves into before
// it runs.
type launch struct {
	cmd   *exec.Cmd
	err   chan error
	pidfd int
	procs int
}

// launcher returns rs's launcher for MCP servers (server) or the other
// commands, making it, once, on a new thread.
func (rs *ruleset) launcher(ns *nsInit, server bool) *launcher {
	i := 0
	if server {
		i = 1
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if l := rs.launchers[i]; l != nil {
		return l
	}
	l := &launcher{reqs: make(chan launch), done: make(chan struct{})}
	ready := make(chan struct{})
	go l.run(rs, ns, rs.filter, ready)
	<-ready
	rs.launchers[i] = l
	return l
}

// run confines the calling thread, then starts the commands sent to it.
func (l *launcher) run(rs *ruleset, ns *nsInit, filter []unix.SockFilter, ready chan<- struct{}) {
	runtime.LockOSThread() // never unlocked: see launcher
	if l.err = confineThread(rs, ns, filter); l.err != nil {
		close(ready)
		return
	}
	close(ready)
	for {
		select {
		case req := <-l.reqs:
			err := req.cmd.Start()
			if err == nil && req.procs >= 0 {
				if err = moveTraced(req.cmd.Process.Pid, req.procs); err != nil {
					req.cmd.Process.Kill()
					req.cmd.Wait()
				}
			}
			if err == nil {
				l.running.Add(1)
				if fd, perr := unix.PidfdOpen(req.cmd.Process.Pid, 0); perr == nil {
					req.pidfd = fd
				}
			}
			req.err <- err
		case <-l.done:
			l.running.Wait()
			return
		}
	}
}

// stop ends the launcher once every process it started has exited.
func (l *launcher) stop() {
	if l.err == nil {
		close(l.done)
	}
}

// confineThread confines the calling (locked) thread: as root with ns, it
// joins the namespaces; then it clears every capability but keptCaps,
// sets no_new_privs, restricts itself to rs's Landlock domain and
// installs filter.
func confineThread(rs *ruleset, ns *nsInit, filter []unix.SockFilter) error {
	if ns != nil && !ns.user {
		if err := ns.join(); err != nil {
			return err
		}
	}
	if err := dropCaps(); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := llsys.LandlockRestrictSelf(rs.fd, rs.flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	if filter != nil {
		if err := installFilter(filter); err != nil {
			return fmt.Errorf("seccomp: %w", err)
		}
	}
	return nil
}

// start starts cmd from rs's launcher, a thread confined to rs.
//
// Go 1.28's SysProcAttr can apply a ruleset in the child between fork and
// exec; until then, the thread does it.
//
// With ns, the command runs in its namespaces: as root, the launcher has
// joined them; otherwise the command runs through nsenter (nsInit.enter,
// done here, on a thread Landlock does not keep from looking through the
// init's root).
//
// after, when not nil, runs once the command has exited.
//
// An MCP server (server) starts from a launcher of its own, whose
// landlock_restrict_self made a Landlock domain apart from the tools':
// Landlock lets a process ptrace (read /proc/PID/environ and mem, attach)
// and, from ABI 6, signal only processes of its own domain or one nested
// in it, so no tool reaches into a server, nor a server into a tool.
func (rs *ruleset) start(cmd *exec.Cmd, ns *nsInit, after func(), server bool, procs int) error {
	if ns != nil && ns.user {
		wd, err := ns.enter(cmd)
		if err != nil {
			return fmt.Errorf("could not confine the command: %w", err)
		}
		defer wd.Close()
	} else if ns != nil && cmd.SysProcAttr != nil {
		// In the PID namespace the child's parent is outside it, so its
		// getppid() is 0 and Go's start would take the parent for dead
		// and deliver the parent-death signal at once. None is needed:
		// the namespace's init dies with awl, and the kernel kills every
		// process of the namespace with it.
		cmd.SysProcAttr.Pdeathsig = 0
	}
	l := rs.launcher(ns, server)
	if l.err != nil {
		return fmt.Errorf("could not confine the command: %w", l.err)
	}
	req := launch{cmd: cmd, err: make(chan error, 1), pidfd: -1, procs: procs}
	var err error
	select {
	case l.reqs <- req:
		err = <-req.err
	case <-l.done:
		err = errors.New("could not confine the command: the sandbox is closed")
	}
	if err != nil {
		return err
	}
	go l.exited(cmd.Process.Pid, req.pidfd, after)
	return nil
}

// exited waits, without reaping, until the process pid (pidfd, or -1) has
// exited, then runs after and lets the launcher end.
func (l *launcher) exited(pid, pidfd int, after func()) {
	defer l.running.Done()
	idType, id := unix.P_PIDFD, pidfd
	if pidfd < 0 {
		idType, id = unix.P_PID, pid
	} else {
		defer unix.Close(pidfd)
	}
	var info unix.Siginfo
	for unix.Waitid(idType, id, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
	}
	if after != nil {
		after()
	}
}
