package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
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

// FS is how Find and Read reach the file system; tests count what they
// do through it.
type FS struct {
	Stat func(string) (fs.FileInfo, error)
	Open func(string) (*os.File, error)
}

// OS is the file system itself.
var OS = FS{Stat: os.Stat, Open: os.Open}

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

// Find says which files to read, lowest first: named alone when it is not
// ""; else the user file, when there is one, and the nearest
// .awl/config.toml from dir up to the repository's root (the directory
// holding .git) or /. It stats one file per directory walked, and .git in
// each it does not find one: it reads nothing.
func Find(fsys FS, dir, named, user string) ([]Loc, error) {
	if named != "" {
		abs, err := filepath.Abs(named)
		if err != nil {
			return nil, err
		}
		return []Loc{{Path: abs, Role: Named, Base: filepath.Dir(abs)}}, nil
	}
	var out []Loc
	if user != "" {
		if ok, err := exists(fsys, user); err != nil {
			return nil, err
		} else if ok {
			out = append(out, Loc{Path: user, Role: User, Base: filepath.Dir(user)})
		}
	}
	d, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for {
		p := filepath.Join(d, ".awl", "config.toml")
		ok, err := exists(fsys, p)
		if err != nil {
			return nil, err
		}
		if ok {
			return append(out, Loc{Path: p, Role: Project, Base: d}), nil
		}
		if _, err := fsys.Stat(filepath.Join(d, ".git")); err == nil {
			return out, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return out, nil
		}
		d = parent
	}
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
	fail := func(err error) error {
		return &Error{Code: 2, Lines: []string{fmt.Sprintf("%s: %v", l.Path, unwrapPath(err))}}
	}
	f, err := fsys.Open(l.Path)
	if err != nil {
		return nil, fail(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fail(err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fail(errors.New("not a regular file"))
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fail(err)
	}
	if len(data) > MaxSize {
		return nil, fail(fmt.Errorf("larger than %d bytes", MaxSize))
	}
	return Parse(l.Path, data, l.Role, l.Base, schema)
}

// unwrapPath is a *fs.PathError's cause: the path is said already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
