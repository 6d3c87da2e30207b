// Package sandbox confines the processes awl's tools start, and the files
// its built-in tools write, with Linux Landlock. awl itself is never
// confined: it must reach the model and write the session.
//
// A confined command is started (forked and executed) from an OS thread of
// awl's that confined itself first (Landlock, the seccomp filter, every
// capability but four, as root the namespaces): a Landlock domain and a
// filter belong to a thread, and a process inherits those of the thread
// that forked it, so the command and everything it starts are confined
// while awl's other threads are not. The thread (a launcher, one per
// ruleset, made at the first command) starts commands and does nothing
// else, and ends once the sandbox is closed and what it started has
// exited. A command so costs a hand-over to that thread, where
// re-executing awl as a helper that confines itself and then execs the
// command costs a whole extra program start. Writes by the built-in write
// and edit tools happen in awl's process and are checked against the same
// rules by CheckWrite.
package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Mode is how much the tools may change.
type Mode string

// The sandbox modes.
const (
	// Off confines nothing.
	Off Mode = "off"
	// ReadOnly lets tools read anywhere and write only in the private
	// temporary directory (and the --sandbox-writable directories).
	ReadOnly Mode = "read-only"
	// WorkspaceWrite also lets tools write under the working directory.
	WorkspaceWrite Mode = "workspace-write"
)

// Modes lists the modes as a user writes them.
const Modes = "off, read-only, workspace-write"

// ParseMode parses a mode name; "" is Off.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.TrimSpace(s)); m {
	case "", Off:
		return Off, nil
	case ReadOnly, WorkspaceWrite:
		return m, nil
	}
	return "", fmt.Errorf("unknown sandbox mode %q (%s)", s, Modes)
}

// Landlock ABI versions the modes need.
const (
	// ABIFiles restricts every way of writing a file, truncation included.
	ABIFiles = 3
	// ABINetwork also restricts TCP connect and bind.
	ABINetwork = 4
)

// Policy is what a confined tool may do.
type Policy struct {
	Mode Mode `json:"mode"`
	// Network allows network access.
	Network bool `json:"network"`
	// Cwd is the working directory, writable in WorkspaceWrite.
	Cwd string `json:"cwd"`
	// TmpDir is the private temporary directory; TMPDIR points to it.
	TmpDir string `json:"tmp"`
	// Writable are more writable directories (--sandbox-writable).
	Writable []string `json:"writable,omitempty"`
}

// Confined reports whether p confines anything.
func (p Policy) Confined() bool { return p.Mode == ReadOnly || p.Mode == WorkspaceWrite }

// NeedABI is the Landlock ABI version p needs to be enforced in full; 0
// when p confines nothing.
func (p Policy) NeedABI() int {
	switch {
	case !p.Confined():
		return 0
	case p.Network:
		return ABIFiles
	default:
		return ABINetwork
	}
}

// WritableDirs returns the directories where writes are allowed, in the
// order they are shown: the working directory (WorkspaceWrite only), the
// --sandbox-writable directories, then the private temporary directory.
func (p Policy) WritableDirs() []string {
	var dirs []string
	if p.Mode == WorkspaceWrite {
		dirs = append(dirs, p.Cwd)
	}
	dirs = append(dirs, p.Writable...)
	if p.TmpDir != "" {
		dirs = append(dirs, p.TmpDir)
	}
	return dirs
}

// Note is the line added to a failed tool result while p confines tools,
// so the model knows why a write or a connection may have failed, e.g.
// "(awl sandbox: workspace-write; writes outside /src and network are
// blocked)". The private temporary directory is named $TMPDIR.
func (p Policy) Note() string {
	if !p.Confined() {
		return ""
	}
	places := []string{}
	if p.Mode == WorkspaceWrite {
		places = append(places, p.Cwd)
	}
	places = append(places, p.Writable...)
	places = append(places, "$TMPDIR")
	if p.Network {
		return fmt.Sprintf("(awl sandbox: %s; writes outside %s are blocked)", p.Mode, andList(places))
	}
	return fmt.Sprintf("(awl sandbox: %s; writes outside %s and network are blocked)", p.Mode, strings.Join(places, ", "))
}

