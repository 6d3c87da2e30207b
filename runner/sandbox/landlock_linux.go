//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
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
	// (its network part only with the network off); filterCgroup is the
	// same but for clone3, which awl's start of a command into a cgroup
	// needs. Both nil where the filter is not built.
	filter, filterCgroup []unix.SockFilter
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
		rs.filter = filterProgram(seccompArchs, p.Network, false)
		rs.filterCgroup = filterProgram(seccompArchs, p.Network, true)
	}
	return rs, nil
}

func (rs *ruleset) close() { unix.Close(rs.fd) }

// start starts cmd from a new OS thread confined to rs. Once cmd has
// started, the thread waits for it to exit and then ends.
//
// Go 1.28's SysProcAttr can apply a ruleset in the child between fork and
// exec; until then, the thread does it.
//
// With ns, the command runs in its namespaces: as root, the thread first
// joins them; otherwise the command runs through nsenter (nsInit.enter).
//
// after, when not nil, runs on the thread once the command has exited.
func (rs *ruleset) start(cmd *exec.Cmd, ns *nsInit, after func()) error {
	started := make(chan error, 1)
	go rs.run(cmd, ns, started, after)
	return <-started
}

func (rs *ruleset) run(cmd *exec.Cmd, ns *nsInit, started chan<- error, after func()) {
	// Never unlocked: when this goroutine returns, the runtime ends the
	// thread with it instead of running other goroutines on a confined
	// thread. Nor does the runtime create threads from a locked one, so
	// the confinement reaches nothing but the processes started here.
	runtime.LockOSThread()
	if ns != nil && ns.user {
		wd, err := ns.enter(cmd)
		if err != nil {
			started <- fmt.Errorf("could not confine the command: %w", err)
			return
		}
		defer wd.Close()
	} else if ns != nil {
		if err := ns.join(); err != nil {
			started <- fmt.Errorf("could not confine the command: %w", err)
			return
		}
		// In the PID namespace the child's parent is outside it, so its
		// getppid() is 0 and Go's start would take the parent for dead
		// and deliver the parent-death signal at once. None is needed:
		// the namespace's init dies with awl, and the kernel kills every
		// process of the namespace with it.
		if cmd.SysProcAttr != nil {
			cmd.SysProcAttr.Pdeathsig = 0
		}
	}
	if err := dropCaps(); err != nil {
		started <- fmt.Errorf("could not confine the command: drop capabilities: %w", err)
		return
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		started <- fmt.Errorf("could not confine the command: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
		return
	}
	if err := llsys.LandlockRestrictSelf(rs.fd, rs.flags); err != nil {
		started <- fmt.Errorf("could not confine the command: landlock_restrict_self: %w", err)
		return
	}
	filter := rs.filter
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.UseCgroupFD {
		filter = rs.filterCgroup
	}
	if filter != nil {
		if err := installFilter(filter); err != nil {
			started <- fmt.Errorf("could not confine the command: seccomp: %w", err)
			return
		}
	}
	if err := cmd.Start(); err != nil {
		started <- err
		return
	}
	pid := cmd.Process.Pid
	// Opened before cmd is handed back, so before anyone can reap it.
	pidfd, err := unix.PidfdOpen(pid, 0)
	started <- nil
	// The command's parent-death signal fires when this thread ends:
	// wait, without reaping, until the command has exited.
	idType, id := unix.P_PIDFD, pidfd
	if err != nil {
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
