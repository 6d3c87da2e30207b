//go:build unix

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ReplaceAt is Replace for the file name in the directory dir, every step
// through dir's descriptor and following no link: a directory renamed or
// swapped for a link meanwhile cannot redirect the write.
func ReplaceAt(dir *os.File, name string, perm fs.FileMode, fill func(f *os.File) error) error {
	dfd := int(dir.Fd())
	return replace(steps{
		create: func() (*os.File, string, error) {
			for {
				tmp := TempName(name)
				fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
				if errors.Is(err, unix.EEXIST) {
					continue
				}
				if err != nil {
					return nil, "", &fs.PathError{Op: "open", Path: filepath.Join(dir.Name(), tmp), Err: err}
				}
				return os.NewFile(uintptr(fd), filepath.Join(dir.Name(), tmp)), tmp, nil
			}
		},
		rename: func(tmp string) error {
			if err := unix.Renameat(dfd, tmp, dfd, name); err != nil {
				return &fs.PathError{Op: "rename", Path: name, Err: err}
			}
			return nil
		},
		remove:  func(tmp string) { unix.Unlinkat(dfd, tmp, 0) },
		syncDir: func() { dir.Sync() },
	}, fill)
}