// andList joins items as "a, b and c".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// Status is what the session event reports about the sandbox.
type Status struct {
	Mode    Mode `json:"mode"`
	Network bool `json:"network"`
	// ABI is the kernel's Landlock ABI version; 0 when it has none.
	ABI int `json:"abi"`
	// Enforced says what this kernel confines, piece by piece.
	Enforced Enforced `json:"enforced"`
	// Warning says what is not enforced, with --sandbox-best-effort.
	Warning string `json:"warning,omitempty"`
	// GitReadOnly says the working directory's .git is read-only to
	// commands (workspace-write, where awl can make a mount namespace).
	GitReadOnly bool `json:"-"`
}

// Enforced says, piece by piece, what the kernel stops a confined command
// from doing. A piece the policy allows (the network, with
// --sandbox-network) is false: nothing stops it.
type Enforced struct {
	// Files: writing outside the writable directories (Landlock ABI 3).
	Files bool `json:"files"`
	// TCP: connecting, binding, listening and Fast Open (the network
	// filter, or Landlock ABI 4 for connect and bind alone).
	TCP bool `json:"tcp"`
	// UDP: sending or receiving datagrams, DNS included (the network
	// filter).
	UDP bool `json:"udp"`
	// Raw: raw and packet sockets, which root could use (the network
	// filter).
	Raw bool `json:"raw"`
	// Unix: connecting to a pathname UNIX socket made outside the sandbox,
	// such as Docker's (Landlock ABI 9). Abstract UNIX sockets are scoped
	// to the command from ABI 6.
	Unix bool `json:"unix"`
	// Processes: no process a tool started outlives awl.
	Processes bool `json:"processes"`
	// Proc: /proc shows only the sandbox's own processes, so no tool
	// reads another process's environment there.
	Proc bool `json:"proc"`
	// Git: the working directory's git directories (config, hooks,
	// .git/modules; a worktree's) cannot be written by tools, so nothing
	// planted there runs in a later git outside the sandbox: read-only,
	// or workspace-write where the namespaces make them read-only.
	Git bool `json:"git"`
}

// Full reports whether the kernel enforces the pieces the policy needs
// (the files, and with the network off, TCP, UDP and raw sockets) with
// the Landlock ABI the mode needs: when not, New fails without
// --sandbox-best-effort.
func (st Status) Full() bool {
	e := st.Enforced
	p := Policy{Mode: st.Mode, Network: st.Network}
	return p.Confined() && st.ABI >= p.NeedABI() && e.Files && (st.Network || e.TCP && e.UDP && e.Raw)
}

// UnsupportedError says the kernel cannot enforce the policy asked for.
type UnsupportedError struct {
	Mode    Mode
	Network bool
	ABI     int // the kernel's
	Need    int
}

func (e *UnsupportedError) Error() string {
	have := fmt.Sprintf("this kernel's Landlock ABI is %d", e.ABI)
	if e.ABI == 0 {
		have = "this kernel has no Landlock (ABI 0: " + missingReason() + ")"
	}
	what := "files"
	if !e.Network && e.Need >= ABINetwork {
		what = "files and the network (TCP connect and bind)"
	}
	return fmt.Sprintf("sandbox %s needs Landlock ABI %d or later to confine %s, and %s; "+
		"use --sandbox-best-effort to go on with what the kernel supports, or --sandbox off", e.Mode, e.Need, what, have)
}

// ExitCode is 4: a configuration the kernel cannot run.
func (e *UnsupportedError) ExitCode() int { return 4 }

// ExitReason is "sandbox_unavailable".
func (e *UnsupportedError) ExitReason() string { return "sandbox_unavailable" }

// enforced is what the kernel, with Landlock ABI abi, enforces of p.
func enforced(p Policy, abi int) Enforced {
	filter := abi > 0 && len(seccompArchs) > 0 && !p.Network
	return Enforced{
		Files: abi >= ABIFiles,
		TCP:   !p.Network && (abi >= ABINetwork || filter),
		UDP:   filter,
		Raw:   filter,
		Unix:  !p.Network && abi >= abiUnix,
	}
}

// abiUnix is the Landlock ABI that restricts connecting to pathname UNIX
// sockets.
const abiUnix = 9

