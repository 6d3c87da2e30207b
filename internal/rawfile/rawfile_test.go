package rawfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFile: a file is read whole, an empty one as nothing; one over
// max is refused; a directory is not a regular file; a missing one is a
// *fs.PathError that says so.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	for _, content := range []string{"", "a = 1\n", strings.Repeat("x", 10000)} {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(p, 10000)
		if err != nil || string(got) != content {
			t.Errorf("ReadFile of %d bytes: %d bytes, %v", len(content), len(got), err)
		}
	}
	if _, err := ReadFile(p, 9999); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over max: %v", err)
	}
	if _, err := ReadFile(dir, 10); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a directory: %v", err)
	}
	var pe *fs.PathError
	if _, err := ReadFile(filepath.Join(dir, "none"), 10); !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) || pe.Path != filepath.Join(dir, "none") {
		t.Errorf("missing: %v", err)
	}
}

// TestOpenReads: Open gives the size, Read the bytes then io.EOF.
func TestOpenReads(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := io.ReadAll(f)
	if f.Size != 5 || string(got) != "hello" || err != nil {
		t.Errorf("size %d, read %q, %v", f.Size, got, err)
	}
}

// TestDir: a directory's names are sorted, without "." and ".."; a file
// opens relative to it, through a folder too; an error names the whole
// path.
func TestDir(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b", "a", "c"} {
		if err := os.MkdirAll(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "b", "f"), []byte("in b"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	names, err := d.Names()
	if err != nil || strings.Join(names, " ") != "a b c" {
		t.Errorf("names %q, %v", names, err)
	}
	f, err := d.Open("b/f")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if string(got) != "in b" || f.Size != 4 || err != nil {
		t.Errorf("read %q (size %d), %v", got, f.Size, err)
	}
	var pe *fs.PathError
	if _, err := d.Open("a/f"); !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) || pe.Path != filepath.Join(dir, "a", "f") {
		t.Errorf("missing: %v", err)
	}
	if _, err := d.Open("a"); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a folder: %v", err)
	}
	if _, err := OpenDir(filepath.Join(dir, "b", "f")); err == nil {
		t.Error("OpenDir of a file: no error")
	}
}
