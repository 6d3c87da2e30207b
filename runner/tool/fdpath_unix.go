//go:build unix

package tool

import (
	"fmt"
	"path/filepath"
	"syscall"
)

// fdPathByName returns the path of the file open as fd where /proc does
// not give it: name, opened a moment before, with its symbolic links
// resolved again, and accepted only when the file there is still the one
// open (same device and inode, before and after the look-up). A link
// swapped between the open and the look-up is refused, not followed; one
// swapped there and back within the look-up itself is not seen.
func fdPathByName(fd uintptr, name string) (string, error) {
	var open syscall.Stat_t
	if err := syscall.Fstat(int(fd), &open); err != nil {
		return "", err
	}
	p, err := filepath.EvalSymlinks(name)
	if err != nil {
		return "", err
	}
	if p, err = filepath.Abs(p); err != nil {
		return "", err
	}
	var there syscall.Stat_t
	if err := syscall.Lstat(p, &there); err != nil {
		return "", err
	}
	if there.Dev != open.Dev || there.Ino != open.Ino {
		return "", fmt.Errorf("%s changed while it was opened (a link moved)", name)
	}
	if again, err := filepath.EvalSymlinks(p); err != nil || again != p {
		return "", fmt.Errorf("%s changed while it was opened (a link moved)", name)
	}
	return p, nil
}
