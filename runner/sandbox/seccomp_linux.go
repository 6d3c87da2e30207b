package sandbox

import (
	"fmt"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The filter is a seccomp-bpf program, installed on the confined thread
// after its Landlock domain and inherited by what it starts, like the
// domain. It has two parts.
//
// The system calls part, always there, refuses what a confined command
// has no use for and what reaches past Landlock or the capabilities the
// command keeps (docs/security.md lists them with the reason for each):
// loading BPF programs, perf events, userfaultfd, file handles
// (open_by_handle_at opens a file by its inode, past a read-only bind
// mount), kexec, kernel modules, reading or writing another process's
// memory, the kernel's keyrings (the caller's session keyring is shared
// with its children), mounts, and new user namespaces, in which a
// command would hold every capability again (unshare and clone with
// CLONE_NEWUSER; clone3, whose flags are in memory a filter cannot read,
// fails with ENOSYS, so that libc falls back to clone). These fail with
// EPERM.
//
// The network part, with the network off: Landlock (ABI 4 to 9) governs
// only TCP connect and bind, and UDP, TCP Fast Open (sendto with
// MSG_FASTOPEN connects without connect), listen() without bind() (the
// kernel binds a port itself), raw and packet sockets (root) pass it. The
// filter refuses (EACCES, as Landlock does) to create any socket but an
// AF_UNIX one, which closes all of them at once: each needs an IP socket
// first. io_uring, which can create sockets without the socket system
// call, is refused as well.
//
// The program is written by hand: it is a few dozen comparisons, built
// once per sandbox with no package initialisation, where a seccomp
// library (github.com/elastic/go-seccomp-bpf) would add a module, its
// policy compiler and its syscall tables to every awl binary for the same
// instructions.

// seccompArch is what the filter needs to know of a system call ABI.
type seccompArch struct {
	audit      uint32 // AUDIT_ARCH_*
	socket     uint32 // socket's number
	ioUring    uint32 // io_uring_setup's number
	socketcall uint32 // socketcall's number, 0 where there is none
	x32        bool   // numbers with __X32_SYSCALL_BIT set are another ABI
	// denied are refused with EPERM whatever their arguments.
	denied []uint32
	// clone and unshare are refused with EPERM when their flags (the
	// first argument) hold CLONE_NEWUSER.
	clone, unshare uint32
}

// The system calls of every ABI numbered alike (those added from Linux
// 5.1 on): the new mount API, and clone3.
const (
	sysOpenTree      = 428
	sysMoveMount     = 429
	sysFsopen        = 430
	sysFsconfig      = 431
	sysFsmount       = 432
	sysFspick        = 433
	sysClone3        = 435
	sysMountSetattr  = 442
	sysOpenTreeAttr  = 467
	sysIoUringSetup  = 425
	cloneNewUserFlag = 0x10000000 // CLONE_NEWUSER
)

// mountAPI are the new mount API's system calls, refused like mount.
var mountAPI = []uint32{sysOpenTree, sysMoveMount, sysFsopen, sysFsconfig, sysFsmount, sysFspick, sysMountSetattr, sysOpenTreeAttr}

// bpf is one instruction of a program under construction: jumps name the
// label they go to ("" is the next instruction).
type bpf struct {
	label  string
	code   uint16
	k      uint32
	jt, jf string
}

const (
	bpfLdAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJset  = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfRet   = unix.BPF_RET | unix.BPF_K

	// Offsets in struct seccomp_data.
	offNr   = 0
	offArch = 4
	offArg0 = 16 // the low 32 bits, on a little-endian machine

	x32Bit     = 0x40000000
	sysSocket  = 1 // socketcall's call number for socket
	retDenied  = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	retEPERM   = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retENOSYS  = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	retAllowed = unix.SECCOMP_RET_ALLOW
)

// filterProgram builds the filter for the native ABI and the compat ones:
// the system calls part, and with network false the network part too
// (socket() only for AF_UNIX, socketcall(SYS_SOCKET) and io_uring_setup()
// never). clone3 fails with ENOSYS. A system call of an ABI it does not
// know kills the process.
func filterProgram(archs []seccompArch, network bool) []unix.SockFilter {
	prog := []bpf{{code: bpfLdAbs, k: offArch}}
	for i, a := range archs {
		prog = append(prog, bpf{code: bpfJeq, k: a.audit, jt: fmt.Sprint("arch", i)})
	}
	prog = append(prog, bpf{code: bpfRet, k: unix.SECCOMP_RET_KILL_PROCESS})
	for i, a := range archs {
		prog = append(prog, archProgram(fmt.Sprint(i), a, network)...)
	}
	prog = append(prog,
		bpf{label: "allow", code: bpfRet, k: retAllowed},
		bpf{label: "deny", code: bpfRet, k: retDenied},
		bpf{label: "eperm", code: bpfRet, k: retEPERM},
		bpf{label: "enosys", code: bpfRet, k: retENOSYS})
	return assemble(prog)
}

// archProgram is the part of the filter for one ABI, its labels suffixed
// with n.
func archProgram(n string, a seccompArch, network bool) []bpf {
	prog := []bpf{{label: "arch" + n, code: bpfLdAbs, k: offNr}}
	if a.x32 {
		prog = append(prog, bpf{code: bpfJge, k: x32Bit, jt: "deny"})
	}
	if !network {
		prog = append(prog,
			bpf{code: bpfJeq, k: a.socket, jt: "socket" + n},
			bpf{code: bpfJeq, k: a.ioUring, jt: "deny"})
		if a.socketcall != 0 {
			prog = append(prog, bpf{code: bpfJeq, k: a.socketcall, jt: "socketcall" + n})
		}
	}
	for _, nr := range append(slices.Clone(a.denied), mountAPI...) {
		prog = append(prog, bpf{code: bpfJeq, k: nr, jt: "eperm"})
	}
	prog = append(prog, bpf{code: bpfJeq, k: sysClone3, jt: "enosys"})
	prog = append(prog,
		bpf{code: bpfJeq, k: a.clone, jt: "flags" + n},
		bpf{code: bpfJeq, k: a.unshare, jt: "flags" + n},
		bpf{code: bpfRet, k: retAllowed},
		bpf{label: "flags" + n, code: bpfLdAbs, k: offArg0},
		bpf{code: bpfJset, k: cloneNewUserFlag, jt: "eperm", jf: "allow"})
	if !network {
		prog = append(prog,
			bpf{label: "socket" + n, code: bpfLdAbs, k: offArg0},
			bpf{code: bpfJeq, k: unix.AF_UNIX, jt: "allow", jf: "deny"})
		if a.socketcall != 0 {
			prog = append(prog, bpf{label: "socketcall" + n, code: bpfLdAbs, k: offArg0},
				bpf{code: bpfJeq, k: sysSocket, jt: "deny", jf: "allow"})
		}
	}
	return prog
}

// assemble resolves the labels of prog's jumps. A jump reaches at most
// 255 instructions ahead; the filter is far shorter.
func assemble(prog []bpf) []unix.SockFilter {
	at := map[string]int{}
	for i, in := range prog {
		if in.label != "" {
			at[in.label] = i
		}
	}
	jump := func(from int, label string) uint8 {
		if label == "" {
			return 0
		}
		to, ok := at[label]
		if !ok || to-from-1 < 0 || to-from-1 > 255 {
			panic(fmt.Sprintf("seccomp filter: jump from %d to %q out of reach", from, label))
		}
		return uint8(to - from - 1)
	}
	out := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		out[i] = unix.SockFilter{Code: in.code, K: in.k, Jt: jump(i, in.jt), Jf: jump(i, in.jf)}
	}
	return out
}

// installFilter installs prog on the calling thread only (no TSYNC): the
// processes it starts inherit it, awl's other threads do not. The thread
// must have no_new_privs set.
func installFilter(prog []unix.SockFilter) error {
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fp)))
	if errno != 0 {
		return errno
	}
	return nil
}
