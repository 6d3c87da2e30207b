package tool

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
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
	dir := filepath.Dir(target)
	f, err := createTemp(dir, filepath.Base(target))
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if st != nil {
		// Owner first: a chown by a non-root process clears set-id bits.
		keepOwner(f, st)
		if err := f.Chmod(st.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
			return fail(err)
		}
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, target); err != nil {
		os.Remove(tmp)
		return err
	}
	// Make the rename itself durable; a directory that cannot be opened
	// or synced (some network file systems) still holds the new file.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
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

// createTemp creates a new hidden file next to base in dir, mode 0644 less
// the umask.
func createTemp(dir, base string) (*os.File, error) {
	for {
		name := filepath.Join(dir, tempName(base))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
}

// tempName is a new random hidden name for a temporary file next to base.
func tempName(base string) string {
	var rnd [6]byte
	rand.Read(rnd[:])
	return "." + base + ".awl-" + hex.EncodeToString(rnd[:])
}
