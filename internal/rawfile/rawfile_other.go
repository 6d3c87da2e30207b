//go:build !unix

package rawfile

import "os"

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
