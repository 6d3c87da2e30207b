//go:build linux && (amd64 || arm64)

package sandbox_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/runner/sandbox"
)

// keptCaps are the capabilities a confined command may hold (issue 47):
// CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER and CAP_FSETID.
const keptCaps = 1<<unix.CAP_CHOWN | 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_FOWNER | 1<<unix.CAP_FSETID

// capSets parses the Cap* lines of /proc/PID/status in out.
func capSets(t *testing.T, out string) map[string]uint64 {
	t.Helper()
	sets := map[string]uint64{}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(k, "Cap") {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		sets[k] = n
	}
	if len(sets) != 5 {
		t.Fatalf("no capability sets in:\n%s", out)
	}
	return sets
}

// checkCaps checks the sets a confined command held: as root, keptCaps
// at most in every set but the inheritable and ambient ones, which are
// empty; as another user, none in any but the bounding set, which a
// process that is not root cannot narrow (nor use: no_new_privs).
//
// In awl's user namespace (not root, namespaces: inUserNS) the bounding
// set is empty too, on x86-64 and arm64: the helper that joins the namespace
// clears it, which nsenter (util-linux) left full.
func checkCaps(t *testing.T, sets map[string]uint64, inUserNS ...bool) {
	t.Helper()
	limit := map[string]uint64{"CapInh": 0, "CapAmb": 0, "CapPrm": 0, "CapEff": 0}
	if len(inUserNS) > 0 && inUserNS[0] && os.Geteuid() != 0 {
		limit["CapBnd"] = 0
	}
	if os.Geteuid() == 0 {
		limit["CapPrm"], limit["CapEff"], limit["CapBnd"] = keptCaps, keptCaps, keptCaps
	}
	for k, max := range limit {
		if sets[k]&^max != 0 {
			t.Errorf("%s %#x holds capabilities beyond %#x", k, sets[k], max)
		}
	}
}