// Sandbox confines tools to a Policy. Its methods make it a tool.Confiner.
type Sandbox struct {
	Policy
	status Status
	// rules is the Landlock ruleset commands are confined to; nil when
	// the kernel has no Landlock and commands run unconfined (best
	// effort).
	rules *ruleset
	// dirs are WritableDirs with symbolic links resolved.
	dirs []string
	// ownTmp says Close removes TmpDir.
	ownTmp bool
	// withNet is WithNetwork's sandbox, closed with this one.
	withNet *Sandbox
	// git watches the working directory's .git (GitChanges).
	git *gitWatch
	// readOnlyIDs are the identities of ns.readOnly, in order, taken
	// when the namespaces were made: CheckDir knows them by these.
	readOnlyIDs []dirID
	// ns is the init of the PID and mount namespaces commands run in;
	// nil where awl cannot make them. Shared with withNet.
	ns *nsInit
	// nsErr says why there is no ns.
	nsErr error
	// reap says awl is the child subreaper, where there is no ns: sweep
	// ends what the commands left at the end of the run.
	reap bool
	// cg is the cgroup commands start in, where there is no ns and awl
	// may make one (a delegated cgroup v2): it is killed whole with the
	// run, or with awl. Shared with withNet.
	cg *cgroup
	// procs are the processes Start started, which sweep leaves to
	// whoever waits for them. Shared with withNet.
	procs *startedSet
	// srv are the namespaces MCP servers run in, where there is an ns.
	// Shared with withNet.
	srv *serverNS
}

// serverNS is the init of the namespaces MCP servers run in, apart from
// the tools': a PID namespace of their own, whose processes the tools'
// /proc does not list, so that no tool reads a server's command line
// (its args). Made at the first server; where it cannot be, servers run
// in the tools' namespaces.
type serverNS struct {
	once sync.Once
	ns   *nsInit
}

// serversNS is the namespaces' init for MCP servers: s.ns's sibling, or
// s.ns itself where there can be none.
func (s *Sandbox) serversNS() *nsInit {
	if s.ns == nil || s.srv == nil {
		return s.ns
	}
	s.srv.once.Do(func() { s.srv.ns = s.ns.sibling() })
	if s.srv.ns == nil {
		return s.ns
	}
	return s.srv.ns
}

// startedSet is the set of the pids Start started.
type startedSet struct {
	mu   sync.Mutex
	pids map[int]bool
}

// started reports whether Start started pid.
func (s *Sandbox) started(pid int) bool {
	s.procs.mu.Lock()
	defer s.procs.mu.Unlock()
	return s.procs.pids[pid]
}

// Options configure New.
type Options struct {
	Mode     Mode
	Network  bool
	Cwd      string   // absolute
	Writable []string // absolute, existing directories
	// BestEffort goes on when the kernel cannot enforce the whole policy,
	// enforcing what it can; Status says what is missing.
	BestEffort bool
	// ABI is the kernel's Landlock ABI version to assume (tests): 0
	// detects it, a negative value means none.
	ABI int
}

// New makes a sandbox for o, creating its private temporary directory.
// With Mode Off it returns a nil *Sandbox and a Status that says so. When
// the kernel cannot enforce the policy and o.BestEffort is false, the error
// is an *UnsupportedError.
func New(o Options) (*Sandbox, Status, error) {
	abi := max(o.ABI, 0)
	if o.ABI == 0 {
		abi = ABI()
	}
	st := Status{Mode: o.Mode, Network: o.Network || o.Mode == Off, ABI: abi}
	if o.Mode == "" {
		st.Mode = Off
	}
	p := Policy{Mode: st.Mode, Network: o.Network, Cwd: filepath.Clean(o.Cwd)}
	if !p.Confined() {
		return nil, st, nil
	}
	for _, d := range o.Writable {
		p.Writable = append(p.Writable, filepath.Clean(d))
	}
	need := p.NeedABI()
	st.Enforced = enforced(p, abi)
	if abi < need {
		uerr := &UnsupportedError{Mode: p.Mode, Network: p.Network, ABI: abi, Need: need}
		if !o.BestEffort {
			return nil, st, uerr
		}
		switch {
		case abi == 0:
			st.Warning = "the sandbox is not enforced for commands: " + uerr.Error() + "; only the write and edit tools are checked"
		case abi < ABIFiles:
			st.Warning = fmt.Sprintf("the sandbox is enforced only in part: Landlock ABI %d cannot stop commands from truncating files outside the writable directories, nor confine the network", abi)
		default:
			st.Warning = fmt.Sprintf("the network is not confined: Landlock ABI %d cannot restrict TCP connect and bind (ABI %d can)", abi, ABINetwork)
		}
	}
	closeInherited()
	removeStaleTmp()
	tmp, err := os.MkdirTemp("", fmt.Sprintf("awl-sandbox-%d-", os.Getpid()))
	if err != nil {
		return nil, st, fmt.Errorf("sandbox: create the private temporary directory: %w", err)
	}
	p.TmpDir = tmp
	s := &Sandbox{Policy: p, status: st, ownTmp: true, procs: &startedSet{pids: map[int]bool{}}}
	for _, d := range p.WritableDirs() {
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			s.Close()
			return nil, st, fmt.Errorf("sandbox: writable directory %s: %w", d, err)
		}
		s.dirs = append(s.dirs, r)
	}
	if abi > 0 {
		if s.rules, err = newRuleset(p); err != nil {
			s.Close()
			return nil, st, fmt.Errorf("sandbox: %w", err)
		}
		s.namespaces()
		if s.ns == nil {
			s.reap = becomeSubreaper()
			if s.cg = newCgroup(); s.cg != nil {
				s.status.Enforced.Processes = true
			}
		}
	}
	s.status.Enforced.Git = s.status.Enforced.Files && (s.status.GitReadOnly || p.Mode == ReadOnly && !gitWritable(p)) &&
		len(missingTrusted(p)) == 0
	st = s.status
	s.watchGit()
	return s, st, nil
}

