package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awlrun/awl/internal/testenv"
)

// leftovers lists the temporary files left in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".awl-") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWriteReplacesWithExactMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("old content, longer than the new"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "new" {
		t.Fatalf("content %q, %v", b, err)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 whatever the old file had", st.Mode().Perm())
	}
	if l := leftovers(t, dir); l != nil {
		t.Errorf("temporary files left: %v", l)
	}
}

func TestReplaceNewFileLessUmask(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "new")
	if err := Replace(p, 0o644, func(f *os.File) error { _, err := f.WriteString("x"); return err }); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&^0o644 != 0 {
		t.Errorf("mode %v: more than 0644", st.Mode().Perm())
	}
}

// A fill that fails leaves the old file as it was and no temporary file.
func TestReplaceFillFails(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("old"), 0o644)
	boom := errors.New("boom")
	err := Replace(p, 0o644, func(f *os.File) error {
		f.WriteString("half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want the fill's", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("content %q, want the old", b)
	}
	if l := leftovers(t, dir); l != nil {
		t.Errorf("temporary files left: %v", l)
	}
}

// A rename that fails (the target is a directory that is not empty)
// leaves no temporary file.
func TestReplaceRenameFails(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "d")
	os.MkdirAll(filepath.Join(p, "inside"), 0o755)
	if err := Write(p, []byte("x"), 0o644); err == nil {
		t.Fatal("replacing a non-empty directory succeeded")
	}
	if l := leftovers(t, dir); l != nil {
		t.Errorf("temporary files left: %v", l)
	}
}

// A missing directory fails at the start, naming the path.
func TestReplaceNoDirectory(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nodir", "f")
	err := Write(p, []byte("x"), 0o644)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), filepath.Dir(p)) {
		t.Fatalf("err %v, want a not-exist error naming %s", err, filepath.Dir(p))
	}
}

// A symlink is replaced as it is named; the file it pointed to stays.
func TestReplaceDoesNotFollowLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	link := filepath.Join(dir, "link")
	os.WriteFile(target, []byte("target"), 0o644)
	if err := os.Symlink(target, link); err != nil {
		testenv.Require(t, "no symlinks: "+err.Error())
	}
	if err := Write(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "target" {
		t.Errorf("the link's target was written: %q", b)
	}
	if st, _ := os.Lstat(link); st.Mode()&fs.ModeSymlink != 0 {
		t.Error("the link is still a link")
	}
}

func TestTempNameHiddenAndNew(t *testing.T) {
	a, b := TempName("f.txt"), TempName("f.txt")
	if !strings.HasPrefix(a, ".f.txt.awl-") || len(a) != len(".f.txt.awl-")+12 {
		t.Errorf("TempName = %q", a)
	}
	if a == b {
		t.Errorf("two temporary names alike: %q", a)
	}
}
