package modelctx

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/internal/testenv"
)

// env returns a Getenv over m.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fixedNow() time.Time {
	return time.Date(2026, 4, 25, 23, 30, 0, 0, time.UTC).In(time.FixedZone("Asia/Tokyo", 9*3600))
}

// paths returns the paths of srcs.
func paths(srcs []Source) []string {
	var out []string
	for _, s := range srcs {
		out = append(out, s.Path)
	}
	return out
}

func TestGatherRepository(t *testing.T) {
	tmp := t.TempDir()
	root := filepath.Join(tmp, "repo")
	cwd := filepath.Join(root, "a", "b", "c")
	config := filepath.Join(tmp, "config")
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tmp, "AGENTS.md"), "above the repository: ignored")
	write(t, filepath.Join(root, "AGENTS.md"), "root rules\n")
	write(t, filepath.Join(root, "a", "AGENTS.md"), "  \n\n") // blank: skipped
	write(t, filepath.Join(root, "a", "b", "AGENTS.md"), "b rules")
	write(t, filepath.Join(cwd, "AGENTS.md"), "c rules")
	write(t, filepath.Join(root, "a", "b", "other", "AGENTS.md"), "not on the path")
	write(t, filepath.Join(config, "awl", "AGENTS.md"), "user rules")

	s, err := Gather(Options{
		Cwd:    cwd,
		Getenv: env(map[string]string{"XDG_CONFIG_HOME": config, "HOME": "/nonexistent", "SHELL": "/usr/bin/zsh"}),
		Now:    fixedNow,
		System: "sys", AppendSystem: "more", Tools: []string{"read", "bash"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Source{
		{Path: filepath.Join(config, "awl", "AGENTS.md"), Content: "user rules", User: true},
		{Path: filepath.Join(root, "AGENTS.md"), Content: "root rules\n"},
		{Path: filepath.Join(root, "a", "b", "AGENTS.md"), Content: "b rules"},
		{Path: filepath.Join(cwd, "AGENTS.md"), Content: "c rules"},
	}
	if !slices.Equal(s.AgentsMD, want) {
		t.Errorf("AgentsMD = %+v, want %+v", s.AgentsMD, want)
	}
	if s.Cwd != cwd || s.Shell != "zsh" || s.Date != "2026-04-26" || s.Timezone != "Asia/Tokyo" {
		t.Errorf("environment = %q %q %q %q", s.Cwd, s.Shell, s.Date, s.Timezone)
	}
	if s.System != "sys" || s.AppendSystem != "more" || !slices.Equal(s.Tools, []string{"read", "bash"}) {
		t.Errorf("instructions = %q %q %q", s.System, s.AppendSystem, s.Tools)
	}
}

func TestGatherGitFile(t *testing.T) {
	// A worktree or submodule has a .git file, not a directory.
	root := t.TempDir()
	write(t, filepath.Join(root, ".git"), "gitdir: /elsewhere\n")
	write(t, filepath.Join(root, "AGENTS.md"), "root")
	cwd := filepath.Join(root, "sub")
	write(t, filepath.Join(cwd, "AGENTS.md"), "sub")
	s, err := Gather(Options{Cwd: cwd, Getenv: env(nil), Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(root, "AGENTS.md"), filepath.Join(cwd, "AGENTS.md")}
	if got := paths(s.AgentsMD); !slices.Equal(got, want) {
		t.Errorf("paths = %q, want %q", got, want)
	}
}

func TestGatherOutsideRepository(t *testing.T) {
	tmp := t.TempDir()
	if _, err := instructionDirs(tmp); err != nil {
		t.Fatal(err)
	}
	if dirs, _ := instructionDirs(tmp); len(dirs) != 1 {
		testenv.Require(t, fmt.Sprintf("the temporary directory %s is inside a git repository", tmp))
	}
	cwd := filepath.Join(tmp, "x", "y")
	write(t, filepath.Join(tmp, "AGENTS.md"), "parent")
	write(t, filepath.Join(tmp, "x", "AGENTS.md"), "parent")
	write(t, filepath.Join(cwd, "AGENTS.md"), "own")
	home := filepath.Join(tmp, "home")
	write(t, filepath.Join(home, ".config", "awl", "AGENTS.md"), "user")

	// XDG_CONFIG_HOME is relative, so it is ignored for ~/.config.
	s, err := Gather(Options{Cwd: cwd, Getenv: env(map[string]string{"HOME": home, "XDG_CONFIG_HOME": "rel"}), Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(home, ".config", "awl", "AGENTS.md"), filepath.Join(cwd, "AGENTS.md")}
	if got := paths(s.AgentsMD); !slices.Equal(got, want) {
		t.Errorf("paths = %q, want %q", got, want)
	}
	if s.Shell != "bash" {
		t.Errorf("Shell = %q, want the bash default", s.Shell)
	}
}

func TestGatherNoAgentsMD(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".git", "HEAD"), "")
	write(t, filepath.Join(root, "AGENTS.md"), "root")
	s, err := Gather(Options{Cwd: root, Getenv: env(nil), Now: fixedNow, NoAgentsMD: true, NoEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.AgentsMD) != 0 || !s.NoAgentsMD || !s.NoEnv {
		t.Errorf("state = %+v, want no sources and both switches", s)
	}
}

func TestGatherUnreadable(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".git", "HEAD"), "")
	// A directory named AGENTS.md cannot be read as a file.
	if err := os.Mkdir(filepath.Join(root, "AGENTS.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Gather(Options{Cwd: root, Getenv: env(nil), Now: fixedNow})
	if err == nil || !strings.Contains(err.Error(), "AGENTS.md") {
		t.Errorf("err = %v, want a read error naming the file", err)
	}
}

func TestGatherRelativeCwd(t *testing.T) {
	if _, err := Gather(Options{Cwd: "rel/dir", Getenv: env(nil), Now: fixedNow}); err == nil {
		t.Error("Gather accepted a relative working directory")
	}
}

func TestTimezone(t *testing.T) {
	link := filepath.Join(t.TempDir(), "localtime")
	if err := os.Symlink("/usr/share/zoneinfo/America/New_York", link); err != nil {
		t.Fatal(err)
	}
	notALink := filepath.Join(t.TempDir(), "plain")
	write(t, notALink, "TZif")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name      string
		t         time.Time
		env       map[string]string
		localtime string
		want      string
	}{
		{"named location", at.In(time.FixedZone("Europe/Paris", 3600)), nil, link, "Europe/Paris"},
		{"unnamed location", at.In(time.FixedZone("", -5*3600)), nil, link, "-05:00"},
		{"UTC", at, nil, link, "UTC"},
		{"local from TZ", at.In(time.Local), map[string]string{"TZ": ":Asia/Tokyo"}, link, "Asia/Tokyo"},
		{"local from TZ path", at.In(time.Local), map[string]string{"TZ": "/usr/share/zoneinfo/Asia/Tokyo"}, link, "Asia/Tokyo"},
		{"local from link", at.In(time.Local), nil, link, "America/New_York"},
		{"local without a name", at.In(time.Local), nil, notALink, at.In(time.Local).Format("-07:00")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := timezone(tt.t, env(tt.env), tt.localtime); got != tt.want {
				t.Errorf("timezone = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestGatherForeignGitIsNoRoot: anyone may make /tmp/.git, which made a
// run in /tmp/job (no repository) read every AGENTS.md from /tmp down:
// the planter's /tmp/AGENTS.md among the model's instructions. A .git
// another user owns (not awl's user, nor root, nor the working
// directory's owner), or a link to one they made, is no repository's
// root; one the working directory's owner owns (a checkout uid 1001 owns,
// awl run as root in CI) is.
func TestGatherForeignGitIsNoRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a file another user's needs root")
	}
	tmp := t.TempDir()
	if dirs, _ := instructionDirs(tmp); len(dirs) != 1 {
		testenv.Require(t, fmt.Sprintf("the temporary directory %s is inside a git repository", tmp))
	}
	cwd := filepath.Join(tmp, "job")
	write(t, filepath.Join(tmp, "AGENTS.md"), "planted")
	write(t, filepath.Join(cwd, "AGENTS.md"), "own")
	git := filepath.Join(tmp, ".git")
	gather := func() []string {
		t.Helper()
		s, err := Gather(Options{Cwd: cwd, Getenv: env(nil), Now: fixedNow})
		if err != nil {
			t.Fatal(err)
		}
		return paths(s.AgentsMD)
	}
	own := []string{filepath.Join(cwd, "AGENTS.md")}
	both := []string{filepath.Join(tmp, "AGENTS.md"), filepath.Join(cwd, "AGENTS.md")}
	if err := os.Mkdir(git, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(git, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	if got := gather(); !slices.Equal(got, own) {
		t.Errorf("with uid 4242's %s: read %q, want %q", git, got, own)
	}
	// The working directory 4242's too: its owner's .git is the root.
	if err := os.Chown(cwd, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	if got := gather(); !slices.Equal(got, both) {
		t.Errorf("in uid 4242's directory with their .git: read %q, want %q", got, both)
	}
	if err := os.Chown(cwd, 0, 0); err != nil {
		t.Fatal(err)
	}
	// A link 4242 made to a directory root owns.
	os.Remove(git)
	if err := os.Symlink(tmp, git); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(git, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	if got := gather(); !slices.Equal(got, own) {
		t.Errorf("with uid 4242's link %s: read %q, want %q", git, got, own)
	}
	// Root's: the repository's root.
	if err := os.Lchown(git, 0, 0); err != nil {
		t.Fatal(err)
	}
	if got := gather(); !slices.Equal(got, both) {
		t.Errorf("with root's %s: read %q, want %q", git, got, both)
	}
}