// namespaces gives s the PID and mount namespaces commands run in, where
// awl can make them: as root, joined by the thread that starts commands;
// otherwise in a user namespace. Either way their init starts now, so
// that the status says what it did (a fresh /proc, .git read-only), and
// a root whose mounts are refused (a seccomp profile or AppArmor that
// refuses mount to a root with CAP_SYS_ADMIN) confines its commands
// without namespaces instead of failing every one. Where there can be
// none, s.nsErr says why.
func (s *Sandbox) namespaces() {
	readOnly := gitDirs(s.Policy)
	var ns *nsInit
	var err error
	switch {
	case noNamespaces:
		return
	case namespacesAvailable():
		ns = &nsInit{readOnly: readOnly}
	default:
		ns, err = userNamespaces(readOnly)
		if err == nil {
			err = ns.mapsOwners(s.dirs)
		}
	}
	if err == nil {
		err = ns.start()
	}
	if err != nil {
		s.nsErr = err
		return
	}
	s.ns = ns
	s.srv = &serverNS{}
	s.status.Enforced.Processes, s.status.Enforced.Proc = true, ns.procMounted
	s.status.GitReadOnly = len(readOnly) > 0 && ns.allReadOnly()
	s.readOnlyIDs = dirIDs(readOnly)
}

// ProcessWarning says, when the sandbox cannot end every process a
// command started should awl be SIGKILLed (not root, and no cgroup v2 awl
// may write), what does hold: "" when processes are enforced, or commands
// are not confined at all (Status.Warning says so then).
func (s *Sandbox) ProcessWarning() string {
	if s == nil || s.rules == nil || s.status.Enforced.Processes {
		return ""
	}
	if s.reap {
		return "--sandbox: a process a command detaches (setsid, a double fork) is ended when the run ends, but outlives awl if awl is SIGKILLed: " +
			"that takes a PID namespace (" + s.namespacesMissing() + ") or a cgroup v2 awl may write (a delegated one, as systemd gives a user's session)"
	}
	return "--sandbox: a process a command detaches (setsid, a double fork) can outlive awl: awl cannot be a child subreaper here"
}

// NamespaceWarning says, when awl runs as root but confines commands
// without PID and mount namespaces (Docker's default seccomp profile
// refuses a root without CAP_SYS_ADMIN a user namespace; a profile
// refuses a root with it mounts; a user namespace that could map root
// alone, and a workspace of another owner's), why, and what /proc then
// shows:
// "" otherwise. GitWarning and ProcessWarning say what it means for .git
// and for detached processes.
func (s *Sandbox) NamespaceWarning() string {
	if s == nil || s.rules == nil || s.ns != nil || s.nsErr == nil || os.Geteuid() != 0 {
		return ""
	}
	return "--sandbox: commands run without PID and mount namespaces (" + s.nsErr.Error() + "): " +
		"their /proc lists every process of the machine with its command line (enforced.proc false)"
}

