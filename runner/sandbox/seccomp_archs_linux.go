package sandbox

import "golang.org/x/sys/unix"

// The system call ABIs the filter knows, by their numbers in the
// kernel's tables (arch/*/entry/syscalls, arch/arm/tools/syscall.tbl,
// include/uapi/asm-generic/unistd.h). They are written out here, not
// taken from golang.org/x/sys's constants, which exist only for the
// architecture being built: so every table is built on every machine,
// and TestFilterRefusesOnEveryABI checks each against x/sys's table of
// its architecture on an x86-64 machine too.
var (
	// x86-64, whose x32 numbers (__X32_SYSCALL_BIT set) are refused.
	archX8664 = seccompArch{audit: unix.AUDIT_ARCH_X86_64, socket: 41, ioUring: sysIoUringSetup, x32: true,
		clone: 56, unshare: 272,
		denied: []uint32{
			321, 298, 323, // bpf, perf_event_open, userfaultfd
			304, 303, // open_by_handle_at, name_to_handle_at
			246, 320, // kexec_load, kexec_file_load
			175, 313, 176, // init_module, finit_module, delete_module
			310, 311, // process_vm_readv, process_vm_writev
			250, 248, 249, // keyctl, add_key, request_key
			165, 166, 155, // mount, umount2, pivot_root
		}}
	// i386 through int 0x80 on x86-64; it has no kexec_file_load.
	archI386 = seccompArch{audit: unix.AUDIT_ARCH_I386, socket: 359, ioUring: sysIoUringSetup, socketcall: 102,
		clone: 120, unshare: 310,
		denied: []uint32{
			357, 336, 374, // bpf, perf_event_open, userfaultfd
			342, 341, // open_by_handle_at, name_to_handle_at
			283,           // kexec_load
			128, 350, 129, // init_module, finit_module, delete_module
			347, 348, // process_vm_readv, process_vm_writev
			288, 286, 287, // keyctl, add_key, request_key
			21, 22, 52, 217, // mount, umount, umount2, pivot_root
		}}
	// AArch64 (the generic table).
	archAArch64 = seccompArch{audit: unix.AUDIT_ARCH_AARCH64, socket: 198, ioUring: sysIoUringSetup,
		clone: 220, unshare: 97,
		denied: []uint32{
			280, 241, 282, // bpf, perf_event_open, userfaultfd
			265, 264, // open_by_handle_at, name_to_handle_at
			104, 294, // kexec_load, kexec_file_load
			105, 273, 106, // init_module, finit_module, delete_module
			270, 271, // process_vm_readv, process_vm_writev
			219, 217, 218, // keyctl, add_key, request_key
			40, 39, 41, // mount, umount2, pivot_root
		}}
	// 32-bit ARM (EABI, without socketcall) on AArch64.
	archARM = seccompArch{audit: unix.AUDIT_ARCH_ARM, socket: 281, ioUring: sysIoUringSetup,
		clone: 120, unshare: 337,
		denied: []uint32{
			386, 364, 388, // bpf, perf_event_open, userfaultfd
			371, 370, // open_by_handle_at, name_to_handle_at
			347, 401, // kexec_load, kexec_file_load
			128, 379, 129, // init_module, finit_module, delete_module
			376, 377, // process_vm_readv, process_vm_writev
			311, 309, 310, // keyctl, add_key, request_key
			21, 52, 218, // mount, umount2, pivot_root
		}}
)
