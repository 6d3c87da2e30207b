//go:build unix

package tool

import (
	"errors"
	"io"
	"syscall"
)

// searchFile is a file opened for grep. On Unix it is a bare descriptor:
// an os.File would also try (and fail) to register a regular file with the
// poller, one more system call for each of thousands of files.
type searchFile int

// openSearchFile opens name for reading. O_NONBLOCK keeps a named pipe
// that took a file's place from blocking the open.
func openSearchFile(name string) (searchFile, error) {
	for {
		fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		return searchFile(fd), err
	}
}

func (f searchFile) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(f), p)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f searchFile) Close() error { return syscall.Close(int(f)) }

func (f searchFile) fd() uintptr { return uintptr(f) }
