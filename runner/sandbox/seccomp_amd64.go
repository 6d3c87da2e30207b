//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// seccompArchs are the system call ABIs a process can use here: x86-64
// (and x32 numbers, refused), and i386 through int 0x80.
var seccompArchs = []seccompArch{
	{audit: unix.AUDIT_ARCH_X86_64, socket: 41, ioUring: 425, x32: true},
	{audit: unix.AUDIT_ARCH_I386, socket: 359, ioUring: 425, socketcall: 102},
}
