//go:build linux

package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/awlrun/awl/internal/testenv"
)

// sysNumbers is golang.org/x/sys's table of system call numbers for
// goarch (unix/zsysnum_linux_GOARCH.go, generated from the kernel's),
// read from the module's source: the constants themselves exist only for
// the architecture being built.
func sysNumbers(t *testing.T, goarch string) map[string]uint32 {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "golang.org/x/sys").Output()
	if err != nil {
		testenv.Require(t, fmt.Sprintf("go list -m golang.org/x/sys: %v", err))
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "unix", "zsysnum_linux_"+goarch+".go"))
	if err != nil {
		t.Fatal(err)
	}
	nums := map[string]uint32{}
	for _, m := range regexp.MustCompile(`(?m)^\s*SYS_([A-Z0-9_]+)\s*=\s*(\d+)`).FindAllStringSubmatch(string(b), -1) {
		n, _ := strconv.ParseUint(m[2], 10, 32)
		nums[m[1]] = uint32(n)
	}
	if len(nums) < 250 {
		t.Fatalf("%s: only %d system calls read", goarch, len(nums))
	}
	return nums
}

// runFilter runs prog as the kernel runs a seccomp filter, on the
// struct seccomp_data of system call nr of the ABI audit with first
// argument arg0, and returns the action it ends with.
func runFilter(t *testing.T, prog []unix.SockFilter, audit, nr uint32, arg0 uint64) uint32 {
	t.Helper()
	data := make([]byte, 64) // nr, arch, instruction pointer, six arguments
	binary.NativeEndian.PutUint32(data[0:], nr)
	binary.NativeEndian.PutUint32(data[4:], audit)
	binary.NativeEndian.PutUint64(data[16:], arg0)
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		jump := func(cond bool) {
			if cond {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		}
		switch in.Code {
		case bpfLdAbs:
			if in.K%4 != 0 || in.K+4 > uint32(len(data)) {
				t.Fatalf("instruction %d loads at %d", pc, in.K)
			}
			acc = binary.NativeEndian.Uint32(data[in.K:])
		case bpfJeq:
			jump(acc == in.K)
		case bpfJge:
			jump(acc >= in.K)
		case bpfJset:
			jump(acc&in.K != 0)
		case bpfRet:
			return in.K
		default:
			t.Fatalf("instruction %d: code %#x", pc, in.Code)
		}
	}
	t.Fatal("the filter ran past its end")
	return 0
}

