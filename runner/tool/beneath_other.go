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
func writeBeneath(roots []string, guard func(dir *os.File) error, file string, data []byte, mkdir bool, check func(mode fs.FileMode, exists bool) error) error {
	target, err := followLinks(file)
	if err != nil {
		return err
	}
	st, err := os.Stat(target)
	switch {
	case err == nil && check != nil:
		err = check(st.Mode(), true)
	case errors.Is(err, fs.ErrNotExist) && check != nil:
		err = check(0, false)
	case errors.Is(err, fs.ErrNotExist):
		err = nil
	}
	if err != nil {
		return err
	}
	if mkdir {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
	}
	return replaceFile(target, data)
}