// A confined command keeps no capability but the four of file work, in
// every set, as root too: with the namespaces, without them (a container
// that refuses them), with the network on, and as a root that may not
// make namespaces itself (a container's root, without CAP_SYS_ADMIN),
// whose commands would be root in awl's user namespace.
func TestConfinedCapabilities(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	own := capSets(t, runProbe("caps", ""))
	if os.Geteuid() == 0 && own["CapEff"]&^keptCaps == 0 {
		t.Fatalf("root, unconfined, holds no capability beyond the kept ones (%#x): the test would prove nothing", own["CapEff"])
	}
	t.Run("namespaces", func(t *testing.T) {
		f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
		ns := f.sb.Status().Enforced.Processes
		checkCaps(t, capSets(t, f.bash(t, probeCommand(t, "caps", "")).Content), ns)
		checkCaps(t, capSets(t, f.bash(t, "grep Cap /proc/self/status").Content), ns)
		// Nor does it hold the descriptors of the namespaces it was
		// brought into, with which it could join them again (a fresh
		// bounding set with the user namespace).
		if fds := f.bash(t, "ls -l /proc/self/fd/").Content; strings.Contains(fds, "user:[") ||
			strings.Contains(fds, "mnt:[") || strings.Contains(fds, "pid:[") {
			t.Errorf("a confined command holds a namespace's descriptor:\n%s", fds)
		}
	})
	t.Run("without namespaces", func(t *testing.T) {
		withoutNamespaces(t)
		f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
		checkCaps(t, capSets(t, f.bash(t, probeCommand(t, "caps", "")).Content))
	})
	t.Run("network", func(t *testing.T) {
		f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite, Network: true})
		checkCaps(t, capSets(t, f.bash(t, probeCommand(t, "caps", "")).Content))
	})
	t.Run("root without CAP_SYS_ADMIN", func(t *testing.T) {
		// Commands are root in awl's user namespace, which gives them
		// every capability there: they keep exactly the four, and no
		// descriptor of the namespaces they were brought into.
		// Root of the initial user namespace, and root of a container's
		// (Podman's rootless, a user namespace mapping 65536 ids).
		for _, userNS := range []bool{false, true} {
			out := asRootWithoutSysAdmin(t, userNS, t.TempDir(), probeCommand(t, "caps", "")+"; echo nsfds; "+probeCommand(t, "nsfds", ""))
			sets := capSets(t, out)
			for k, want := range map[string]uint64{"CapBnd": keptCaps, "CapPrm": keptCaps, "CapEff": keptCaps, "CapInh": 0, "CapAmb": 0} {
				if sets[k] != want {
					t.Errorf("in a user namespace %v: %s %#x, want %#x", userNS, k, sets[k], want)
				}
			}
			if _, fds, _ := strings.Cut(out, "nsfds\n"); !strings.HasPrefix(fds, "probe ok\n") {
				t.Errorf("in a user namespace %v: a confined command holds a namespace's descriptor:\n%s", userNS, out)
			}
		}
	})
	t.Run("root without CAP_SYS_ADMIN, CAP_SETUID and CAP_SETGID", func(t *testing.T) {
		// Its user namespace maps uid 0 alone: in a workspace of root's it
		// still confines commands there (a workspace of another owner's
		// is TestRootWritesAnotherUsersWorkspace's), with the four.
		r := containerRoot{drop: "-sys_admin,-setuid,-setgid"}
		out := r.confine(t, t.TempDir(), probeCommand(t, "caps", ""))
		r.requireAwlsUserNS(t, out)
		checkExactlyKept(t, capSets(t, out))
		if st := probeStatus(t, out); !st.Enforced.Proc || !st.Enforced.Processes {
			t.Errorf("status %+v: want the namespaces", st.Enforced)
		}
	})
	t.Run("root without CAP_SYS_ADMIN, through nsenter", func(t *testing.T) {
		// Where the helper cannot run, nsenter and setpriv keep the
		// same four (the namespaces' descriptors stay open then).
		out := asRootWithoutSysAdmin(t, false, t.TempDir(), probeCommand(t, "caps", ""), "AWL_PROBE_NO_HELPER=1")
		sets := capSets(t, out)
		for k, want := range map[string]uint64{"CapBnd": keptCaps, "CapPrm": keptCaps, "CapEff": keptCaps, "CapInh": 0, "CapAmb": 0} {
			if sets[k] != want {
				t.Errorf("%s %#x, want %#x", k, sets[k], want)
			}
		}
	})
}

// asRootWithoutSysAdmin runs an awl in miniature (confine) for cwd as a
// root without CAP_SYS_ADMIN (containerRoot.confine), and fails unless the
// command ran in a user namespace of awl's; where such a root cannot make
// one at all, it skips.
func asRootWithoutSysAdmin(t *testing.T, userNS bool, cwd, command string, env ...string) string {
	t.Helper()
	r := containerRoot{userNS: userNS, drop: "-sys_admin"}
	out := r.confine(t, cwd, command, env...)
	r.requireAwlsUserNS(t, out)
	return out
}

// containerRoot is a root of a container, as setpriv makes one of the test's
// root: drop is what setpriv clears from the bounding set ("-sys_admin",
// as Docker's default capabilities; "-sys_admin,-setuid,-setgid", as a
// hardened Kubernetes pod's), and the inheritable set, whence exec would
// give it back. With userNS, that root is root of a user namespace mapping
// ids 0-65535 alone, as in a rootless container, where a map of awl's may
// name no other id. With refuse, it runs under the test binary's seccomp
// filter of that mode (refuseCalls): "newuser" as under Docker's default
// seccomp profile, which refuses it a user namespace.
type containerRoot struct {
	userNS bool
	drop   string
	refuse string
}

