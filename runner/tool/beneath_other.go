//go:build !unix

package tool

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// errOutside is a write whose target is not beneath any writable root.
var errOutside = errors.New("outside the writable directories")

// writeBeneath writes file as replaceFile does. Without descriptor-relative
// calls, roots and guard are not enforced here: the caller's CheckWrite is
// all there is.
func writeBeneath(roots []string, guard func(dir *os.File) error, file string, data []byte, mkdir bool, check func(dir *os.File, name string, mode fs.FileMode, exists bool) error) error {
	target, err := followLinks(file)
	if err != nil {
		return err
	}
	if mkdir {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
	}
	dir, err := os.Open(filepath.Dir(target))
	if err != nil {
		return err
	}
	defer dir.Close()
	st, err := os.Stat(target)
	switch {
	case err == nil && check != nil:
		err = check(dir, filepath.Base(target), st.Mode(), true)
	case errors.Is(err, fs.ErrNotExist) && check != nil:
		err = check(dir, filepath.Base(target), 0, false)
	case errors.Is(err, fs.ErrNotExist):
		err = nil
	}
	if err != nil {
		return err
	}
	return replaceFile(target, data)
}
