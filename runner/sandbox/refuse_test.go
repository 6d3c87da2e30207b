//go:build linux

package sandbox_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// refuseCalls is the probe refuse: it installs on its thread a seccomp
// filter that refuses what mode says, then execs args (the test binary
// itself when there are none) with AWL_PROBE set to AWL_PROBE_NEXT, under
// that filter. Modes "all" and "ro" refuse mount(2) with EPERM, every
// call or one that makes a mount read-only, and the new mount API with
// ENOSYS, so that mount(8) falls back to mount(2), as a seccomp profile
// or AppArmor's docker-default refuses a root with CAP_SYS_ADMIN its
// mounts. Mode "newuser" refuses clone and unshare with CLONE_NEWUSER
// (EPERM) and clone3 (ENOSYS), as Docker's default seccomp profile does
// to a process without CAP_SYS_ADMIN (a GitHub Actions container: job's
// root).
func refuseCalls(mode string, args []string) error {
	runtime.LockOSThread()
	prog := mountFilter(mode == "ro")
	if mode == "newuser" {
		prog = newUserFilter()
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWL_PROBE=") && !strings.HasPrefix(kv, "AWL_PROBE_NEXT=") {
			env = append(env, kv)
		}
	}
	if next := os.Getenv("AWL_PROBE_NEXT"); next != "" {
		env = append(env, "AWL_PROBE="+next)
	}
	if len(args) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		args = []string{exe}
	}
	path, err := exec.LookPath(args[0])
	if err != nil {
		return err
	}
	return syscall.Exec(path, args, env)
}

// mountFilter is refuseCalls's filter of mounts.
func mountFilter(readOnly bool) []unix.SockFilter {
	newAPI := []uint32{unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN, unix.SYS_FSCONFIG,
		unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR}
	ret := func(k uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k} }
	jeq := func(nr uint32, jt, jf int) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: nr, Jt: uint8(jt), Jf: uint8(jf)}
	}
	// seccomp_data: nr at 0, then arch, ip, and args[6] at 16.
	prog := []unix.SockFilter{{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}}
	var mount []unix.SockFilter
	if readOnly {
		// mount's flags are args[3]: refuse MS_RDONLY.
		flags := argLow(3)
		mount = []unix.SockFilter{
			{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: flags},
			{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, K: unix.MS_RDONLY, Jt: 0, Jf: 1},
		}
	}
	mount = append(mount, ret(unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM)))
	// [1, n]: the new API; n+1: mount; then mount's part; allow; ENOSYS.
	n := len(newAPI)
	enosys := n + 2 + len(mount) + 1
	for i, nr := range newAPI {
		prog = append(prog, jeq(nr, enosys-(i+2), 0))
	}
	prog = append(prog, jeq(unix.SYS_MOUNT, 0, len(mount)))
	prog = append(prog, mount...)
	return append(prog, ret(unix.SECCOMP_RET_ALLOW), ret(unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS)))
}

// argLow is the offset in seccomp_data of the low word of argument i.
func argLow(i uint32) uint32 {
	off := 16 + 8*i
	if binary.NativeEndian.Uint16([]byte{0, 1}) == 1 {
		off += 4 // a big-endian u64
	}
	return off
}

// newUserFilter is refuseCalls's filter of new user namespaces.
func newUserFilter() []unix.SockFilter {
	ret := func(k uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k} }
	jeq := func(nr uint32, jt, jf int) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: nr, Jt: uint8(jt), Jf: uint8(jf)}
	}
	return []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0},
		jeq(unix.SYS_CLONE3, 6, 0),
		jeq(unix.SYS_CLONE, 1, 0),
		jeq(unix.SYS_UNSHARE, 0, 2),
		// clone's and unshare's flags are their first argument.
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: argLow(0)},
		{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, K: unix.CLONE_NEWUSER, Jt: 1, Jf: 0},
		ret(unix.SECCOMP_RET_ALLOW),
		ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)),
		ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)),
	}
}
