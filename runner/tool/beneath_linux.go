package tool

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 records that the kernel has no openat2 (before 5.6).
var noOpenat2 atomic.Bool

// openAtBeneath opens the directory rel beneath dir with openat2 and
// RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS: symbolic links are followed only
// while they stay beneath dir (an absolute one never does), and no
// /proc/PID/fd link is. Without openat2, it walks the path one component
// at a time with O_NOFOLLOW.
func openAtBeneath(dir *os.File, rel string) (*os.File, error) {
	if !noOpenat2.Load() {
		fd, err := unix.Openat2(int(dir.Fd()), rel, &unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
		})
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), filepath.Join(dir.Name(), rel)), nil
		case errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ELOOP):
			return nil, &fs.PathError{Op: "open", Path: filepath.Join(dir.Name(), rel), Err: errOutside}
		case !errors.Is(err, unix.ENOSYS):
			return nil, &fs.PathError{Op: "open", Path: filepath.Join(dir.Name(), rel), Err: err}
		}
		noOpenat2.Store(true)
	}
	return openWalkBeneath(dir, rel)
}
