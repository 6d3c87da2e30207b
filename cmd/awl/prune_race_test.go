package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/provider/providertest"
)

// linkedAwl makes a temporary directory holding awl, a link to the test
// binary (which runs as awl under that name, TestMain), and returns both.
func linkedAwl(t *testing.T) (tmp, awl string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tmp = t.TempDir()
	awl = filepath.Join(tmp, "awl")
	if err := os.Symlink(exe, awl); err != nil {
		t.Fatal(err)
	}
	return tmp, awl
}

// awlEnv is the environment of an awl process run against the fake
// provider at url: the anthropic provider with a dummy key, sessions in
// sessions, and no user configuration (XDG_CONFIG_HOME in tmp); extra
// variables follow.
func awlEnv(tmp, url, sessions string, extra ...string) []string {
	return append(append(os.Environ(), "ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL="+url, "AWL_PROVIDER=anthropic",
		"AWL_SESSION_DIR="+sessions, "XDG_CONFIG_HOME="+filepath.Join(tmp, "config")), extra...)
}

// TestPruneRacingResume: `awl sessions prune` chooses sessions by the age
// it listed; a resume that finishes (exit 0) after that choice and before
// the removal keeps its session: prune checks the age again under the
// lock, skips it, says so on stderr and exits 0. The dry run says it would
// skip it.
func TestPruneRacingResume(t *testing.T) {
	tmp, awl := linkedAwl(t)
	srv := providertest.New()
	defer srv.Close()
	sessions := filepath.Join(tmp, "sessions")
	env := awlEnv(tmp, srv.URL, sessions)
	awlRun := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(awl, args...)
		cmd.Dir, cmd.Env = tmp, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("awl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	srv.Enqueue(providertest.Text("anthropic", "first"))
	awlRun("run", "--no-stdin", "go")
	paths, _ := filepath.Glob(filepath.Join(sessions, "*", "*.jsonl"))
	if len(paths) != 1 {
		t.Fatalf("session files %q", paths)
	}
	path := paths[0]
	t.Setenv("AWL_SESSION_DIR", sessions)
	t.Chdir(tmp)
	for _, dry := range []bool{true, false} {
		old := time.Now().Add(-40 * 24 * time.Hour)
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
		chosen := false
		testHookPruneChosen = func(ps []string) {
			chosen = len(ps) == 1 && ps[0] == path
			srv.Enqueue(providertest.Text("anthropic", "resumed"))
			awlRun("run", "--no-stdin", "--resume", path, "again")
		}
		args := []string{"sessions", "prune", "--older-than", "30d"}
		if dry {
			args = append(args, "--dry-run")
		}
		var out, errb bytes.Buffer
		code := mainAt(context.Background(), time.Now(), args, nil, &out, &errb)
		testHookPruneChosen = nil
		if !chosen {
			t.Fatalf("dry=%v: prune did not choose the old session", dry)
		}
		if code != 0 || out.Len() != 0 {
			t.Errorf("dry=%v: exit %d, stdout %q, want 0 and nothing removed", dry, code, out.String())
		}
		want := "awl: skipped: "
		if dry {
			want = "awl: would skip: "
		}
		if !strings.HasPrefix(errb.String(), want) || !strings.Contains(errb.String(), "after the cut-off") {
			t.Errorf("dry=%v: stderr %q, want %q… after the cut-off", dry, errb.String(), want)
		}
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("dry=%v: the resumed session is gone: %v", dry, err)
		}
	}
	if data, _ := os.ReadFile(path); !bytes.Contains(data, []byte(`"resumed"`)) {
		t.Errorf("the session lacks its resumed turns:\n%s", data)
	}
}
