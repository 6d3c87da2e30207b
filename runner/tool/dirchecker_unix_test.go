//go:build unix

package tool

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// dirConfiner lets CheckWrite pass every path, as a check a swapped link
// fooled does, and refuses, in CheckDir, the one directory locked by what
// it is (os.SameFile), whatever path led there.
type dirConfiner struct {
	fakeConfiner
	root   string
	locked fs.FileInfo
	seen   int
}

func (c *dirConfiner) WriteRoots() []string { return []string{c.root} }

func (c *dirConfiner) CheckDir(dir *os.File) error {
	c.seen++
	st, err := dir.Stat()
	if err != nil {
		return err
	}
	if os.SameFile(st, c.locked) {
		return errors.New("Permission denied\n(fake sandbox; locked)")
	}
	return nil
}

// The write and edit tools show every directory they open, and make or
// write in, to the confinement's DirChecker, and a refusal comes back as
// CheckWrite's would: nothing is written, no directory made.
func TestDirChecker(t *testing.T) {
	dir := tree(t, map[string]string{"locked/f.txt": "old\n", "open/g.txt": "old\n"})
	dir, _ = filepath.EvalSymlinks(dir)
	if err := os.Symlink("locked", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	locked, err := os.Stat(filepath.Join(dir, "locked"))
	if err != nil {
		t.Fatal(err)
	}
	c := &dirConfiner{fakeConfiner: fakeConfiner{denied: filepath.Join(t.TempDir(), "none")}, root: dir, locked: locked}
	env := Env{Dir: dir, Confine: c}
	for _, p := range []string{"locked/new.txt", "l/new.txt", "l/f.txt", "locked/a/b/new.txt"} {
		res := call(t, env, "write", args(t, map[string]any{"path": p, "content": "evil\n"}))
		want(t, res, true, "write: "+p+": Permission denied\n(fake sandbox; locked)")
	}
	res := call(t, env, "edit", args(t, map[string]any{"path": "l/f.txt", "old_string": "old", "new_string": "evil"}))
	want(t, res, true, "edit: l/f.txt: Permission denied\n(fake sandbox; locked)")
	if ents, _ := os.ReadDir(filepath.Join(dir, "locked")); len(ents) != 1 {
		t.Errorf("locked holds %v, want f.txt alone", ents)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "locked", "f.txt")); string(b) != "old\n" {
		t.Errorf("locked/f.txt is %q", b)
	}
	c.seen = 0
	want(t, call(t, env, "write", args(t, map[string]any{"path": "open/x/y/new.txt", "content": "ok"})), false, "created")
	want(t, call(t, env, "edit", args(t, map[string]any{"path": "open/g.txt", "old_string": "old", "new_string": "new"})), false, "edited")
	// open/x/y: the root, open, open/x and open/y made in turn; then open.
	if c.seen < 5 {
		t.Errorf("CheckDir saw %d directories, want every one opened", c.seen)
	}
}
