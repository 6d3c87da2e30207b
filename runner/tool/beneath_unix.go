//go:build unix

package tool

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/awlrun/awl/internal/atomicfile"
)

// errOutside is a write whose target, symbolic links followed, is not
// beneath any writable root.
var errOutside = errors.New("outside the writable directories")

// writeBeneath gives file the content data as replaceFile does, but only
// beneath one of roots (absolute, symbolic links resolved): the directory
// that receives the file is opened beneath a root, without following a
// link out of it, and the temporary file and the rename happen through
// that one directory descriptor. A symbolic link in the file's place is
// followed, a dangling one included, and its target must lie beneath a
// root too. Whatever a confined process swaps in between (a link for a
// directory, a directory for a link), the write lands beneath a root or
// fails. guard, when not nil, is called with every directory opened on
// the way, before a directory is made in it and before the file is
// written in it, and may refuse the write (a directory that is, or lies
// in, a read-only .git, whatever path led there). check, when not nil, is
// called with the open directory, the file's name in it, its mode and
// whether it exists, and may refuse the write. With mkdir, missing parent directories
// are created, beneath the root too.
func writeBeneath(roots []string, guard func(dir *os.File) error, file string, data []byte, mkdir bool, check func(dir *os.File, name string, mode fs.FileMode, exists bool) error) error {
	for range maxLinks {
		root, rel, ok := beneathRoot(roots, file)
		if !ok {
			return errOutside
		}
		dir, err := openDirBeneath(root, filepath.Dir(rel), mkdir, guard)
		if err != nil {
			return err
		}
		name := filepath.Base(rel)
		var st unix.Stat_t
		err = unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK:
			dest, err := readlinkat(dir, name)
			dir.Close()
			if err != nil {
				return err
			}
			if !filepath.IsAbs(dest) {
				dest = filepath.Join(root, filepath.Dir(rel), dest)
			}
			file = filepath.Clean(dest)
			continue
		case err == nil:
			if check != nil {
				err = check(dir, name, unixMode(uint32(st.Mode)), true)
			}
			if err == nil {
				err = replaceIn(dir, name, data, &st)
			}
		case errors.Is(err, unix.ENOENT):
			if check != nil {
				err = check(dir, name, 0, false)
			}
			if err == nil {
				err = replaceIn(dir, name, data, nil)
			}
		default:
			err = &fs.PathError{Op: "stat", Path: file, Err: err}
		}
		dir.Close()
		return err
	}
	return &fs.PathError{Op: "open", Path: file, Err: unix.ELOOP}
}

// beneathRoot finds the root file lies beneath once the symbolic links of
// its directory are resolved as far as it exists, and file's path relative
// to it. The resolution is only a guide: openDirBeneath checks it again.
func beneathRoot(roots []string, file string) (root, rel string, ok bool) {
	dir := resolveExistingDir(filepath.Dir(file))
	p := filepath.Join(dir, filepath.Base(file))
	for _, r := range roots {
		if rel, err := filepath.Rel(r, p); err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return r, rel, true
		}
	}
	return "", "", false
}

// resolveExistingDir resolves the symbolic links of the longest existing
// prefix of path and appends the rest unchanged.
func resolveExistingDir(path string) string {
	rest := ""
	for p := path; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// openDirBeneath opens the directory rel (relative, "." for root itself)
// beneath root, refusing any path that leaves root, through a symbolic link
// or otherwise; with mkdir it creates the missing directories, each in the
// directory opened before it. Each directory it opens passes guard (when
// not nil) before a directory is made in it or it is returned.
//
// What guard is shown stays what it is: a confined process may rename the
// directory, or one above it, within the directories it may write, but
// not into a read-only bind mount (.git in the commands' mount namespace),
// since a rename never crosses a mount (EXDEV) and a read-only one takes
// no new entry (EROFS); and no process outside the sandbox is one a
// model drives.
func openDirBeneath(root, rel string, mkdir bool, guard func(dir *os.File) error) (*os.File, error) {
	rootDir, err := os.Open(root)
	if err != nil {
		return nil, err
	}
	defer rootDir.Close()
	open := func(rel string) (*os.File, error) {
		d, err := openAtBeneath(rootDir, rel)
		if err == nil && guard != nil {
			if err = guard(d); err != nil {
				d.Close()
				return nil, err
			}
		}
		return d, err
	}
	d, err := open(rel)
	if err == nil || !mkdir || !errors.Is(err, fs.ErrNotExist) {
		return d, err
	}
	if guard != nil {
		if err := guard(rootDir); err != nil {
			return nil, err
		}
	}
	// Create the missing directories one by one, each in the directory
	// opened (beneath root) before it.
	parent, prefix := rootDir, "."
	for _, comp := range strings.Split(rel, string(filepath.Separator)) {
		prefix = filepath.Join(prefix, comp)
		d, err := open(prefix)
		if errors.Is(err, fs.ErrNotExist) {
			if err = unix.Mkdirat(int(parent.Fd()), comp, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				d, err = open(prefix)
			} else {
				err = &fs.PathError{Op: "mkdir", Path: filepath.Join(root, prefix), Err: err}
			}
		}
		if parent != rootDir {
			parent.Close()
		}
		if err != nil {
			return nil, err
		}
		parent = d
	}
	return parent, nil
}

// openWalkBeneath opens the directory rel beneath dir one component at a
// time, following no symbolic link: a link on the way is an error (the
// caller resolved the path first; a link there now was swapped in).
func openWalkBeneath(dir *os.File, rel string) (*os.File, error) {
	fd, err := unix.Dup(int(dir.Fd()))
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	if rel != "." {
		for _, comp := range strings.Split(rel, string(filepath.Separator)) {
			if comp == ".." {
				unix.Close(fd)
				return nil, &fs.PathError{Op: "open", Path: rel, Err: errOutside}
			}
			next, err := unix.Openat(fd, comp, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			unix.Close(fd)
			if err != nil {
				if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
					err = errOutside
				}
				return nil, &fs.PathError{Op: "open", Path: rel, Err: err}
			}
			fd = next
		}
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir.Name(), rel)), nil
}

// readlinkat reads the symbolic link name in dir.
func readlinkat(dir *os.File, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(int(dir.Fd()), name, buf)
		if err != nil {
			return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// unixMode converts a stat mode to an fs.FileMode.
func unixMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	return mode
}

// replaceIn writes data to a new temporary file in dir, fsyncs it and
// renames it over name in dir, all through dir's descriptor. st, the
// file's stat (taken through dir) when it exists, gives the new file its
// permission bits and, where the process may set them, its owner.
func replaceIn(dir *os.File, name string, data []byte, st *unix.Stat_t) error {
	return atomicfile.ReplaceAt(dir, name, 0o644, func(f *os.File) error {
		if st != nil {
			// Owner first: a chown by a non-root process clears set-id bits.
			_ = f.Chown(int(st.Uid), int(st.Gid))
			if err := f.Chmod(unixMode(uint32(st.Mode)) & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
				return err
			}
		}
		_, err := f.Write(data)
		return err
	})
}
