package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// initScript is the init of the namespaces confined commands run in. In
// its own mount namespace, made private first so nothing propagates back,
// it mounts a /proc of its PID namespace, so that a tool sees no process
// but the sandbox's (no /proc/PID/environ of the shell that started awl),
// and makes each argument (the working directory's .git) read-only. It
// says what it did ("proc", then "ro N" for the Nth argument made
// read-only), then "ready". Then it waits, reaping the orphans the
// namespace's processes leave, until it is killed: with awl (its
// parent-death signal, SIGKILL) or when the sandbox is closed. The kernel
// kills every process of a PID namespace when its init dies, so nothing a
// tool started, double-forked or setsid'd, outlives awl.
const initScript = `mount --make-rprivate / || exit 1
mount -t proc -o nosuid,nodev,noexec proc /proc && echo proc
i=0
for d do
	i=$((i+1))
	if mount --bind "$d" "$d"; then
		if mount -o remount,bind,ro "$d"; then echo "ro $i"; else umount "$d"; fi
	fi
done
echo ready
sleep 2147483647 &
while :; do wait; done`

// userPrologue comes first in the init of a user who is not root (or a
// root that may not map other ids, without CAP_SETUID): it maps
// the user (uid and gid, in that order) to itself in the init's user
// namespace, as a process may for its own ids, so that files keep their
// owner and commands their user. The init writes its own maps, with the
// capability it has in the namespace: awl could not, being non-dumpable
// (its children's /proc files, uid_map included, belong to root until
// they exec).
const userPrologue = `echo deny > /proc/self/setgroups &&
echo "%[1]d %[1]d 1" > /proc/self/uid_map &&
echo "%[2]d %[2]d 1" > /proc/self/gid_map || exit 1
`

// systemPath is where awl looks for the programs the namespaces need (sh,
// mount, nsenter), whatever the PATH: never a directory a tool may write.
const systemPath = "/usr/sbin:/usr/bin:/sbin:/bin"

