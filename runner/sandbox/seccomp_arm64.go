//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// seccompArchs are the system call ABIs a process can use here: AArch64
// and 32-bit ARM (EABI, without socketcall).
var seccompArchs = []seccompArch{
	{audit: unix.AUDIT_ARCH_AARCH64, socket: unix.SYS_SOCKET, ioUring: sysIoUringSetup,
		clone: unix.SYS_CLONE, unshare: unix.SYS_UNSHARE,
		denied: nativeDenied},
	// 32-bit ARM's numbers (arch/arm/tools/syscall.tbl).
	{audit: unix.AUDIT_ARCH_ARM, socket: 281, ioUring: sysIoUringSetup,
		clone: 120, unshare: 337,
		denied: []uint32{
			386, 364, 388, // bpf, perf_event_open, userfaultfd
			371, 370, // open_by_handle_at, name_to_handle_at
			347, 401, // kexec_load, kexec_file_load
			128, 379, 129, // init_module, finit_module, delete_module
			376, 377, // process_vm_readv, process_vm_writev
			311, 309, 310, // keyctl, add_key, request_key
			21, 52, 218, // mount, umount2, pivot_root
		}},
}
