//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// seccompArchs are the system call ABIs a process can use here: AArch64
// and 32-bit ARM (EABI, without socketcall).
var seccompArchs = []seccompArch{
	{audit: unix.AUDIT_ARCH_AARCH64, socket: 198, ioUring: 425},
	{audit: unix.AUDIT_ARCH_ARM, socket: 281, ioUring: 425},
}
