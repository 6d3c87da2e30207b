package sandbox

import (
	"golang.org/x/sys/unix"
)

// keptCaps are the capabilities a confined command may keep: those file
// work in a workspace owned by another user takes (a CI job in a
// container runs as root in a checkout owned by uid 1001, and its tools
// must still write and edit there; Landlock confines where). Every other
// capability is cleared: CAP_DAC_READ_SEARCH (open_by_handle_at),
// CAP_SYS_ADMIN, CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE, CAP_NET_*,
// CAP_SYS_MODULE, CAP_SETUID, CAP_SETPCAP and the rest.
const keptCaps = 1<<unix.CAP_CHOWN | 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_FOWNER | 1<<unix.CAP_FSETID

// keptCapNames are keptCaps as setpriv(1) names them.
const keptCapNames = "-all,+chown,+dac_override,+fowner,+fsetid"

// dropCaps leaves the calling (locked) thread, and so what it starts, no
// capability but keptCaps: it clears the others from the bounding set
// (where the thread may: CAP_SETPCAP, which root has), and from the
// ambient, inheritable, permitted and effective sets. A process that is
// not root holds none after exec anyway; root's permitted set after exec
// is its bounding set, which this narrows.
func dropCaps() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	if data[0].Effective&(1<<unix.CAP_SETPCAP) != 0 {
		for c := 0; c < 64; c++ {
			if c < 32 && keptCaps&(1<<c) != 0 {
				continue
			}
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err == unix.EINVAL {
				break // past the kernel's last capability
			} else if err != nil {
				return err
			}
		}
	}
	// EINVAL: a kernel before 4.3 has no ambient set.
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return err
	}
	data[0].Permitted &= keptCaps
	data[0].Effective = data[0].Permitted
	data[0].Inheritable = 0
	data[1] = unix.CapUserData{}
	return unix.Capset(&hdr, &data[0])
}

// effectiveCaps is the calling thread's effective capabilities, 0 when
// they cannot be read.
func effectiveCaps() uint64 {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if unix.Capget(&hdr, &data[0]) != nil {
		return 0
	}
	return uint64(data[1].Effective)<<32 | uint64(data[0].Effective)
}
