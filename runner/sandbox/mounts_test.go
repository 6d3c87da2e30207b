//go:build linux

package sandbox_test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/awlrun/awl/runner/sandbox"
)

// A root with CAP_SYS_ADMIN whose mounts are refused (Docker's
// --cap-add SYS_ADMIN under AppArmor's docker-default profile, any
// seccomp profile that refuses mount) knows it when the sandbox is made:
// the status says what the namespaces' init could not do, the warnings
// at start say why, and every command still runs, confined, where they
// all failed at the first with "start the namespaces' init". With every
// mount refused, commands run without namespaces; with only read-only
// remounts refused, in the namespaces, whose .git is then not read-only.
// The refusal is a seccomp filter the test binary runs under, first
// shown to refuse what it should and nothing else.
func TestRootMountsRefused(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	if os.Geteuid() != 0 || !sandbox.CanMakeNamespaces() {
		t.Skip("root with CAP_SYS_ADMIN only: another root makes a user namespace, whose init's refused mounts the status always said")
	}
	exe, _ := os.Executable()
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare (util-linux) is not installed")
	}
	for _, mode := range []string{"all", "ro"} {
		t.Run(mode, func(t *testing.T) {
			// under runs args under the filter of mode, with AWL_PROBE
			// set to next (none when "").
			under := func(next string, env []string, args ...string) (string, error) {
				cmd := exec.Command(exe, args...)
				cmd.Env = append(os.Environ(), append(env, "AWL_PROBE=nomount:"+mode, "AWL_PROBE_NEXT="+next)...)
				out, err := cmd.CombinedOutput()
				return string(out), err
			}
			dir := t.TempDir()
			remount := []string{unshare, "--mount", "--propagation", "private", "sh", "-c",
				`mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && echo remounted`, dir}
			if out, err := exec.Command(remount[0], remount[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("unfiltered, root could not make a read-only bind mount: the test would prove nothing: %v\n%s", err, out)
			}
			if out, err := under("", nil, remount...); err == nil || strings.Contains(out, "remounted") {
				t.Fatalf("under the filter, root made a read-only bind mount: the filter refuses nothing: %v\n%s", err, out)
			}
			if out, err := under("", nil, unshare, "--mount", "--propagation", "private", "true"); (err == nil) != (mode == "ro") {
				t.Fatalf("under the filter %s, unshare --propagation private: %v\n%s", mode, err, out)
			}

			cwd := filepath.Join(t.TempDir(), "work")
			outside := t.TempDir()
			for name, content := range map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n"} {
				os.MkdirAll(filepath.Dir(filepath.Join(cwd, name)), 0o755)
				if err := os.WriteFile(filepath.Join(cwd, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ownPID, _ := os.Readlink("/proc/self/ns/pid")
			command := "echo ran; echo command-pidns $(readlink /proc/self/ns/pid); " +
				fmt.Sprintf("echo x > %q/f || echo outside refused; ", outside) + "echo caps; " + probeCommand(t, "caps", "")
			calls, _ := json.Marshal([][2]any{{"bash", map[string]any{"command": "echo second call"}}})
			out, err := under("confine:"+cwd, []string{"AWL_PROBE_CMD=" + command, "AWL_PROBE_CALLS=" + string(calls)})
			t.Logf("%s", out)
			if err != nil || !strings.HasPrefix(out, "ran\n") || !strings.Contains(out, "call bash error=false\nsecond call\n") {
				t.Fatalf("commands did not run: %v\n%s", err, out)
			}
			if !strings.Contains(out, "outside refused") {
				t.Errorf("a command wrote outside the workspace")
			}
			_, caps, _ := strings.Cut(out, "caps\n")
			checkExactlyKept(t, capSets(t, caps))
			st := probeStatus(t, out)
			if st.Enforced.Git || !st.Enforced.Files {
				t.Errorf("status %+v: .git could not be made read-only, want git false, files true", st.Enforced)
			}
			inNS := probeField(out, "command-pidns") != ownPID
			warnNS, warnGit := probeField(out, "warning-ns"), probeField(out, "warning-git")
			if mode == "all" {
				if inNS || st.Enforced.Proc {
					t.Errorf("every mount refused: want no namespaces (the command's PID namespace %q, awl's %q), proc false: %+v",
						probeField(out, "command-pidns"), ownPID, st.Enforced)
				}
				if !strings.Contains(warnNS, "without PID and mount namespaces") || !strings.Contains(warnNS, "init") {
					t.Errorf("the warning at start does not say why there are no namespaces: %q", warnNS)
				}
			} else {
				if !inNS || !st.Enforced.Proc || !st.Enforced.Processes {
					t.Errorf("read-only remounts refused: want the namespaces and their /proc: %+v", st.Enforced)
				}
				if warnNS != "" {
					t.Errorf("a warning of no namespaces, with the namespaces: %q", warnNS)
				}
			}
			if !strings.Contains(warnGit, ".git") || !strings.Contains(warnGit, "cannot make it read-only") {
				t.Errorf("the warning at start does not say .git is writable: %q", warnGit)
			}
		})
	}
}

// refuseMounts is the probe nomount: it installs on its thread a seccomp
// filter that refuses mount(2) with EPERM, every call (mode "all") or one
// that makes a mount read-only ("ro"), and the new mount API with ENOSYS,
// so that mount(8) falls back to mount(2), as a seccomp profile or
// AppArmor's docker-default refuses a root with CAP_SYS_ADMIN its mounts;
// then it execs args (the test binary itself when there are none) with
// AWL_PROBE set to AWL_PROBE_NEXT, under that filter.
func refuseMounts(mode string, args []string) error {
	runtime.LockOSThread()
	prog := mountFilter(mode == "ro")
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

// mountFilter is refuseMounts's filter.
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
		flags := uint32(16 + 3*8)
		if binary.NativeEndian.Uint16([]byte{0, 1}) == 1 {
			flags += 4 // the low word of a big-endian u64
		}
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