// as runs args as r, and returns their output and exit error.
func (r containerRoot) as(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		testenv.Require(t, "setpriv (util-linux) is not installed")
	}
	cmd := exec.Command(setpriv, append([]string{"--bounding-set=" + r.drop, "--inh-caps=-all", "--"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	if r.refuse != "" {
		next := ""
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, "AWL_PROBE="); ok {
				next = v
			}
		}
		exe, _ := os.Executable()
		cmd.Args = append([]string{exe}, cmd.Args...)
		cmd.Path = exe
		cmd.Env = append(cmd.Env, "AWL_PROBE=refuse:"+r.refuse, "AWL_PROBE_NEXT="+next)
	}
	if r.userNS {
		ids := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 65536}}
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
			UidMappings: ids, GidMappings: ids, GidMappingsEnableSetgroups: true}
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		testenv.Require(t, fmt.Sprintf("cannot start root in a user namespace here: %v", err))
	}
	return string(out), err
}

// confine runs an awl in miniature (confine) for cwd as r, and returns
// what it printed: what the command printed, then its status, awl's and
// the command's user namespaces and awl's warning of the namespaces. It
// first shows that r holds other capabilities than the four kept, and
// none of those it drops, so that what a confined command lacks is the
// sandbox's doing. env is added to the awl's environment.
func (r containerRoot) confine(t *testing.T, cwd, command string, env ...string) string {
	t.Helper()
	requireABI(t, sandbox.ABINetwork)
	if os.Geteuid() != 0 {
		t.Skip("root only")
	}
	exe, _ := os.Executable()
	run := func(env ...string) string {
		out, err := r.as(t, env, exe)
		if err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		return out
	}
	dropped := uint64(1 << unix.CAP_SYS_ADMIN)
	if strings.Contains(r.drop, "-setuid") {
		dropped |= 1<<unix.CAP_SETUID | 1<<unix.CAP_SETGID
	}
	own := capSets(t, run("AWL_PROBE=caps:"))
	if own["CapEff"]&dropped != 0 || own["CapEff"]&^keptCaps == 0 {
		t.Fatalf("root under setpriv %s: CapEff %#x, want more than %#x, without %#x", r.drop, own["CapEff"], keptCaps, dropped)
	}
	out := run(append([]string{"AWL_PROBE=confine:" + cwd,
		"AWL_PROBE_CMD=" + command + "; echo command-userns $(readlink /proc/self/ns/user)"}, env...)...)
	t.Logf("%s", out)
	return out
}

// probeField is the rest of the line of out that begins with key and a
// space, "" when there is none.
func probeField(out, key string) string {
	_, v, _ := strings.Cut(out, "\n"+key+" ")
	v, _, _ = strings.Cut(v, "\n")
	return v
}

// inAwlsUserNS reports whether confine's command ran in a user namespace
// awl made.
func inAwlsUserNS(out string) bool {
	awlNS, cmdNS := probeField(out, "awl-userns"), probeField(out, "command-userns")
	return awlNS != "" && cmdNS != "" && cmdNS != awlNS
}

// requireAwlsUserNS fails unless confine's command ran in a user namespace
// of awl's, and skips where r cannot make the namespaces at all.
func (r containerRoot) requireAwlsUserNS(t *testing.T, out string) {
	t.Helper()
	if inAwlsUserNS(out) {
		return
	}
	// As for a user who is not root, where the kernel refuses the
	// namespaces (Ubuntu's AppArmor restriction counts a root without
	// CAP_SYS_ADMIN as unprivileged), awl makes none, and the tests
	// without namespaces cover what it gets: skip, in CI too.
	if p, err := r.as(t, nil, "unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount", "--mount-proc", "true"); err != nil {
		t.Skipf("root under setpriv %s cannot make the namespaces here (unshare: %v: %s)", r.drop, err, strings.TrimSpace(p))
	}
	t.Fatalf("root under setpriv %s: the command ran outside a user namespace of awl's (%q, awl's %q), though root may make one",
		r.drop, probeField(out, "command-userns"), probeField(out, "awl-userns"))
}

// probeStatus is the sandbox status confine printed.
func probeStatus(t *testing.T, out string) sandbox.Status {
	t.Helper()
	var st sandbox.Status
	if err := json.Unmarshal([]byte(probeField(out, "status")), &st); err != nil {
		t.Fatalf("no status in:\n%s", out)
	}
	return st
}

