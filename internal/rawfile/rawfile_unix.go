//go:build unix

package rawfile

import (
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
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
	return regular(fd)
}

// regular is the file open at fd, which it closes when that is not a
// regular file.
func regular(fd FD) (*File, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(fd), &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		fd.Close()
		return nil, ErrNotRegular
	}
	return &File{FD: fd, Size: st.Size}, nil
}

// Dir is a directory open for listing and for opening files in it by a
// path relative to it: the kernel walks the directory's own path once,
// not again for each file.
type Dir struct {
	fd   FD
	path string
}

// OpenDir opens the directory at path. An error is an *fs.PathError.
func OpenDir(path string) (*Dir, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_DIRECTORY, 0)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return &Dir{fd: FD(fd), path: path}, nil
	}
}

// Names are the names of the directory's entries, sorted, without "."
// and "..".
func (d *Dir) Names() ([]string, error) {
	var names []string
	buf := make([]byte, 4096)
	for {
		n, err := syscall.ReadDirent(int(d.fd), buf)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "readdirent", Path: d.path, Err: err}
		case n <= 0:
			slices.Sort(names)
			return names, nil
		}
		_, _, names = syscall.ParseDirent(buf[:n], -1, names)
	}
}

// Open opens the regular file at name, relative to the directory, as
// the package's Open does; an error names the whole path.
func (d *Dir) Open(name string) (*File, error) {
	for {
		fd, err := unix.Openat(int(d.fd), name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "open", Path: filepath.Join(d.path, name), Err: err}
		}
		return regular(FD(fd))
	}
}

// Close closes the directory.
func (d *Dir) Close() error { return d.fd.Close() }