// TestFilterRefusesOnEveryABI runs the filter of each architecture awl
// builds one for (x86-64 with i386, AArch64 with 32-bit ARM) on every
// system call issue 47 lists, by the numbers x/sys gives them on each
// ABI: each is refused with EPERM (clone3 with ENOSYS, clone and unshare
// only with CLONE_NEWUSER), with the network on and off, while ordinary
// calls pass, sockets but AF_UNIX ones are refused with the network off,
// and a call of an ABI the filter does not know kills the process. As
// root most of these calls fail for want of a capability anyway, so the
// end-to-end test (TestPrivilegedCallsRefused) cannot tell a number left
// out of a table; and arm64's tables run on no CI machine.
func TestFilterRefusesOnEveryABI(t *testing.T) {
	denied := []string{"BPF", "PERF_EVENT_OPEN", "USERFAULTFD", "OPEN_BY_HANDLE_AT", "NAME_TO_HANDLE_AT",
		"KEXEC_LOAD", "KEXEC_FILE_LOAD", "INIT_MODULE", "FINIT_MODULE", "DELETE_MODULE",
		"PROCESS_VM_READV", "PROCESS_VM_WRITEV", "KEYCTL", "ADD_KEY", "REQUEST_KEY",
		"MOUNT", "UMOUNT", "UMOUNT2", "PIVOT_ROOT", "OPEN_TREE", "MOVE_MOUNT", "FSOPEN", "FSCONFIG",
		"FSMOUNT", "FSPICK", "MOUNT_SETATTR", "OPEN_TREE_ATTR"}
	// Absent from an ABI's table: i386 has no kexec_file_load, the 64-bit
	// and ARM ones only umount2.
	absent := map[string]bool{"386 KEXEC_FILE_LOAD": true, "amd64 UMOUNT": true, "arm64 UMOUNT": true, "arm UMOUNT": true}
	allowed := []string{"READ", "WRITE", "OPENAT", "EXECVE", "WAIT4", "PTRACE", "SETNS", "MMAP2", "MMAP"}
	const eperm, enosys, eacces = retEPERM, retENOSYS, retDenied
	for _, machine := range []struct {
		goarch string
		archs  []seccompArch
		abis   []string
	}{{"amd64", []seccompArch{archX8664, archI386}, []string{"amd64", "386"}},
		{"arm64", []seccompArch{archAArch64, archARM}, []string{"arm64", "arm"}}} {
		if machine.goarch == runtime.GOARCH && len(seccompArchs) != len(machine.archs) {
			t.Errorf("%s: the filter installed here has %d ABIs, want %d", machine.goarch, len(seccompArchs), len(machine.archs))
		}
		for _, network := range []bool{false, true} {
			prog := filterProgram(machine.archs, network)
			for i, goarch := range machine.abis {
				audit, nums := machine.archs[i].audit, sysNumbers(t, goarch)
				where := fmt.Sprintf("%s (network %v)", goarch, network)
				call := func(name string, arg0 uint64) uint32 {
					nr, ok := nums[name]
					if !ok {
						t.Fatalf("%s: x/sys has no SYS_%s", where, name)
					}
					return runFilter(t, prog, audit, nr, arg0)
				}
				for _, name := range denied {
					if absent[goarch+" "+name] {
						if _, ok := nums[name]; ok {
							t.Errorf("%s: SYS_%s exists: the test's list of absent calls is stale", where, name)
						}
						continue
					}
					if got := call(name, 0); got != eperm {
						t.Errorf("%s: %s: action %#x, want EPERM", where, strings.ToLower(name), got)
					}
				}
				for _, name := range allowed {
					if _, ok := nums[name]; ok {
						if got := call(name, 0); got != retAllowed {
							t.Errorf("%s: %s: action %#x, want it allowed", where, strings.ToLower(name), got)
						}
					}
				}
				if got := call("CLONE3", 0); got != enosys {
					t.Errorf("%s: clone3: action %#x, want ENOSYS", where, got)
				}
				for _, name := range []string{"CLONE", "UNSHARE"} {
					if got := call(name, unix.CLONE_NEWUSER|unix.CLONE_NEWNS); got != eperm {
						t.Errorf("%s: %s(CLONE_NEWUSER): action %#x, want EPERM", where, strings.ToLower(name), got)
					}
					if got := call(name, unix.CLONE_NEWNS|unix.CLONE_FILES|uint64(unix.SIGCHLD)); got != retAllowed {
						t.Errorf("%s: %s without CLONE_NEWUSER: action %#x, want it allowed", where, strings.ToLower(name), got)
					}
				}
				wantNet := uint32(eacces)
				if network {
					wantNet = retAllowed
				}
				if got := call("SOCKET", unix.AF_INET); got != wantNet {
					t.Errorf("%s: socket(AF_INET): action %#x, want %#x", where, got, wantNet)
				}
				if got := call("IO_URING_SETUP", 8); got != wantNet {
					t.Errorf("%s: io_uring_setup: action %#x, want %#x", where, got, wantNet)
				}
				if got := call("SOCKET", unix.AF_UNIX); got != retAllowed {
					t.Errorf("%s: socket(AF_UNIX): action %#x, want it allowed", where, got)
				}
				if _, ok := nums["SOCKETCALL"]; ok {
					if got := call("SOCKETCALL", 1); got != wantNet {
						t.Errorf("%s: socketcall(SYS_SOCKET): action %#x, want %#x", where, got, wantNet)
					}
				}
				if goarch == "amd64" {
					if got := runFilter(t, prog, audit, nums["READ"]|x32Bit, 0); got != eacces {
						t.Errorf("%s: an x32 read: action %#x, want EACCES", where, got)
					}
				}
			}
			if got := runFilter(t, prog, unix.AUDIT_ARCH_PPC64LE, 0, 0); got != unix.SECCOMP_RET_KILL_PROCESS {
				t.Errorf("%s: a call of another ABI: action %#x, want the process killed", machine.goarch, got)
			}
		}
	}
}
