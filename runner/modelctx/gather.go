package modelctx

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Options for Gather. Getenv, Now and Localtime are injected so tests pin
// them.
type Options struct {
	// Cwd is the working directory; it must be absolute.
	Cwd string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Now is the clock; nil means time.Now. Its location is the local time
	// zone.
	Now func() time.Time
	// Localtime is the zoneinfo link that names the local time zone when
	// Now's location is time.Local and $TZ is unset; "" means
	// /etc/localtime.
	Localtime string

	System       string
	AppendSystem string
	Tools        []string
	// AllowRules and DenyRules are State's.
	AllowRules, DenyRules []string
	OutputSchema          string
	Sandbox               Sandbox
	MCP                   []MCPServer
	Skills                []Skill
	NoEnv                 bool
	NoAgentsMD            bool
}

// agentsFile is the name of an instruction file.
const agentsFile = "AGENTS.md"

// Gather builds the current State. It finds every AGENTS.md from the git
// repository root (the nearest directory at or above Cwd that holds a .git
// file or directory) down to Cwd, or only Cwd's own outside a repository,
// after the user-level $XDG_CONFIG_HOME/awl/AGENTS.md (~/.config when
// unset). Files that are missing or blank are skipped. Shell is $SHELL's
// base name (bash when unset); Date and Timezone come from Now() in its
// location.
func Gather(o Options) (State, error) {
	if !filepath.IsAbs(o.Cwd) {
		return State{}, fmt.Errorf("gather context: working directory %q is not absolute", o.Cwd)
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	t := now()
	cwd := filepath.Clean(o.Cwd)
	s := State{
		Cwd:          cwd,
		Shell:        shellName(getenv("SHELL")),
		Date:         t.Format("2006-01-02"),
		Timezone:     timezone(t, getenv, o.Localtime),
		System:       o.System,
		AppendSystem: o.AppendSystem,
		Tools:        append([]string(nil), o.Tools...),
		AllowRules:   append([]string(nil), o.AllowRules...),
		DenyRules:    append([]string(nil), o.DenyRules...),
		OutputSchema: o.OutputSchema,
		Sandbox:      o.Sandbox,
		MCP:          o.MCP,
		Skills:       o.Skills,
		NoEnv:        o.NoEnv,
		NoAgentsMD:   o.NoAgentsMD,
	}
	if o.NoAgentsMD {
		return s, nil
	}
	var paths []string
	if dir := userConfigDir(getenv); dir != "" {
		paths = append(paths, filepath.Join(dir, "awl", agentsFile))
	}
	dirs, err := instructionDirs(cwd)
	if err != nil {
		return State{}, err
	}
	for _, d := range dirs {
		paths = append(paths, filepath.Join(d, agentsFile))
	}
	seen := make(map[string]bool, len(paths))
	for i, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		data, err := readRegular(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return State{}, fmt.Errorf("gather context: read %s: %w", p, err)
		}
		if strings.TrimSpace(string(data)) == "" {
			continue
		}
		user := i == 0 && len(paths) > len(dirs)
		s.AgentsMD = append(s.AgentsMD, Source{Path: p, Content: string(data), User: user})
	}
	return s, nil
}

// instructionDirs returns the directories whose AGENTS.md apply to cwd: the
// repository root down to cwd, or cwd alone outside a repository. A .git
// another user owns (not awl's user, nor root, nor cwd's owner) is no
// repository's root: anyone may make /tmp/.git, and a run in /tmp/job
// would then read the /tmp/AGENTS.md they wrote, as the configuration
// walk does not read their /tmp/.awl (docs/config.md).
func instructionDirs(cwd string) ([]string, error) {
	var up []string // cwd first
	cwdOwner := -2  // not asked yet
	for d := cwd; ; d = filepath.Dir(d) {
		up = append(up, d)
		fi, err := os.Lstat(filepath.Join(d, ".git"))
		if err == nil && !foreignGit(fi, cwd, &cwdOwner) {
			break
		}
		if err == nil {
			err = fs.ErrNotExist // taken as not there
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("gather context: look for a repository: %w", err)
		}
		if filepath.Dir(d) == d {
			return []string{cwd}, nil
		}
	}
	dirs := make([]string, len(up))
	for i, d := range up {
		dirs[len(up)-1-i] = d
	}
	return dirs, nil
}

// foreignGit tells whether the .git fi describes is another user's: not
// the one awl runs as, nor root, nor cwd's owner (asked once, into
// cwdOwner, and only for a .git another user owns).
func foreignGit(fi fs.FileInfo, cwd string, cwdOwner *int) bool {
	uid, ok := ownerOf(fi)
	if !ok || uid == 0 || uid == os.Geteuid() {
		return false
	}
	if *cwdOwner == -2 {
		*cwdOwner = -1
		if ci, err := os.Stat(cwd); err == nil {
			if u, ok := ownerOf(ci); ok {
				*cwdOwner = u
			}
		}
	}
	return uid != *cwdOwner
}

// userConfigDir returns $XDG_CONFIG_HOME, else $HOME/.config, else "". A
// relative XDG_CONFIG_HOME is ignored, as the XDG spec requires.
func userConfigDir(getenv func(string) string) string {
	if d := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return d
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".config")
	}
	return ""
}

// shellName returns the base name of $SHELL, or bash.
func shellName(shell string) string {
	if shell == "" {
		return "bash"
	}
	return filepath.Base(shell)
}

// timezone names t's location: its IANA name when it has one; for
// time.Local, $TZ or the target of the zoneinfo link; else the UTC offset.
func timezone(t time.Time, getenv func(string) string, localtime string) string {
	name := t.Location().String()
	if t.Location() == time.Local {
		name = localName(getenv, localtime)
	}
	if name == "" || name == "Local" {
		return t.Format("-07:00")
	}
	return name
}

// localName returns the IANA name of the local zone from $TZ or the
// zoneinfo link, or "" when neither names one.
func localName(getenv func(string) string, localtime string) string {
	if tz := strings.TrimPrefix(getenv("TZ"), ":"); tz != "" {
		if !filepath.IsAbs(tz) {
			return tz
		}
		if _, name, ok := strings.Cut(tz, "zoneinfo/"); ok {
			return name
		}
	}
	if localtime == "" {
		localtime = "/etc/localtime"
	}
	target, err := os.Readlink(localtime)
	if err != nil {
		return ""
	}
	if _, name, ok := strings.Cut(target, "zoneinfo/"); ok {
		return name
	}
	return ""
}

// readRegular reads the regular file at p. Anything else is an error: a
// FIFO named AGENTS.md in a repository would otherwise hold the run
// forever, opening it waiting for a writer that never comes (O_NONBLOCK
// makes the open return at once).
func readRegular(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	return io.ReadAll(f)
}