// A root run in a workspace owned by another user (uid 1001, as a GitHub
// Actions container job's checkout) still writes and edits there: the
// commands keep the capabilities that takes, and the write and edit
// tools work as before: with the namespaces, without them, and as a root
// without CAP_SYS_ADMIN, whose commands are root in awl's user namespace.
func TestRootWritesAnotherUsersWorkspace(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	if os.Geteuid() != 0 {
		t.Skip("root only: another user cannot own files as 1001")
	}
	const edits = "set -e; echo new > b.txt; sed -i s/old/new/ a.txt; echo more >> ro.txt; echo x > locked/y; " +
		"chmod 600 a.txt; touch -d 2020-01-01 a.txt; mkdir -p d/e; stat -c '%u %a' a.txt"
	write := map[string]any{"path": "c.txt", "content": "c\n"}
	edit := map[string]any{"path": "a.txt", "old_string": "new", "new_string": "edited"}
	// With the namespaces, and without them, as in a container whose
	// root may make none (Docker's default seccomp profile refuses user
	// namespaces to a root without CAP_SYS_ADMIN).
	for _, without := range []bool{false, true} {
		name := "root"
		if without {
			name += " without namespaces"
		}
		t.Run(name, func(t *testing.T) {
			if without {
				withoutNamespaces(t)
			}
			f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
			foreignWorkspace(t, f.cwd)
			res := f.bash(t, edits)
			mustOK(t, res)
			if !strings.HasPrefix(res.Content, "1001 600\n") {
				t.Errorf("sed -i, chmod: a.txt should stay 1001's, mode 600:\n%s", res.Content)
			}
			mustOK(t, f.call(t, "write", write))
			mustOK(t, f.call(t, "edit", edit))
			checkForeignWorkspace(t, f.cwd)
		})
	}
	// As a root without CAP_SYS_ADMIN, and as one inside a user namespace
	// (a rootless container's), where awl's map may name only the ids
	// its own namespace maps: a map of every id would fail, and with it
	// the namespaces. And as a root without CAP_SETUID and CAP_SETGID too
	// (a hardened Kubernetes pod's), whose user namespace could map uid 0
	// alone: the four capabilities its commands keep there would not act
	// on 1001's files. awl confines them without namespaces instead,
	// where they act on every file, keeps them to exactly the four, and
	// says what that mode lacks.
	for _, r := range []containerRoot{{false, "-sys_admin", ""}, {true, "-sys_admin", ""},
		{false, "-sys_admin,-setuid,-setgid", ""}, {true, "-sys_admin,-setuid,-setgid", ""},
		{false, "-sys_admin", "newuser"}} {
		name := "root without CAP_SYS_ADMIN"
		mapsAll := r.drop == "-sys_admin"
		if !mapsAll {
			name += ", CAP_SETUID and CAP_SETGID"
		}
		if r.userNS {
			name += " in a user namespace"
		}
		if r.refuse != "" {
			// A GitHub Actions container: job's root, under Docker's
			// default seccomp profile.
			name += " refused a user namespace"
		}
		t.Run(name, func(t *testing.T) {
			if r.refuse != "" {
				requireRefused(t, r)
			}
			cwd := filepath.Join(t.TempDir(), "work")
			os.Mkdir(cwd, 0o755)
			foreignWorkspace(t, cwd)
			calls, _ := json.Marshal([][2]any{{"write", write}, {"edit", edit}})
			out := r.confine(t, cwd, edits+"; echo caps; "+probeCommand(t, "caps", ""), "AWL_PROBE_CALLS="+string(calls))
			if mapsAll && r.refuse == "" {
				r.requireAwlsUserNS(t, out)
			}
			if !strings.HasPrefix(out, "1001 600\n") || strings.Contains(out, "error=true") {
				t.Errorf("a command or tool failed, or a.txt is not 1001's, mode 600:\n%s", out)
			}
			checkForeignWorkspace(t, cwd)
			_, caps, _ := strings.Cut(out, "caps\n")
			checkExactlyKept(t, capSets(t, caps))
			if mapsAll && r.refuse == "" {
				return
			}
			if inAwlsUserNS(out) {
				t.Errorf("the command ran in a user namespace of awl's")
			}
			if st := probeStatus(t, out); st.Enforced.Proc || st.Enforced.Git || !st.Enforced.Files {
				t.Errorf("status %+v: without namespaces, want proc and git false, files true", st.Enforced)
			}
			w := probeField(out, "warning-ns")
			if !strings.Contains(w, "without PID and mount namespaces") ||
				!mapsAll && (!strings.Contains(w, "without CAP_SETUID and CAP_SETGID") || !strings.Contains(w, "uid 1001")) {
				t.Errorf("the warning at start does not say why there are no namespaces: %q", w)
			}
		})
	}
}

