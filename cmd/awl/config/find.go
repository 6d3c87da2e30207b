package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/awlrun/awl/internal/rawfile"
)

// Loc is a file to read.
type Loc struct {
	Path string
	Role Role
	// Base is the directory a relative path in the file is taken from:
	// the directory holding .awl for a project file, the file's own
	// directory otherwise.
	Base string
}

// FS is how Look, Find and Read reach the file system; tests count what
// they do through it.
type FS struct {
	Stat func(string) (fs.FileInfo, error)
	// Lstat is Stat of a symbolic link itself: whose the link is.
	Lstat func(string) (fs.FileInfo, error)
	// Read reads a configuration file whole, refusing what is not a
	// regular file (rawfile.ErrNotRegular) or is larger than MaxSize
	// (rawfile.ErrTooLarge).
	Read func(string) ([]byte, error)
}

// OS is the file system itself. A file is read with four system calls
// (rawfile), not os.Open's nine.
var OS = FS{Stat: os.Stat, Lstat: os.Lstat, Read: func(p string) ([]byte, error) { return rawfile.ReadFile(p, MaxSize) }}

// UserFile is where the user's file is: $XDG_CONFIG_HOME/awl/config.toml,
// or ~/.config/awl/config.toml when XDG_CONFIG_HOME is unset or not
// absolute; "" when neither can be said.
func UserFile(getenv func(string) string) string {
	if d := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "awl", "config.toml")
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".config", "awl", "config.toml")
	}
	return ""
}

// Tree is what a run finds of the files awl looks for, the configuration
// files and the skills alike, by a stat of each name it looks for in each
// directory it looks in.
type Tree struct {
	// Start is the run's directory, absolute.
	Start string
	// User is the user's file ("" when none can be said); UserConfig and
	// UserSkills tell whether its directory holds config.toml and skills.
	User                   string
	UserConfig, UserSkills bool
	// Levels are the directories from Start up to the repository's root
	// (the nearest holding .git) or /, nearest first.
	Levels []Level
	// Foreign are the .awl, .agents and .claude the walk found that
	// another user owns (not the one awl runs as, nor root, nor the owner
	// of the run's directory), which it takes as not there: a /tmp/.awl
	// above a run in /tmp/job is anyone's to write. Each is "path (uid N)".
	Foreign []string
}

// Level is one directory walked and which of the names awl looks for it
// holds: .awl (the project file's), .git (the repository's root), .agents
// and .claude (the project's skills).
type Level struct {
	Dir                      string
	Awl, Git, Agents, Claude bool
}

// walkNames are the names Look looks for in each directory it walks.
var walkNames = []string{".awl", ".git", ".agents", ".claude"}

// Look looks in the user's directory (for config.toml and skills) and in
// each directory from dir up to the repository's root or / (for .awl,
// .git, .agents and .claude): one stat a name. It reads no file.
func Look(fsys FS, dir, user string) (*Tree, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	t := &Tree{Start: d, User: user}
	if user != "" {
		has := look(fsys, filepath.Dir(user), []string{filepath.Base(user), "skills"}, nil, nil)
		t.UserConfig, t.UserSkills = has[0], has[1]
	}
	own := &owners{fsys: fsys, start: d}
	for {
		has := look(fsys, d, walkNames, own, &t.Foreign)
		l := Level{Dir: d, Awl: has[0], Git: has[1], Agents: has[2], Claude: has[3]}
		t.Levels = append(t.Levels, l)
		parent := filepath.Dir(d)
		if l.Git || parent == d {
			return t, nil
		}
		d = parent
	}
}

// look tells which of names dir holds, by a stat of each: a cost that
// does not grow with the directory. A listing would be one system call
// for a small directory, but it reads every entry: 464 µs for a /tmp of
// 818 entries against 10 µs for four stats, and 15–23 µs against 5 µs for
// a directory of 13–26 (os.ReadDir, 2026-12-07). A run's walk passes
// through such directories (/tmp, a home, a monorepo's root).
//
// When own is not nil, a name found that another user owns (own.trusts)
// is taken as not there and added to foreign; .git is taken as it is, as
// the end of the walk. A name is owned by whoever owns it and, when it is
// a symbolic link, by whoever owns the link too: /tmp/.awl -> /tmp, a
// link anyone may make, names a directory root owns that anyone may write
// a config.toml in. Only what is found is asked about: a walk that finds
// nothing makes no other system call.
func look(fsys FS, dir string, names []string, own *owners, foreign *[]string) []bool {
	has := make([]bool, len(names))
	for i, n := range names {
		p := filepath.Join(dir, n)
		fi, err := fsys.Stat(p)
		has[i] = err == nil
		if has[i] && own != nil && n != ".git" {
			if uid, not := own.foreign(p, fi); not {
				has[i] = false
				*foreign = append(*foreign, fmt.Sprintf("%s (uid %d)", p, uid))
			}
		}
	}
	return has
}

