//go:build unix

package skills

import (
	"io"
	"io/fs"
	"syscall"
)

// readSKILL reads the head of the SKILL.md at p (readHead) with four
// system calls: open, fstat, read, close. os.Open would add four fcntl and
// an epoll_ctl for each file, a tenth of what ten skills cost a start. It
// opens without blocking, so a FIFO named SKILL.md is refused, not waited
// on.
func readSKILL(p string) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, errNotRegular
	}
	if st.Size > MaxSize {
		return nil, errTooLarge
	}
	return readHead(fdReader(fd))
}

// fdReader reads a file descriptor.
type fdReader int

func (f fdReader) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(f), p)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}