// namespacesMissing says why awl made no namespaces: what they take, and
// what was missing here.
func (s *Sandbox) namespacesMissing() string {
	if s.nsErr == nil {
		return "root, or user namespaces"
	}
	return "root, or user namespaces, and here " + s.nsErr.Error()
}

// WithNetwork returns a sandbox with the same files policy and the same
// private temporary directory as s, whose commands may use the network.
// It is s itself when s allows the network already. s.Close closes it.
func (s *Sandbox) WithNetwork() (*Sandbox, error) {
	if s.Network {
		return s, nil
	}
	if s.withNet != nil {
		return s.withNet, nil
	}
	n := &Sandbox{Policy: s.Policy, status: s.status, dirs: s.dirs, ns: s.ns, readOnlyIDs: s.readOnlyIDs, reap: s.reap, cg: s.cg, procs: s.procs, git: s.git, srv: s.srv}
	n.Network = true
	n.status.Network = true
	if s.rules != nil {
		var err error
		if n.rules, err = newRuleset(n.Policy); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	s.withNet = n
	return n, nil
}

// Status reports the sandbox for the session event.
func (s *Sandbox) Status() Status { return s.status }

// removeStaleTmp removes the private temporary directories of sandboxes
// whose awl is gone without removing its own (killed with SIGKILL, say):
// a directory is named awl-sandbox-PID-RANDOM after the awl that made it.
func removeStaleTmp() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "awl-sandbox-*-*"))
	for _, d := range dirs {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), "awl-sandbox-"), "-")
		if pid, err := strconv.Atoi(pidText); err == nil && pid > 0 && !processAlive(pid) {
			os.RemoveAll(d)
		}
	}
}

// Close releases the ruleset and removes the private temporary directory
// and everything in it (unless s came from WithNetwork).
func (s *Sandbox) Close() error {
	if s == nil {
		return nil
	}
	if s.rules != nil {
		s.rules.close()
		s.rules = nil
	}
	if s.withNet != nil {
		s.withNet.Close()
		s.withNet = nil
	}
	if !s.ownTmp {
		return nil
	}
	s.ownTmp = false
	s.cg.close()
	s.sweep()
	if s.ns != nil {
		s.ns.close()
	}
	if s.srv != nil && s.srv.ns != nil {
		s.srv.ns.close()
	}
	return os.RemoveAll(s.TmpDir)
}

// Start starts cmd, as cmd.Start does, confined: its environment gets
// TMPDIR set to the private temporary directory, and, where the kernel has
// Landlock, it is started from a thread confined to the policy. cmd.Env
// nil means awl's environment.
//
// The parent-death signal of a confined command (SysProcAttr.Pdeathsig)
// fires when awl dies, as for one started by cmd.Start from a thread that
// outlives it: the thread that started it lives until the sandbox is
// closed and every process it started has exited (a goroutine waits for
// each, without reaping it, so cmd.Wait works as usual).
func (s *Sandbox) Start(cmd *exec.Cmd) error { return s.start(cmd, false) }

// Servers is a Sandbox for MCP servers (a tool.Confiner): what it starts
// is confined as the Sandbox's commands are, in a Landlock domain apart
// from the tools', so that no tool reads a server's environment (the
// ${VAR} values its configuration gave it) or memory, attaches to it or,
// from Landlock ABI 6, signals it.
type Servers struct{ s *Sandbox }

// ForServers is s for MCP servers; nil when s is.
func (s *Sandbox) ForServers() *Servers {
	if s == nil {
		return nil
	}
	return &Servers{s}
}

// Start starts an MCP server as Sandbox.Start starts a command, in the
// servers' Landlock domain.
func (v *Servers) Start(cmd *exec.Cmd) error { return v.s.start(cmd, true) }

// CheckWrite is the Sandbox's.
func (v *Servers) CheckWrite(path string) error { return v.s.CheckWrite(path) }

// Note is the Sandbox's.
func (v *Servers) Note() string { return v.s.Note() }

