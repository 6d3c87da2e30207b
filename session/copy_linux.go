package session

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// copyRangeInKernel copies n bytes of src at off to dst at at with
// copy_file_range(2): the kernel moves them from page cache to page cache
// (or shares the blocks, where the file system can), with no pass through
// this process. dst is opened again for it, since copy_file_range refuses
// a file opened for appending. done is false, with nothing written, when
// the kernel cannot do it here (no such call, another file system): the
// caller copies through a buffer.
func copyRangeInKernel(dst, src *os.File, off, at, n int64) (done bool, err error) {
	out, err := os.OpenFile(dst.Name(), os.O_WRONLY, 0)
	if err != nil {
		return false, nil
	}
	defer out.Close()
	rc, err := src.SyscallConn()
	if err != nil {
		return false, nil
	}
	var cerr error
	first := true
	err = rc.Read(func(sfd uintptr) bool {
		for n > 0 {
			w, e := unix.CopyFileRange(int(sfd), &off, int(out.Fd()), &at, int(min(n, 1<<30)), 0)
			if e == unix.EINTR {
				continue
			}
			if e != nil || w == 0 {
				if first && (e == unix.ENOSYS || e == unix.EXDEV || e == unix.EINVAL || e == unix.EOPNOTSUPP || e == unix.EBADF) {
					cerr = errUnsupported
				} else if e != nil {
					cerr = e
				} else {
					cerr = errors.New("copy_file_range: unexpected end of the source")
				}
				return true
			}
			first = false
			n -= int64(w)
		}
		return true
	})
	if err != nil {
		return false, nil
	}
	if cerr == errUnsupported {
		return false, nil
	}
	return true, cerr
}

var errUnsupported = errors.New("copy_file_range unsupported")