// systemCommand is the path of the program name in systemPath, "" when
// there is none.
func systemCommand(name string) string {
	for _, d := range filepath.SplitList(systemPath) {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// nsInit is the init process of the PID and mount namespaces, and the
// descriptors of its namespaces.
//
// It is started by New, which then knows what it could do: a root
// whose mounts are refused (AppArmor's docker-default profile, a seccomp
// profile) gets no namespaces rather than commands that all fail. As
// root (CAP_SYS_ADMIN), the thread that starts each command joins its
// namespaces (join).
//
// As a user who is not root, or a root without CAP_SYS_ADMIN (a
// container's), it runs in a user namespace of its own too, which maps
// the user to itself and gives the init, not the commands, the capability
// to mount. A process joins a user namespace only while it has a single
// thread, which awl never has: each command runs through a program of one
// thread, the embedded helper (nsenterHelper) or else nsenter
// (util-linux), exec'd from the confined thread, so the Landlock domain
// and the network filter are the command's as for root. It joins the
// namespaces through descriptors awl opened, since
// Landlock keeps a confined process from opening another's /proc/PID/ns,
// and so is its working directory, opened through the init's root: a
// directory opened in awl's mount namespace would lead past the read-only
// .git.
type nsInit struct {
	readOnly []string // directories bind-mounted read-only
	// user says the init has a user namespace of its own (not root, or
	// root without CAP_SYS_ADMIN): commands enter through the helper or
	// nsenter, at that path.
	user    bool
	nsenter string
	// keep is the capabilities a command keeps in the user namespace:
	// keptCaps where awl is root without the capability to make
	// namespaces itself (a container's root), whose commands are root in
	// the user namespace and would otherwise hold every capability there;
	// none otherwise.
	keep uint64
	// helper, when not "", is where commands exec the embedded
	// nsenterHelper (/proc/self/fd/N of a sealed memfd) instead of
	// nsenter: it clears the bounding set but keep, full in the user
	// namespace, which nsenter leaves so, narrows the other sets to keep,
	// and closes the namespaces' descriptors, which nsenter leaves open
	// in the command.
	helper string
	// uids and gids, where awl is root with CAP_SETUID and CAP_SETGID,
	// map every id awl's own user namespace maps to itself in the init's,
	// instead of root alone (userPrologue): a capability held in a user
	// namespace works only on files whose owner and group are mapped in
	// it, so commands could not write in a workspace owned by another user
	// (a container job's checkout, uid 1001), which a root with
	// CAP_SYS_ADMIN's commands can. Root's commands keep CAP_DAC_OVERRIDE
	// and the rest of keptCaps either way; Landlock confines where.
	uids, gids []syscall.SysProcIDMap
	// setpriv, where the helper cannot run and awl is root, is
	// setpriv(1)'s path: nsenter runs it to narrow the capabilities to
	// keep. "" otherwise.
	setpriv string
	once    sync.Once
	err     error
	proc    *os.Process
	// procMounted, and roDone (as many as readOnly, in order): what the
	// init did.
	procMounted bool
	roDone      []bool
	mnt, pid    int // namespace descriptors (root)
	// files are the user, mount and PID namespaces' descriptors that
	// nsenter is given (user).
	files []*os.File
}

// namespacesAvailable reports whether awl may make PID and mount
// namespaces and join them from a thread: it needs CAP_SYS_ADMIN (root;
// an unprivileged user namespace cannot be joined by one thread of a
// process), and the mount command.
func namespacesAvailable() bool {
	if effectiveCaps()&(1<<unix.CAP_SYS_ADMIN) == 0 {
		return false
	}
	if _, err := os.Stat("/proc/self/ns/pid_for_children"); err != nil {
		return false
	}
	return systemCommand("mount") != ""
}

// userNamespaces is a user namespace's init for the namespaces of a user
// who is not root, or why there can be none: the kernel has no user
// namespaces or allows the user none (user.max_user_namespaces 0,
// Debian's kernel.unprivileged_userns_clone 0), or sh, mount or nsenter
// is missing. It says nothing of what starting the init will find
// (Ubuntu's AppArmor lets the user make the namespace, then refuses the
// mounts): that is start's to say.
func userNamespaces(readOnly []string) (*nsInit, error) {
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		return nil, errors.New("the kernel has no user namespaces")
	}
	for _, f := range []string{"/proc/sys/user/max_user_namespaces", "/proc/sys/kernel/unprivileged_userns_clone"} {
		if b, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(b)) == "0" {
			return nil, fmt.Errorf("user namespaces are turned off (%s is 0)", strings.ReplaceAll(strings.TrimPrefix(f, "/proc/sys/"), "/", "."))
		}
	}
	n := &nsInit{readOnly: readOnly, user: true, nsenter: systemCommand("nsenter"), helper: helperPath()}
	need := []string{"sh", "mount", "nsenter"}
	if os.Geteuid() == 0 {
		n.keep = keptCaps
		if effectiveCaps()&(1<<unix.CAP_SETUID|1<<unix.CAP_SETGID) == 1<<unix.CAP_SETUID|1<<unix.CAP_SETGID {
			n.uids, n.gids = ownIDMap("uid_map"), ownIDMap("gid_map")
		}
		if n.helper == "" {
			n.setpriv = systemCommand("setpriv")
			need = append(need, "setpriv")
		}
	}
	for _, c := range need {
		if systemCommand(c) == "" {
			return nil, fmt.Errorf("%s is not installed (util-linux has mount, nsenter and setpriv)", c)
		}
	}
	return n, nil
}

// mapsAll reports whether awl maps every id of its own in the init's user
// namespace (root), not the init its own ids alone.
func (n *nsInit) mapsAll() bool { return len(n.uids) > 0 && len(n.gids) > 0 }