// requireRefused skips unless r, without its filter, makes a user
// namespace, and fails if under it, it does: the filter is what refuses.
func requireRefused(t *testing.T, r containerRoot) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("root only")
	}
	unshare := []string{"unshare", "--user", "--map-root-user", "true"}
	if out, err := (containerRoot{drop: r.drop}).as(t, nil, unshare...); err != nil {
		t.Skipf("root under setpriv %s makes no user namespace here, filter or not: %v: %s", r.drop, err, out)
	}
	if out, err := r.as(t, nil, unshare...); err == nil {
		t.Fatalf("under the filter %s, root made a user namespace: the filter refuses nothing:\n%s", r.refuse, out)
	}
}

// checkExactlyKept checks that a confined command of a root held exactly
// the four capabilities kept, and no inheritable or ambient one.
func checkExactlyKept(t *testing.T, sets map[string]uint64) {
	t.Helper()
	for k, want := range map[string]uint64{"CapBnd": keptCaps, "CapPrm": keptCaps, "CapEff": keptCaps, "CapInh": 0, "CapAmb": 0} {
		if sets[k] != want {
			t.Errorf("%s %#x, want %#x", k, sets[k], want)
		}
	}
}

// foreignWorkspace makes cwd, and what a test writes and edits in it, uid
// 1001's: a.txt, ro.txt (read-only), locked/ (read-only).
func foreignWorkspace(t *testing.T, cwd string) {
	t.Helper()
	for _, name := range []string{"a.txt", "ro.txt"} {
		if err := os.WriteFile(filepath.Join(cwd, name), []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(cwd, "ro.txt"), 0o444)
	os.Mkdir(filepath.Join(cwd, "locked"), 0o555)
	for _, p := range []string{"", "a.txt", "ro.txt", "locked"} {
		if err := os.Chown(filepath.Join(cwd, p), 1001, 1001); err != nil {
			t.Fatal(err)
		}
	}
}

// checkForeignWorkspace checks what TestRootWritesAnotherUsersWorkspace
// wrote and edited in cwd.
func checkForeignWorkspace(t *testing.T, cwd string) {
	t.Helper()
	for name, want := range map[string]string{"a.txt": "edited\n", "b.txt": "new\n", "ro.txt": "old\nmore\n", "locked/y": "x\n", "c.txt": "c\n"} {
		if b, err := os.ReadFile(filepath.Join(cwd, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want %q", name, b, err, want)
		}
	}
}

// The calls root could use to reach past the sandbox are refused to a
// confined command, with the namespaces, without them and with the
// network on. Each is first shown to reach the kernel unconfined (it
// succeeds, or fails on its arguments), so the refusal is the sandbox's:
// as root every one, as another user those it may make.
func TestPrivilegedCallsRefused(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	sys := func(nr int, args ...string) string {
		return strings.Join(append([]string{strconv.Itoa(nr)}, args...), ",")
	}
	calls := []privCall{
		{"bpf", "bpf", "", ""},
		{"perf_event_open system-wide", "perf", "", ""},
		{"userfaultfd", "userfaultfd", "", ""},
		{"open_by_handle_at", "sys", sys(unix.SYS_OPEN_BY_HANDLE_AT, "-1", "0", "0"), ""},
		{"name_to_handle_at", "sys", sys(unix.SYS_NAME_TO_HANDLE_AT, "-100", "0", "0", "0", "0"), ""},
		{"kexec_load", "sys", sys(unix.SYS_KEXEC_LOAD, "0", "0", "0", "0"), ""},
		{"kexec_file_load", "sys", sys(unix.SYS_KEXEC_FILE_LOAD, "-1", "-1", "0", "0", "0"), ""},
		{"init_module", "sys", sys(unix.SYS_INIT_MODULE, "0", "0", "0"), ""},
		{"finit_module", "sys", sys(unix.SYS_FINIT_MODULE, "-1", "0", "0"), ""},
		{"delete_module", "sys", sys(unix.SYS_DELETE_MODULE, "0", "0"), ""},
		{"process_vm_readv", "sys", sys(unix.SYS_PROCESS_VM_READV, "self", "0", "0", "0", "0", "0"), ""},
		{"process_vm_writev", "sys", sys(unix.SYS_PROCESS_VM_WRITEV, "self", "0", "0", "0", "0", "0"), ""},
		{"keyctl", "sys", sys(unix.SYS_KEYCTL, "0", "-3", "0"), ""},
		{"add_key", "sys", sys(unix.SYS_ADD_KEY, "0", "0", "0", "0", "0"), ""},
		{"request_key", "sys", sys(unix.SYS_REQUEST_KEY, "0", "0", "0", "0"), ""},
		{"mount", "sys", sys(unix.SYS_MOUNT, "0", "0", "0", "0", "0"), ""},
		{"umount2", "sys", sys(unix.SYS_UMOUNT2, "0", "0"), ""},
		{"pivot_root", "sys", sys(unix.SYS_PIVOT_ROOT, "0", "0"), ""},
		{"fsopen", "sys", sys(unix.SYS_FSOPEN, "0", "0"), ""},
		{"open_tree", "sys", sys(unix.SYS_OPEN_TREE, "-1", "0", "0"), ""},
		{"unshare(CLONE_NEWUSER)", "sys", sys(unix.SYS_UNSHARE, strconv.Itoa(unix.CLONE_NEWUSER)), ""},
		{"clone(CLONE_NEWUSER)", "newuser", "", ""},
		{"clone3", "sys", sys(unix.SYS_CLONE3, "0", "0"), "function not implemented"},
	}
	refusedUnconfined := func(out string) bool {
		return strings.Contains(out, "operation not permitted") || strings.Contains(out, "function not implemented")
	}
	// Another user reaches these unconfined too (the others want a
	// capability): the keyrings, another process's memory, file handles
	// by name, clone3, and where user namespaces work, a new one.
	userReaches := map[string]bool{"keyctl": true, "add_key": true, "request_key": true, "process_vm_readv": true,
		"process_vm_writev": true, "name_to_handle_at": true, "open_by_handle_at": true, "clone3": true}
	if !strings.Contains(runProbe("newuser", ""), "probe failed") {
		userReaches["unshare(CLONE_NEWUSER)"], userReaches["clone(CLONE_NEWUSER)"] = true, true
	}
	for _, c := range calls {
		if os.Geteuid() != 0 && !userReaches[c.name] {
			continue
		}
		if out := runProbe(c.what, c.arg); refusedUnconfined(out) || !strings.Contains(out, "probe") {
			if (strings.HasPrefix(c.name, "kexec") || strings.HasSuffix(c.name, "_module")) && strings.Contains(out, "function not implemented") {
				continue // a kernel without kexec or modules: nothing to refuse
			}
			t.Errorf("%s: unconfined (uid %d), should reach the kernel: %s", c.name, os.Geteuid(), out)
		}
	}
	for _, setup := range []struct {
		name    string
		without bool
		network bool
	}{{"namespaces", false, false}, {"without namespaces", true, false}, {"network", false, true}} {
		t.Run(setup.name, func(t *testing.T) {
			if setup.without {
				withoutNamespaces(t)
			}
			f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite, Network: setup.network})
			for _, c := range calls {
				want := c.want
				if want == "" {
					want = "operation not permitted"
				}
				res := f.bash(t, probeCommand(t, c.what, c.arg))
				if !strings.Contains(res.Content, "probe failed: ") || !strings.Contains(res.Content, want) {
					t.Errorf("%s: want it refused (%s):\n%s", c.name, want, res.Content)
				}
			}
			// What a program needs still works: processes, and threads
			// (glibc's pthread_create falls back from clone3 to clone):
			// xz compresses with two.
			mustOK(t, f.bash(t, "sh -c 'echo $$' | grep -q . && "+probeCommand(t, "caps", "")))
			if _, err := exec.LookPath("xz"); err == nil {
				res := f.bash(t, "head -c 8000000 /dev/zero | xz -T2 --block-size=1MiB -1 -c | xz -d | wc -c")
				if !strings.HasPrefix(res.Content, "8000000\n") {
					t.Errorf("xz with two threads:\n%s", res.Content)
				}
			}
		})
	}
	t.Run("root without CAP_SYS_ADMIN", func(t *testing.T) { refusedWithoutSysAdmin(t, calls) })
}

