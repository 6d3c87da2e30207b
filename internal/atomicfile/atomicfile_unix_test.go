//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestReplaceAt(t *testing.T) {
	dir := t.TempDir()
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	os.WriteFile(filepath.Join(dir, "f"), []byte("old"), 0o644)
	if err := ReplaceAt(d, "f", 0o644, func(f *os.File) error { _, err := f.WriteString("new"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != "new" {
		t.Errorf("content %q", b)
	}
	boom := errors.New("boom")
	if err := ReplaceAt(d, "f", 0o644, func(*os.File) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("err %v, want the fill's", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != "new" {
		t.Errorf("content %q after a failed fill", b)
	}
	if l := leftovers(t, dir); l != nil {
		t.Errorf("temporary files left: %v", l)
	}
	// The directory, moved away meanwhile, still receives the file: the
	// path does not matter once it is open.
	moved := dir + "-moved"
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(moved)
	if err := ReplaceAt(d, "g", 0o644, func(f *os.File) error { _, err := f.WriteString("g"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(moved, "g")); string(b) != "g" {
		t.Errorf("content %q in the moved directory", b)
	}
}