// owners says whose .awl, .agents and .claude a walk reads: the user awl
// runs as, root, and whoever owns the run's directory. The last is a
// checkout's owner where CI runs awl as another user: a GitHub Actions
// container: job is root in a checkout uid 1001 owns, so its project
// files are 1001's. That owner could put a .awl in the run's directory
// itself, so reading theirs higher up gives them nothing more; a /tmp/.awl
// planted above a run in /tmp/job by a third user is still not read.
type owners struct {
	fsys  FS
	start string
	// startUID is the run directory's owner, -1 once no owner can be said;
	// asked for only when a name another user owns is found.
	startUID int
	asked    bool
}

// foreign tells whether p, which fi (its stat) describes, is another
// user's: what it names, or the symbolic link p is (by a second stat, of
// the link, only for a name whose target is trusted); uid is whose.
func (o *owners) foreign(p string, fi fs.FileInfo) (uid int, foreign bool) {
	uid, ok := ownerUID(fi)
	if !ok {
		return 0, false
	}
	if !o.trusts(uid) {
		return uid, true
	}
	li, err := o.fsys.Lstat(p)
	if err != nil {
		return uid, true // gone or replaced since the stat: whose it is cannot be said
	}
	if li.Mode()&fs.ModeSymlink == 0 {
		return uid, false
	}
	uid, ok = ownerUID(li)
	return uid, ok && !o.trusts(uid)
}

func (o *owners) trusts(uid int) bool {
	if uid == 0 || uid == os.Geteuid() {
		return true
	}
	if !o.asked {
		o.asked, o.startUID = true, -1
		if fi, err := o.fsys.Stat(o.start); err == nil {
			if u, ok := ownerUID(fi); ok {
				o.startUID = u
			}
		}
	}
	return uid == o.startUID
}

// Find says which files to read, lowest first: named alone when it is not
// ""; else the user file, when there is one, and the nearest
// .awl/config.toml of t's directories. It stats only a config.toml whose
// directory holds one, to refuse what is not a regular file: it reads
// nothing.
func Find(fsys FS, t *Tree, named string) ([]Loc, error) {
	if named != "" {
		abs, err := filepath.Abs(named)
		if err != nil {
			return nil, err
		}
		return []Loc{{Path: abs, Role: Named, Base: filepath.Dir(abs)}}, nil
	}
	var out []Loc
	if t.UserConfig {
		if ok, err := exists(fsys, t.User); err != nil {
			return nil, err
		} else if ok {
			out = append(out, Loc{Path: t.User, Role: User, Base: filepath.Dir(t.User)})
		}
	}
	for _, l := range t.Levels {
		if !l.Awl {
			continue
		}
		p := filepath.Join(l.Dir, ".awl", "config.toml")
		ok, err := exists(fsys, p)
		if err != nil {
			return nil, err
		}
		if ok {
			return append(out, Loc{Path: p, Role: Project, Base: l.Dir}), nil
		}
	}
	return out, nil
}

// exists tells whether a configuration file is at p. Something there that
// is not a regular file (a directory, a FIFO that would hold the run) is
// an error.
func exists(fsys FS, p string) (bool, error) {
	fi, err := fsys.Stat(p)
	switch {
	// A directory awl may not search, or a .awl that is a file, holds
	// no configuration for it.
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOTDIR):
		return false, nil
	case err != nil:
		return false, &Error{Code: 2, Lines: []string{fmt.Sprintf("%s: %v", p, unwrapPath(err))}}
	case !fi.Mode().IsRegular():
		return false, &Error{Code: 2, Lines: []string{fmt.Sprintf("%s: not a regular file", p)}}
	}
	return true, nil
}

// MaxSize is the largest configuration file awl reads.
const MaxSize = 1 << 20

// Read reads and parses the file at l.
func Read(fsys FS, l Loc, schema Schema) (*File, error) {
	data, err := fsys.Read(l.Path)
	if l.Role == Named && errors.Is(err, rawfile.ErrNotRegular) {
		// A pipe's directory (/dev/fd) is no place for the file's
		// relative paths: they are taken from where awl was started,
		// as the shell that made the pipe takes them.
		if data, err = readPipe(l.Path); err == nil {
			if wd, werr := os.Getwd(); werr == nil {
				l.Base = wd
			}
		}
	}
	if errors.Is(err, rawfile.ErrTooLarge) {
		err = fmt.Errorf("larger than %d bytes", MaxSize)
	}
	if err != nil {
		return nil, &Error{Code: 2, Lines: []string{fmt.Sprintf("%s: %v", l.Path, unwrapPath(err))}}
	}
	return Parse(l.Path, data, l.Role, l.Base, schema)
}

// readPipe reads the file --config or AWL_CONFIG names when it is a pipe:
// --config <(envsubst < awl.toml.in) is the workflow's own file, made as
// the job runs. It waits for the writer, as cat would; a FIFO found in a
// project is never read (Find refuses it), nor a directory or a device
// named here.
func readPipe(p string) ([]byte, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeNamedPipe == 0 {
		return nil, rawfile.ErrNotRegular
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err == nil && len(data) > MaxSize {
		err = rawfile.ErrTooLarge
	}
	return data, err
}

// unwrapPath is a *fs.PathError's cause: the path is said already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
