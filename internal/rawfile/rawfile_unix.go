//go:build unix

package rawfile

import (
	"io"
	"io/fs"
	"syscall"
)

// FD is a file descriptor read without the network poller: os.File would
// try (and fail) to register a regular file with it, one more system call
// for each file.
type FD int

// OpenFD opens path for reading. O_NONBLOCK keeps a named pipe from
// blocking the open. The error is the system call's.
func OpenFD(path string) (FD, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err != syscall.EINTR {
			return FD(fd), err
		}
	}
}

// Read reads from the file; io.EOF at its end.
func (f FD) Read(p []byte) (int, error) {
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

// Close closes the file.
func (f FD) Close() error { return syscall.Close(int(f)) }

// Fd is the descriptor, as os.File's Fd.
func (f FD) Fd() uintptr { return uintptr(f) }

// File is a regular file open for reading.
type File struct {
	FD
	// Size is the file's size when it was opened.
	Size int64
}

// Open opens the regular file at path. An error opening it is an
// *fs.PathError; something else than a regular file is ErrNotRegular.
func Open(path string) (*File, error) {
	fd, err := OpenFD(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(fd), &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		fd.Close()
		return nil, ErrNotRegular
	}
	return &File{FD: fd, Size: st.Size}, nil
}
