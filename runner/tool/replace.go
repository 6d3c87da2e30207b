package tool

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/awlrun/awl/internal/atomicfile"
)

// maxLinks is how many symlinks replaceFile follows before giving up, as the
// kernel does (ELOOP).
const maxLinks = 40

// replaceFile gives file the content data atomically: it writes a temporary
// file in the same directory, fsyncs it and renames it over file, so a crash
// at any moment leaves either the old content or the new, never a mix or a
// truncated file. An existing file keeps its permission bits (and, where
// the process may set them, its owner and group); a new one is created
// 0644 less the umask. When file is a symlink, the file it points to is
// replaced and the link stays. A hard-linked file becomes a new file: its
// other names keep the old content.
func replaceFile(file string, data []byte) error {
	target, err := followLinks(file)
	if err != nil {
		return err
	}
	st, err := os.Stat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		st = nil
	case err != nil:
		return err
	}
	return atomicfile.Replace(target, 0o644, func(f *os.File) error {
		if st != nil {
			// Owner first: a chown by a non-root process clears set-id bits.
			keepOwner(f, st)
			if err := f.Chmod(st.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
				return err
			}
		}
		_, err := f.Write(data)
		return err
	})
}

// followLinks returns the path that file's chain of symlinks ends at, which
// need not exist.
func followLinks(file string) (string, error) {
	for range maxLinks {
		st, err := os.Lstat(file)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			return file, nil
		}
		dest, err := os.Readlink(file)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(file), dest)
		}
		file = dest
	}
	return "", &fs.PathError{Op: "open", Path: file, Err: syscall.ELOOP}
}
