package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The network filter is a seccomp-bpf program, installed on the confined
// thread after its Landlock domain and inherited by what it starts, like
// the domain. Landlock (ABI 4 to 9) governs only TCP connect and bind:
// UDP, TCP Fast Open (sendto with MSG_FASTOPEN connects without
// connect), listen() without bind() (the kernel binds a port itself), raw
// and packet sockets (root) pass it. The filter refuses (EACCES, as
// Landlock does) to create any
// socket but an AF_UNIX one, which closes all of them at once: each needs
// an IP socket first. io_uring, which can create sockets without the
// socket system call, is refused as well.
//
// The program is written by hand: it is a dozen instructions, built once
// per sandbox with no package initialisation, where a seccomp library
// (github.com/elastic/go-seccomp-bpf) would add a module, its policy
// compiler and its syscall tables to every awl binary for the same few
// instructions.

// seccompArch is what the filter needs to know of a system call ABI.
type seccompArch struct {
	audit      uint32 // AUDIT_ARCH_*
	socket     uint32 // socket's number
	ioUring    uint32 // io_uring_setup's number
	socketcall uint32 // socketcall's number, 0 where there is none
	x32        bool   // numbers with __X32_SYSCALL_BIT set are another ABI
}

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
	bpfRet   = unix.BPF_RET | unix.BPF_K

	// Offsets in struct seccomp_data.
	offNr   = 0
	offArch = 4
	offArg0 = 16 // the low 32 bits, on a little-endian machine

	x32Bit     = 0x40000000
	sysSocket  = 1 // socketcall's call number for socket
	retDenied  = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	retAllowed = unix.SECCOMP_RET_ALLOW
)

// netFilterProgram builds the filter for the native ABI and the compat
// ones: socket() only for AF_UNIX, socketcall(SYS_SOCKET) and
// io_uring_setup() never. A system call of an ABI it does not know kills
// the process.
func netFilterProgram(archs []seccompArch) []unix.SockFilter {
	prog := []bpf{{code: bpfLdAbs, k: offArch}}
	for i, a := range archs {
		prog = append(prog, bpf{code: bpfJeq, k: a.audit, jt: fmt.Sprint("arch", i)})
	}
	prog = append(prog, bpf{code: bpfRet, k: unix.SECCOMP_RET_KILL_PROCESS})
	for i, a := range archs {
		n := fmt.Sprint(i)
		prog = append(prog, bpf{label: "arch" + n, code: bpfLdAbs, k: offNr})
		if a.x32 {
			prog = append(prog, bpf{code: bpfJge, k: x32Bit, jt: "deny"})
		}
		prog = append(prog,
			bpf{code: bpfJeq, k: a.socket, jt: "socket" + n},
			bpf{code: bpfJeq, k: a.ioUring, jt: "deny"})
		if a.socketcall != 0 {
			prog = append(prog, bpf{code: bpfJeq, k: a.socketcall, jt: "socketcall" + n})
		}
		prog = append(prog, bpf{code: bpfRet, k: retAllowed},
			bpf{label: "socket" + n, code: bpfLdAbs, k: offArg0},
			bpf{code: bpfJeq, k: unix.AF_UNIX, jt: "allow", jf: "deny"})
		if a.socketcall != 0 {
			prog = append(prog, bpf{label: "socketcall" + n, code: bpfLdAbs, k: offArg0},
				bpf{code: bpfJeq, k: sysSocket, jt: "deny", jf: "allow"})
		}
	}
	prog = append(prog,
		bpf{label: "allow", code: bpfRet, k: retAllowed},
		bpf{label: "deny", code: bpfRet, k: retDenied})
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
		return uint8(at[label] - from - 1)
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