// privCall is a call TestPrivilegedCallsRefused tries: the probe what
// with arg, and the refusal wanted ("" for EPERM).
type privCall struct{ name, what, arg, want string }

// refusedWithoutSysAdmin checks that calls are refused to a command of a
// root without CAP_SYS_ADMIN, root in awl's user namespace: one bash
// call runs every probe, each after a line "== N".
func refusedWithoutSysAdmin(t *testing.T, calls []privCall) {
	var probes []string
	for i, c := range calls {
		probes = append(probes, fmt.Sprintf("echo '== %d'; %s", i, probeCommand(t, c.what, c.arg)))
	}
	out := asRootWithoutSysAdmin(t, false, t.TempDir(), strings.Join(probes, "; "))
	for i, c := range calls {
		want := c.want
		if want == "" {
			want = "operation not permitted"
		}
		_, got, ok := strings.Cut(out, fmt.Sprintf("== %d\n", i))
		got, _, _ = strings.Cut(got, "\n==")
		if !ok || !strings.Contains(got, "probe failed: ") || !strings.Contains(got, want) {
			t.Errorf("%s: want it refused (%s):\n%s", c.name, want, got)
		}
	}
}

// open_by_handle_at opens a file by its inode through any directory of
// its file system: through the workspace's mount it wrote .git/config
// past the read-only bind mount, while enforced.git said true.
func TestFileHandleCannotWriteReadOnlyGit(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	probe := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	requireNamespaces(t, probe.sb.Status())
	cwd := t.TempDir()
	config := filepath.Join(cwd, ".git", "config")
	os.Mkdir(filepath.Join(cwd, ".git"), 0o755)
	if err := os.WriteFile(config, []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, config, 0)
	if err != nil {
		t.Skipf("name_to_handle_at: %v: this file system has no file handles", err)
	}
	arg := fmt.Sprintf("%s:%d:%s", cwd, h.Type(), hex.EncodeToString(h.Bytes()))
	if os.Geteuid() == 0 {
		if out := runProbe("handle", arg); !strings.Contains(out, "probe ok") {
			t.Fatalf("root, unconfined, could not write through the handle: the test would prove nothing:\n%s", out)
		}
		os.WriteFile(config, []byte("[core]\n"), 0o644)
	}
	sb, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if !st.Enforced.Git {
		t.Fatalf("status %+v: enforced.git false", st)
	}
	res := run(toolsFor(cwd, sb), "bash", map[string]any{"command": probeCommand(t, "handle", arg)})
	if !strings.Contains(res.Content, "probe failed") {
		t.Errorf("a confined command wrote .git/config through its handle:\n%s", res.Content)
	}
	if b, _ := os.ReadFile(config); string(b) != "[core]\n" {
		t.Errorf(".git/config: %q", b)
	}
}

