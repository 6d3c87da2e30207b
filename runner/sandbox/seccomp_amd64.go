//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// seccompArchs are the system call ABIs a process can use here: x86-64
// (and x32 numbers, refused), and i386 through int 0x80.
var seccompArchs = []seccompArch{
	{audit: unix.AUDIT_ARCH_X86_64, socket: unix.SYS_SOCKET, ioUring: sysIoUringSetup, x32: true,
		clone: unix.SYS_CLONE, unshare: unix.SYS_UNSHARE,
		denied: nativeDenied},
	// i386's numbers (arch/x86/entry/syscalls/syscall_32.tbl); it has no
	// kexec_file_load.
	{audit: unix.AUDIT_ARCH_I386, socket: 359, ioUring: sysIoUringSetup, socketcall: 102,
		clone: 120, unshare: 310,
		denied: []uint32{
			357, 336, 374, // bpf, perf_event_open, userfaultfd
			342, 341, // open_by_handle_at, name_to_handle_at
			283,           // kexec_load
			128, 350, 129, // init_module, finit_module, delete_module
			347, 348, // process_vm_readv, process_vm_writev
			288, 286, 287, // keyctl, add_key, request_key
			21, 22, 52, 217, // mount, umount, umount2, pivot_root
		}},
}
