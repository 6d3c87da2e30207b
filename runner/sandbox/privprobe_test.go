//go:build linux

package sandbox_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/awlrun/awl/runner/sandbox"
	"github.com/awlrun/awl/runner/tool"
)

// privProbe tries one of the calls root could use to reach past the
// sandbox (issue 47):
//
//   - sys: the raw system call arg names ("NR,ARG,..."; "self" is the
//     probe's pid), which succeeds or fails as the kernel says;
//   - bpf: create a BPF map; perf: open a system-wide perf event on CPU 0;
//     userfaultfd: make one;
//   - handle: write a file through its handle (arg "DIR:TYPE:HEX", DIR the
//     mount to open it through), past a read-only bind mount;
//   - ptrace: attach to the process arg (PTRACE_SEIZE, undone at exit);
//   - keyread: read the key whose serial is arg;
//   - newuser: start /bin/true in a new user namespace (clone);
//   - caps: print the capability sets of the probe itself;
//   - nsfds: fail if a namespace's descriptor is open in the probe.
func privProbe(what, arg string) error {
	switch what {
	case "sys":
		var a [6]uintptr
		f := strings.Split(arg, ",")
		for i, v := range f {
			if v == "self" {
				v = strconv.Itoa(os.Getpid())
			}
			n, err := strconv.ParseInt(v, 0, 64)
			if err != nil {
				return err
			}
			if i == 0 {
				continue
			}
			a[i-1] = uintptr(n)
		}
		nr, _ := strconv.Atoi(f[0])
		if _, _, errno := unix.Syscall6(uintptr(nr), a[0], a[1], a[2], a[3], a[4], a[5]); errno != 0 {
			return errno
		}
		return nil
	case "bpf":
		// BPF_MAP_CREATE of an array of one 4-byte entry.
		attr := [5]uint32{2 /* BPF_MAP_TYPE_ARRAY */, 4, 4, 1, 0}
		_, _, errno := unix.Syscall(unix.SYS_BPF, 0, uintptr(unsafe.Pointer(&attr[0])), unsafe.Sizeof(attr))
		if errno != 0 {
			return errno
		}
		return nil
	case "perf":
		attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK}
		attr.Size = uint32(unsafe.Sizeof(attr))
		_, err := unix.PerfEventOpen(&attr, -1, 0, -1, 0)
		return err
	case "userfaultfd":
		_, _, errno := unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC, 0, 0)
		if errno != 0 {
			return errno
		}
		return nil
	case "handle":
		parts := strings.SplitN(arg, ":", 3)
		typ, _ := strconv.Atoi(parts[1])
		b, _ := hex.DecodeString(parts[2])
		mfd, err := unix.Open(parts[0], unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			return err
		}
		fd, err := unix.OpenByHandleAt(mfd, unix.NewFileHandle(int32(typ), b), unix.O_WRONLY|unix.O_APPEND)
		if err != nil {
			return fmt.Errorf("open_by_handle_at: %w", err)
		}
		_, err = unix.Write(fd, []byte("\n[core]\n\tfsmonitor = evil\n"))
		return err
	case "ptrace":
		pid, _ := strconv.Atoi(arg)
		_, _, errno := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_SEIZE, uintptr(pid), 0, 0, 0, 0)
		if errno != 0 {
			return errno
		}
		return nil
	case "keyread":
		id, _ := strconv.Atoi(arg)
		buf := make([]byte, 256)
		n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
		if err != nil {
			return err
		}
		fmt.Printf("key %s\n", buf[:min(n, len(buf))])
		return nil
	case "newuser":
		pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{
			Sys: &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}})
		if err != nil {
			return err
		}
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, 0, nil)
		return nil
	case "nsfds":
		// Every descriptor open in the probe that is a namespace's (nsfs),
		// with which it could join the namespace again.
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			return err
		}
		var ns []string
		for _, e := range ents {
			fd, _ := strconv.Atoi(e.Name())
			var st unix.Statfs_t
			if unix.Fstatfs(fd, &st) == nil && st.Type == unix.NSFS_MAGIC {
				link, _ := os.Readlink("/proc/self/fd/" + e.Name())
				ns = append(ns, e.Name()+" -> "+link)
			}
		}
		if len(ns) > 0 {
			return fmt.Errorf("namespace descriptors open: %s", strings.Join(ns, ", "))
		}
		return nil
	case "caps":
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "Cap") {
				fmt.Println(line)
			}
		}
		return nil
	}
	return fmt.Errorf("unknown probe %q", what)
}

// confine is an awl in miniature started by a test under other
// credentials (root without CAP_SYS_ADMIN, as a container's root), or
// with a session keyring of its own: it
// makes a workspace-write sandbox for cwd, runs command with the bash
// tool, and prints its output, the sandbox's status, its own user
// namespace ("awl-userns user:[N]") and its warnings at start
// ("warning-ns", "warning-git", "warning-process"). With
// AWL_PROBE_NO_NAMESPACES set, it does without namespaces; with
// AWL_PROBE_NO_HELPER, it enters them through nsenter; with
// AWL_PROBE_CALLS (a JSON array of [tool, input] pairs), it then makes
// those calls, and prints each result as "call TOOL error=BOOL", then
// its content.
func confine(cwd, command string) {
	if os.Getenv("AWL_PROBE_NO_NAMESPACES") != "" {
		sandbox.WithoutNamespaces()
	}
	if os.Getenv("AWL_PROBE_NO_HELPER") != "" {
		sandbox.WithoutHelper()
	}
	sb, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: cwd})
	if err != nil {
		fmt.Println("confine:", err)
		os.Exit(1)
	}
	defer sb.Close()
	tools := map[string]tool.Tool{}
	for _, tl := range tool.Builtins(tool.Env{Dir: cwd, Confine: sb}) {
		tools[tl.Name()] = tl
	}
	in, _ := json.Marshal(map[string]any{"command": command})
	res := tools["bash"].Run(context.Background(), in)
	b, _ := json.Marshal(st)
	userNS, _ := os.Readlink("/proc/self/ns/user")
	fmt.Printf("%s\nstatus %s\nawl-userns %s\n", res.Content, b, userNS)
	fmt.Printf("warning-ns %s\nwarning-git %s\nwarning-process %s\n", sb.NamespaceWarning(), sb.GitWarning(), sb.ProcessWarning())
	var calls [][2]json.RawMessage
	if c := os.Getenv("AWL_PROBE_CALLS"); c != "" {
		if err := json.Unmarshal([]byte(c), &calls); err != nil {
			fmt.Println("confine: AWL_PROBE_CALLS:", err)
			os.Exit(1)
		}
	}
	for _, c := range calls {
		var name string
		json.Unmarshal(c[0], &name)
		tl, ok := tools[name]
		if !ok {
			fmt.Println("confine: no tool", name)
			os.Exit(1)
		}
		res := tl.Run(context.Background(), c[1])
		fmt.Printf("call %s error=%v\n%s\n", name, res.IsError, res.Content)
	}
}

// runProbe runs probe what with arg unconfined, as the test's process
// can, and returns its output.
func runProbe(what, arg string) string {
	exe, _ := os.Executable()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "AWL_PROBE="+what+":"+arg)
	out, _ := cmd.CombinedOutput()
	return string(out)
}