// The caller's session keyring is not the tools': a key in the session
// keyring of the process that started awl (a login's, or keyctl
// session's) cannot be read, nor changed, by a confined command.
func TestSessionKeyringNotShared(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	secret := fmt.Sprintf("awl-key-secret-%d", os.Getpid())
	// A session keyring of its own, and a key in it, for an awl started
	// from this thread: the thread's credentials are what a process it
	// starts inherits.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if _, err := unix.KeyctlJoinSessionKeyring("awl-test"); err != nil {
		t.Skipf("keyctl(JOIN_SESSION_KEYRING): %v: no keyrings here", err)
	}
	id, err := unix.AddKey("user", "awl-test", []byte(secret), unix.KEY_SPEC_SESSION_KEYRING)
	if err != nil {
		t.Fatalf("add_key: %v", err)
	}
	defer unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0)
	exe, _ := os.Executable()
	awl := func(env ...string) string {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), env...)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := awl("AWL_PROBE=keyread:" + strconv.Itoa(id)); !strings.Contains(out, secret) {
		t.Fatalf("unconfined, a child could not read the key: the test would prove nothing:\n%s", out)
	}
	for _, without := range []string{"", "1"} {
		out := awl("AWL_PROBE=confine:"+t.TempDir(), "AWL_PROBE_CMD="+probeCommand(t, "keyread", strconv.Itoa(id)), "AWL_PROBE_NO_NAMESPACES="+without)
		if strings.Contains(out, secret) || !strings.Contains(out, "probe failed") {
			t.Errorf("without namespaces %q: a confined command read the caller's key:\n%s", without, out)
		}
	}
}

