//go:build linux

package sandbox

import (
	"errors"
	"fmt"
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

// restrict confines the calling OS thread, and so the program it execs
// next, to p: reading and executing anywhere, writing only in p's writable
// directories and /dev/null, and, without p.Network, no TCP connect or bind
// (nor UDP, where the kernel restricts it). It enforces what the kernel
// supports.
//
// Only this thread is confined, which is cheaper than confining all of the
// Go runtime's threads: the thread stays locked and the helper calls
// execve from it at once, which ends every other thread.
func restrict(p Policy) error {
	cfg := landlock.V11.BestEffort()
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles("/dev/null"),
	}
	if p.Network {
		cfg.HandledAccessNet = 0
		// Pathname UNIX sockets (a Docker or SSH agent socket) count as
		// network: reachable only when the network is.
		rules[0] = landlock.RODirs("/").WithResolveUnix()
	}
	if dirs := p.WritableDirs(); len(dirs) > 0 {
		rules = append(rules, landlock.RWDirs(dirs...).WithRefer())
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil || fd < 0 {
		return err
	}
	defer unix.Close(fd)
	runtime.LockOSThread() // never unlocked: the thread execs or exits
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// execve replaces the process with path.
func execve(path string, argv, env []string) error {
	return syscall.Exec(path, argv, env)
}