func (s *Sandbox) start(cmd *exec.Cmd, server bool) error {
	if cmd.Err != nil {
		return cmd.Err
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") })
	cmd.Env = append(env, "TMPDIR="+s.TmpDir)
	if s.rules == nil {
		return cmd.Start()
	}
	procs := s.cg.into(cmd)
	var after func()
	if s.git != nil {
		after = s.lookGit
		s.git.ran()
	}
	ns := s.ns
	if server {
		ns = s.serversNS()
	}
	if err := s.rules.start(cmd, ns, after, server, procs); err != nil {
		return err
	}
	s.procs.mu.Lock()
	s.procs.pids[cmd.Process.Pid] = true
	s.procs.mu.Unlock()
	return nil
}

// noNamespaces makes New leave out the PID and mount namespaces even
// where awl could make them, as for a user who is not root (tests).
var noNamespaces bool

// WriteRoots are the writable directories, symbolic links resolved: the
// write and edit tools open a file's directory beneath one of them and
// write through that descriptor (tool.WriteRooter).
func (s *Sandbox) WriteRoots() []string { return s.dirs }

// CheckWrite returns nil when a confined tool may write path (absolute),
// or else a *DeniedError. A path is writable when it lies under a writable
// directory once symbolic links are resolved, as far as it exists, a
// dangling link included: the place it points to is what a write creates;
// and not in a git directory the namespaces made read-only to commands.
func (s *Sandbox) CheckWrite(path string) error {
	r := resolveExisting(filepath.Clean(path))
	if s.status.GitReadOnly && s.ns != nil {
		// What commands cannot write, the write and edit tools may not.
		for _, d := range s.ns.readOnly {
			if within(r, d) {
				return s.readOnlyDenied(path, d)
			}
		}
	}
	for _, d := range s.dirs {
		if within(r, d) {
			return nil
		}
	}
	return &DeniedError{Path: path, Note: s.Note()}
}

// readOnlyDenied is the refusal of a write of path in the read-only
// directory d.
func (s *Sandbox) readOnlyDenied(path, d string) *DeniedError {
	return &DeniedError{Path: path, Note: fmt.Sprintf("(awl sandbox: %s; %s is read-only)", s.Mode, d)}
}

// dirID is a directory's identity: its device and inode.
type dirID struct{ dev, ino uint64 }

// CheckDir returns nil when a confined tool may create and rename files
// in dir, a directory the write or edit tool opened beneath a writable
// directory (tool.DirChecker), or else a *DeniedError as CheckWrite's:
// dir must not be, nor lie in, a git directory the namespaces made
// read-only to commands. It is judged by the identities of dir and of the
// directories above it, not by a path: a link CheckWrite followed may
// have been swapped since (`sub -> .`, then `sub -> .git`), and the
// working directory renamed where its parent is writable, taking .git
// along to a path CheckWrite does not know.
func (s *Sandbox) CheckDir(dir *os.File) error {
	if !s.status.GitReadOnly || s.ns == nil || len(s.readOnlyIDs) == 0 {
		return nil
	}
	i, err := ancestorIn(dir, s.readOnlyIDs)
	switch {
	case err != nil:
		// Where it is cannot be told: refuse it, as a command would be.
		return &DeniedError{Path: dir.Name(), Note: fmt.Sprintf("(awl sandbox: %s; whether the directory is in a read-only git directory cannot be told: %v)", s.Mode, err)}
	case i >= 0:
		return s.readOnlyDenied(dir.Name(), s.ns.readOnly[i])
	}
	return nil
}

// DeniedError is a write CheckWrite refused. Its message leaves out the
// path, which the caller names as its user wrote it: "Permission denied"
// as a command would say, then the sandbox's Note on a line of its own.
type DeniedError struct {
	Path string
	Note string
}

func (e *DeniedError) Error() string {
	return "Permission denied\n" + e.Note
}

// Unwrap makes a DeniedError an fs.ErrPermission.
func (e *DeniedError) Unwrap() error { return fs.ErrPermission }

// resolveExisting resolves the symbolic links of the longest existing
// prefix of path and appends the rest unchanged. A dangling link is
// followed to where it points.
func resolveExisting(path string) string {
	rest := ""
	links := 0
	for p := path; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
			// A loop or a component that is not a directory: writing
			// there fails anyway; judge the path as given.
			return path
		}
		if dest, err := os.Readlink(p); err == nil && links < 40 {
			// A dangling link: what is written is where it points.
			links++
			if !filepath.IsAbs(dest) {
				dest = filepath.Join(filepath.Dir(p), dest)
			}
			p = filepath.Clean(dest)
			continue
		}
		parent := filepath.Dir(p)
		if parent == p {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// within reports whether path is dir or lies under it.
func within(path, dir string) bool {
	if path == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(path, dir)
}
