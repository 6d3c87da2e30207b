//go:build unix

package tool

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestFDPathSwappedLink: the path a tool's open file is judged by is the
// file's own, never where a link swapped after the open leads. Linux reads
// it from the descriptor; elsewhere (fdPathByName, tested here on every
// Unix) the name is resolved again and a file that is no longer the one
// open is refused.
func TestFDPathSwappedLink(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"src", ".github"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
		os.WriteFile(filepath.Join(dir, d, "f"), []byte(d), 0o644)
	}
	link := filepath.Join(dir, "link")
	os.Symlink("src", link)
	f, err := os.Open(filepath.Join(link, "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := filepath.Join(dir, "src", "f")
	if got, err := fdPathByName(f.Fd(), f.Name()); err != nil || got != want {
		t.Fatalf("by name, before the swap: %q, %v; want %q", got, err, want)
	}
	if got, err := fdPath(f.Fd(), f.Name()); err != nil || got != want {
		t.Fatalf("fdPath, before the swap: %q, %v; want %q", got, err, want)
	}
	// The link now leads to .github: the open file is still src/f.
	os.Remove(link)
	os.Symlink(".github", link)
	got, err := fdPathByName(f.Fd(), f.Name())
	if err == nil || !strings.Contains(err.Error(), "changed while it was opened") {
		t.Errorf("by name, after the swap: %q, %v; want it refused", got, err)
	}
	got, err = fdPath(f.Fd(), f.Name())
	switch {
	case runtime.GOOS == "linux" && (err != nil || got != want):
		t.Errorf("fdPath after the swap: %q, %v; want %q from the descriptor", got, err, want)
	case runtime.GOOS != "linux" && err == nil:
		t.Errorf("fdPath after the swap: %q; want it refused", got)
	}
	// A directory opened through the link, then swapped, likewise.
	os.Remove(link)
	os.Symlink("src", link)
	d, err := os.Open(link)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	os.Remove(link)
	os.Symlink(".github", link)
	if got, err := fdPathByName(d.Fd(), d.Name()); err == nil {
		t.Errorf("a directory by name after the swap: %q; want it refused", got)
	}
	// A file replaced under the same name (not a link) is refused too.
	g, err := os.Open(filepath.Join(dir, "src", "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	os.Rename(filepath.Join(dir, ".github", "f"), filepath.Join(dir, "src", "f"))
	if got, err := fdPathByName(g.Fd(), g.Name()); err == nil {
		t.Errorf("a file replaced by another: %q; want it refused", got)
	}
}
