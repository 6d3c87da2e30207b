//go:build unix

package skills

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHostileSkillFiles: a SKILL.md that is a FIFO is refused at once, not
// waited on (a run would hang before its first request); one that is a
// directory, or larger than MaxSize, is refused without being read; one
// that is a symbolic link to a good SKILL.md is read. Each refusal is
// one skipped skill with its path; the good skills beside them are
// offered.
func TestHostileSkillFiles(t *testing.T) {
	dir := t.TempDir()
	writeSkill(t, dir, "good", "---\nname: good\ndescription: d\n---\n")
	os.MkdirAll(filepath.Join(dir, "fifo"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo", "SKILL.md"), 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	os.MkdirAll(filepath.Join(dir, "adir", "SKILL.md"), 0o755)
	big := writeSkill(t, dir, "big", "---\nname: big\ndescription: d\n---\n")
	if err := os.Truncate(big, MaxSize+1); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "linked"), 0o755)
	target := writeSkill(t, t.TempDir(), "linked", "---\nname: linked\ndescription: through a link\n---\n")
	if err := os.Symlink(target, filepath.Join(dir, "linked", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	// Entries that are no folder are no skills, said nothing of; a link
	// to a file is a skill that cannot be read.
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "notes.txt"), filepath.Join(dir, "tofile")); err != nil {
		t.Fatal(err)
	}
	done := make(chan []Skill, 1)
	go func() { done <- Discover(OS, []Dir{{Path: dir, Source: "project"}}) }()
	var all []Skill
	select {
	case all = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Discover waits on a FIFO named SKILL.md")
	}
	var offered []string
	for _, s := range Offered(all) {
		offered = append(offered, s.Name)
	}
	if !slices.Equal(offered, []string{"good", "linked"}) {
		t.Errorf("offered %q", offered)
	}
	want := map[string]string{"fifo": "not a regular file", "adir": "not a regular file", "big": "larger than 1048576 bytes", "tofile": "not a directory"}
	for _, s := range all {
		folder := filepath.Base(filepath.Dir(s.Path))
		reason, bad := want[folder]
		if bad != (len(s.Problems) == 1) || bad && s.Problems[0] != s.Path+": "+reason {
			t.Errorf("%s: problems %q, want %q", folder, s.Problems, reason)
		}
		delete(want, folder)
	}
	if len(want) > 0 {
		t.Errorf("not reported: %v", want)
	}
	if !strings.HasSuffix(all[0].Path, "SKILL.md") {
		t.Errorf("paths: %+v", all)
	}
}
