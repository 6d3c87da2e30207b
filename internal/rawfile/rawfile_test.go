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
