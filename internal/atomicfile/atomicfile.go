// Package atomicfile replaces a file's content so that a crash at any
// moment leaves the old content or the new one, never a mix or a truncated
// file: a temporary file in the same directory is written, fsynced and
// renamed over the file, and the directory is fsynced. It is the one
// implementation awl has of that sequence.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Replace gives the file at path new content: it creates a hidden
// temporary file in path's directory (mode perm less the umask), lets fill
// write it (and set its mode or owner), fsyncs it, renames it over path
// and fsyncs the directory, so that the rename too survives a crash. On
// any error the temporary file is removed and path is left as it was.
//
// path is replaced as it is named: a symlink is replaced by the new file,
// not followed (a caller that wants the link kept resolves it first).
// A directory that cannot be opened or synced (some network file systems)
// is not an error: the rename has happened and the new content is there.
func Replace(path string, perm fs.FileMode, fill func(f *os.File) error) error {
	dir, base := filepath.Dir(path), filepath.Base(path)
	return replace(steps{
		create: func() (*os.File, string, error) {
			for {
				tmp := filepath.Join(dir, TempName(base))
				f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
				if !errors.Is(err, fs.ErrExist) {
					return f, tmp, err
				}
			}
		},
		rename: func(tmp string) error { return os.Rename(tmp, path) },
		remove: func(tmp string) { os.Remove(tmp) },
		syncDir: func() {
			if d, err := os.Open(dir); err == nil {
				d.Sync()
				d.Close()
			}
		},
	}, fill)
}

// Write replaces the file at path with data, as Replace does; the new
// file has mode perm exactly, whatever the umask.
func Write(path string, data []byte, perm fs.FileMode) error {
	return Replace(path, perm, func(f *os.File) error {
		if err := f.Chmod(perm); err != nil {
			return err
		}
		_, err := f.Write(data)
		return err
	})
}

// steps are the file system calls of one replacement: by path (Replace)
// or through a directory's descriptor (ReplaceAt).
type steps struct {
	create  func() (f *os.File, tmp string, err error)
	rename  func(tmp string) error
	remove  func(tmp string)
	syncDir func()
}

// replace is the sequence itself: create, fill, fsync, close, rename,
// fsync the directory; the temporary file is removed on any error.
func replace(s steps, fill func(f *os.File) error) error {
	f, tmp, err := s.create()
	if err != nil {
		return err
	}
	err = fill(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.rename(tmp)
	}
	if err != nil {
		s.remove(tmp)
		return err
	}
	s.syncDir()
	return nil
}

// TempName is a new random hidden name for a temporary file next to base:
// ".base.awl-" and 12 hex digits.
func TempName(base string) string {
	var rnd [6]byte
	rand.Read(rnd[:])
	return "." + base + ".awl-" + hex.EncodeToString(rnd[:])
}