// maxOwnerLook bounds the entries mapsOwners looks at in each writable
// directory.
const maxOwnerLook = 1000

// mapsOwners returns nil unless the init's user namespace can map root
// alone (a root without CAP_SETUID and CAP_SETGID: a hardened
// Kubernetes pod's) and a writable directory in dirs, or an entry
// directly in one (the first maxOwnerLook), belongs to another owner or
// group: commands, root in that namespace, keep CAP_DAC_OVERRIDE and
// CAP_FOWNER, which act only on files whose owner and group it maps, so
// they could not write nor edit there (a checkout of uid 1001's). The
// error says so: awl then confines commands without namespaces, as root,
// where the four capabilities they keep work on every file.
func (n *nsInit) mapsOwners(dirs []string) error {
	uid, gid := os.Geteuid(), os.Getegid()
	if !n.user || uid != 0 || n.mapsAll() {
		return nil
	}
	foreign := func(p string) error {
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil || int(st.Uid) == uid && int(st.Gid) == gid {
			return nil
		}
		return fmt.Errorf("a user namespace of awl's could map uid %d alone here, without CAP_SETUID and CAP_SETGID, "+
			"and %s belongs to uid %d, gid %d, whose files its commands could not write", uid, p, st.Uid, st.Gid)
	}
	for _, d := range dirs {
		if err := foreign(d); err != nil {
			return err
		}
		f, err := os.Open(d)
		if err != nil {
			continue
		}
		names, _ := f.Readdirnames(maxOwnerLook)
		f.Close()
		for _, name := range names {
			if err := foreign(filepath.Join(d, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// ownIDMap is what awl's own user namespace maps (file is uid_map or
// gid_map of /proc/self), each range to itself: in the initial
// namespace every id, inside a container's user namespace the ids it
// maps, which are all a map of a namespace awl makes may name. nil when
// it cannot be read.
func ownIDMap(file string) []syscall.SysProcIDMap {
	b, err := os.ReadFile("/proc/self/" + file)
	if err != nil {
		return nil
	}
	var m []syscall.SysProcIDMap
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		// "INSIDE OUTSIDE COUNT"
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil
		}
		inside, err1 := strconv.Atoi(f[0])
		size, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			return nil
		}
		m = append(m, syscall.SysProcIDMap{ContainerID: inside, HostID: inside, Size: size})
	}
	return m
}

// noHelper makes commands enter the namespaces through nsenter, as where
// the helper cannot run (tests, benchmarks).
var noHelper bool

var helperOnce struct {
	sync.Once
	path string
}

// helperPath is the path the embedded nsenterHelper is exec'd at: a
// sealed memfd, at a descriptor high enough that no descriptor a command
// is given (os/exec moves them to 0, 1, 2, 3…) lands on it before exec;
// "" where there is no helper or it cannot be made.
func helperPath() string {
	if noHelper {
		return ""
	}
	helperOnce.Do(func() {
		if len(nsenterHelper) == 0 {
			return
		}
		// MFD_EXEC (Linux 6.3) where vm.memfd_noexec would seal it
		// non-executable; EINVAL before.
		fd, err := unix.MemfdCreate("awl-nsenter", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
		if err == unix.EINVAL {
			fd, err = unix.MemfdCreate("awl-nsenter", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
		}
		if err != nil {
			return
		}
		defer unix.Close(fd)
		if n, err := unix.Write(fd, nsenterHelper); err != nil || n != len(nsenterHelper) {
			return
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL); err != nil {
			return
		}
		// Executable only through a descriptor not open for writing.
		ro, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", fd), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return
		}
		high, err := unix.FcntlInt(uintptr(ro), unix.F_DUPFD_CLOEXEC, 512)
		unix.Close(ro)
		if err != nil {
			return
		}
		path := fmt.Sprintf("/proc/self/fd/%d", high)
		// It must run here (a memfd may not be executable: vm.memfd_noexec
		// 2, a security module): without arguments it exits 126.
		var ee *exec.ExitError
		if err := exec.Command(path).Run(); !errors.As(err, &ee) || ee.ExitCode() != 126 {
			unix.Close(high)
			return
		}
		helperOnce.path = path
	})
	return helperOnce.path
}

// start starts the init, once; later calls return the first one's error.
func (n *nsInit) start() error {
	n.once.Do(func() { n.err = n.run() })
	return n.err
}

// attr is how the init is started.
func (n *nsInit) attr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS,
		Setsid:     true,
		Pdeathsig:  syscall.SIGKILL,
	}
	if n.user {
		// The init's shell keeps the capability across exec, to map and
		// mount; the commands, which the helper or nsenter runs with the
		// user's own credentials, have none but keep.
		a.Cloneflags |= syscall.CLONE_NEWUSER
		a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
	}
	if n.mapsAll() {
		// awl writes the maps before the init runs.
		a.UidMappings, a.GidMappings = n.uids, n.gids
	}
	return a
}

func (n *nsInit) run() error {
	script := initScript
	if n.user && !n.mapsAll() {
		script = fmt.Sprintf(userPrologue, os.Geteuid(), os.Getegid()) + script
	}
	cmd := exec.Command(systemCommand("sh"), append([]string{"-c", script, "awl-sandbox-init"}, n.readOnly...)...)
	cmd.Env = []string{"PATH=" + systemPath}
	cmd.Dir = "/"
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.SysProcAttr = n.attr()
	started := make(chan error, 1)
	waited := make(chan struct{})
	go func() {
		// The parent-death signal fires when the thread that started the
		// init ends: this one, locked and waiting until the init is killed.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
		close(waited)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("start the namespaces' init: %w", err)
	}
	n.roDone = make([]bool, len(n.readOnly))
	ready := false
	for sc := bufio.NewScanner(out); sc.Scan(); {
		line := sc.Text()
		if line == "ready" {
			ready = true
			break
		}
		if line == "proc" {
			n.procMounted = true
		} else if i, err := strconv.Atoi(strings.TrimPrefix(line, "ro ")); err == nil && i > 0 && i <= len(n.roDone) {
			n.roDone[i-1] = true
		}
	}
	if !ready {
		cmd.Process.Kill()
		<-waited // stderr is whole, and no longer written
		return fmt.Errorf("start the namespaces' init: %s", oneLine(stderr.String()))
	}
	n.proc = cmd.Process
	if err := n.open(cmd.Process.Pid); err != nil {
		n.close()
		return fmt.Errorf("start the namespaces' init: %w", err)
	}
	return nil
}

// open opens the descriptors of the init's namespaces.
func (n *nsInit) open(pid int) error {
	ns := func(name string) (int, error) {
		return unix.Open(fmt.Sprintf("/proc/%d/ns/%s", pid, name), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if !n.user {
		var err error
		if n.mnt, err = ns("mnt"); err != nil {
			return err
		}
		if n.pid, err = ns("pid"); err != nil {
			unix.Close(n.mnt)
			return err
		}
		return nil
	}
	for _, name := range []string{"user", "mnt", "pid"} {
		fd, err := ns(name)
		if err != nil {
			return err
		}
		n.files = append(n.files, os.NewFile(uintptr(fd), "ns/"+name))
	}
	return nil
}

// allReadOnly reports whether the init made every directory read-only.
func (n *nsInit) allReadOnly() bool {
	for _, ok := range n.roDone {
		if !ok {
			return false
		}
	}
	return true
}

// oneLine is s, trimmed, with its lines joined by "; ".
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(s), "\n", " ; ")), " ")
}

