// Package rawfile opens a small regular file that a run reads at every
// start (a configuration file, a SKILL.md) with as few system calls as the
// kernel allows: open, fstat, then read and close. os.Open adds four fcntl
// and an epoll_ctl that fails for a regular file to each, and its first
// call sets up the network poller. The open does not block, so a FIFO is
// refused (ErrNotRegular), never waited on.
package rawfile

import (
	"errors"
	"io"
	"slices"
)

// What Open and ReadFile refuse: a path that names something other than a
// regular file (a directory, a FIFO, a device), and a file larger than
// asked for.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("too large")
)

// ReadFile reads the regular file at path whole, refusing one larger than
// max bytes: by its size when opened, or by what it holds if it grew
// since.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, max)
}

// readAll reads f to its end, at most max bytes.
func readAll(f *File, max int64) ([]byte, error) {
	if f.Size > max {
		return nil, ErrTooLarge
	}
	// One byte over the size, so that the end is seen by the first read.
	data := make([]byte, 0, f.Size+1)
	for {
		if len(data) == cap(data) {
			data = slices.Grow(data, 4096)
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		switch {
		case err == io.EOF:
			return data, nil
		case err != nil:
			return nil, err
		case int64(len(data)) > max:
			return nil, ErrTooLarge
		}
	}
}
