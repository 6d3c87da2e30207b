//go:build !unix

package rawfile

import (
	"os"
	"path/filepath"
	"syscall"
)

// File is a regular file open for reading.
type File struct {
	f *os.File
	// Size is the file's size when it was opened.
	Size int64
}

// Open opens the regular file at path. An error opening it is an
// *fs.PathError; something else than a regular file is ErrNotRegular.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, ErrNotRegular
	}
	return &File{f: f, Size: fi.Size()}, nil
}

// Read reads from the file; io.EOF at its end.
func (f *File) Read(p []byte) (int, error) { return f.f.Read(p) }

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Dir is a directory open for listing and for opening files in it.
type Dir struct{ path string }

// OpenDir opens the directory at path. An error is an *fs.PathError.
func OpenDir(path string) (*Dir, error) {
	fi, err := os.Stat(path)
	if err == nil && !fi.IsDir() {
		err = &os.PathError{Op: "open", Path: path, Err: syscall.ENOTDIR}
	}
	if err != nil {
		return nil, err
	}
	return &Dir{path: path}, nil
}

// Names are the names of the directory's entries, sorted.
func (d *Dir) Names() ([]string, error) {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

// Open opens the regular file at name, relative to the directory.
func (d *Dir) Open(name string) (*File, error) { return Open(filepath.Join(d.path, name)) }

// Close closes the directory.
func (d *Dir) Close() error { return nil }