// ptrace stays scoped by Landlock: a confined command attaches to no
// process outside its domain (the namespaces' init; without namespaces,
// a process of the same user that awl did not confine), as root too,
// while it may trace its own children. As root the target holds only the
// four capabilities a confined command keeps, and the same probe with
// those four, unconfined, attaches to it: the capability rules
// (a tracer must hold every capability its target holds) would refuse a
// target of root's full set on their own, and the test would not show
// that Landlock refuses.
func TestPtraceScoped(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	four := []string{"--bounding-set=-all,+chown,+dac_override,+fowner,+fsetid", "--inh-caps=-all"}
	target := exec.Command("sleep", "60")
	if os.Geteuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			testenv.Require(t, "setpriv (util-linux) to start a process with the four capabilities")
		}
		target = exec.Command(setpriv, append(four, "sleep", "60")...)
	}
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { target.Process.Kill(); target.Wait() }()
	pid := strconv.Itoa(target.Process.Pid)
	// The probe, unconfined, as root with the four capabilities.
	exe, _ := os.Executable()
	unconfined := exec.Command(exe)
	if os.Geteuid() == 0 {
		unconfined = exec.Command(target.Path, append(four, exe)...)
	}
	unconfined.Env = append(os.Environ(), "AWL_PROBE=ptrace:"+pid)
	if out, _ := unconfined.CombinedOutput(); !strings.Contains(string(out), "probe ok") {
		t.Fatalf("unconfined, with the capabilities a confined command keeps, the probe could not attach: the test would prove nothing:\n%s", out)
	}
	f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	if f.sb.Status().Enforced.Proc {
		if res := f.bash(t, probeCommand(t, "ptrace", "1")); !strings.Contains(res.Content, "probe failed: operation not permitted") {
			t.Errorf("a confined command attached to the namespaces' init:\n%s", res.Content)
		}
	}
	withoutNamespaces(t)
	g := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	if res := g.bash(t, probeCommand(t, "ptrace", pid)); !strings.Contains(res.Content, "probe failed: operation not permitted") {
		t.Errorf("a confined command attached to a process outside its domain:\n%s", res.Content)
	}
	// Within its domain it may: ptrace itself is not refused.
	if res := g.bash(t, "sleep 30 & p=$!; "+probeCommand(t, "ptrace", "$p")+"; kill $p"); !strings.Contains(res.Content, "probe ok") {
		t.Errorf("a confined command could not attach to its own child:\n%s", res.Content)
	}
}