// join moves the calling (locked) thread into the namespaces: the
// processes it starts run in them (root).
func (n *nsInit) join() error {
	if err := n.start(); err != nil {
		return err
	}
	// A thread shares its file system information with the others; it
	// must have its own to change mount namespace.
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return fmt.Errorf("unshare(CLONE_FS): %w", err)
	}
	if err := unix.Setns(n.mnt, unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("setns(mount): %w", err)
	}
	if err := unix.Setns(n.pid, unix.CLONE_NEWPID); err != nil {
		return fmt.Errorf("setns(pid): %w", err)
	}
	return nil
}

// enter makes cmd run in the user namespace's init's namespaces: it runs
// the helper (or nsenter) instead, which joins the init's user, mount and
// PID namespaces with the user's own credentials, enters cmd's working
// directory as the mount namespace has it, narrows the capabilities to
// n.keep, and forks cmd's program, which is then in the PID namespace.
// It returns the working directory's
// descriptor, for the caller to close once cmd has started. It must run
// before the thread is confined: Landlock would refuse the look through
// the init's root.
func (n *nsInit) enter(cmd *exec.Cmd) (*os.File, error) {
	dir := cmd.Dir
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	if n.proc == nil {
		return nil, errors.New("the sandbox is closed")
	}
	wd, err := os.OpenFile(fmt.Sprintf("/proc/%d/root%s", n.proc.Pid, filepath.Clean(dir)), os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		// As cmd.Start would say it.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &fs.PathError{Op: "chdir", Path: dir, Err: err}
	}
	path := cmd.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	// cmd.Start would fail on a program that is not there; nsenter would
	// start, and exit 127.
	if err := unix.Access(path, unix.X_OK); err != nil {
		wd.Close()
		return nil, &fs.PathError{Op: "fork/exec", Path: cmd.Path, Err: err}
	}
	fd := len(cmd.ExtraFiles) + 3
	cmd.ExtraFiles = append(cmd.ExtraFiles, n.files[0], n.files[1], n.files[2], wd)
	if n.helper != "" {
		cmd.Args = append([]string{"awl-nsenter", strconv.Itoa(fd), strconv.FormatUint(n.keep, 10), path}, cmd.Args[1:]...)
		cmd.Path = n.helper
		return wd, nil
	}
	args := []string{"nsenter",
		fmt.Sprintf("--user=/proc/self/fd/%d", fd), fmt.Sprintf("--mount=/proc/self/fd/%d", fd+1),
		fmt.Sprintf("--pid=/proc/self/fd/%d", fd+2), fmt.Sprintf("--wd=/proc/self/fd/%d", fd+3),
		"--preserve-credentials", "--"}
	if n.setpriv != "" {
		// Root in the namespace holds every capability of it after
		// joining it and after exec: setpriv narrows them to keptCaps.
		args = append(args, n.setpriv, "--bounding-set="+keptCapNames, "--inh-caps=-all", "--ambient-caps=-all", "--")
	}
	args = append(args, path)
	cmd.Args = append(args, cmd.Args[1:]...)
	cmd.Path = n.nsenter
	return wd, nil
}

// sibling is another init like n, of namespaces of its own with the
// same directories read-only (MCP servers', apart from the tools'); nil
// when it cannot start or could not do what n did.
func (n *nsInit) sibling() *nsInit {
	m := &nsInit{readOnly: n.readOnly}
	var err error
	if n.user {
		m, err = userNamespaces(n.readOnly)
	}
	if err == nil {
		err = m.start()
	}
	if err != nil || m.procMounted != n.procMounted || !slices.Equal(m.roDone, n.roDone) {
		if m != nil {
			m.close()
		}
		return nil
	}
	return m
}

// close kills the init, and with it every process left in the namespace.
func (n *nsInit) close() {
	if n.proc == nil {
		return
	}
	n.proc.Kill()
	if n.user {
		for _, f := range n.files {
			f.Close()
		}
		n.files = nil
	} else if n.mnt > 0 {
		unix.Close(n.mnt)
		unix.Close(n.pid)
	}
	n.proc = nil
}
