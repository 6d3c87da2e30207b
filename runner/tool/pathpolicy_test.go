package tool

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awlrun/awl/runner/policy"
)

// policyEnv returns a run directory with src/, .github/workflows/ci.yml,
// src/link -> ../.github, src/ci.yml -> ../.github/workflows/ci.yml,
// .env and src/.env, and an Env whose tools judge paths by the rules.
func policyEnv(t *testing.T, allow, deny string) (string, Env) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"src/a.go":                 "package a // needle\n",
		".github/workflows/ci.yml": "on: push # needle\n",
		".env":                     "TOKEN=needle\n",
		"src/.env":                 "TOKEN=needle\n",
		"docs/readme.md":           "needle\n",
		"src/sub/b.go":             "package sub // needle\n",
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink("../.github", filepath.Join(dir, "src/link"))
	os.Symlink("../.github/workflows/ci.yml", filepath.Join(dir, "src/ci.yml"))
	p, err := policy.New(policy.Options{Dir: dir, Allow: []string{allow}, Deny: []string{deny}})
	if err != nil {
		t.Fatal(err)
	}
	return dir, Env{Dir: dir, Paths: p}
}

func callJSON(t *testing.T, env Env, name string, in map[string]any) Result {
	t.Helper()
	raw, _ := json.Marshal(in)
	return call(t, env, name, string(raw))
}

// TestPathRulesWrite: write and edit judge the file where it really lands:
// through a link, '..', an absolute path, a dangling link.
func TestPathRulesWrite(t *testing.T) {
	dir, env := policyEnv(t, "write(src/**),read", "edit(src/sub/**)")
	outside := filepath.Join(t.TempDir(), "outside")
	for _, c := range []struct {
		path  string
		allow bool
	}{
		{"src/new.go", true},
		{"src/deep/er/new.go", true},
		{"src/link/workflows/ci.yml", false},
		{"src/link/evil.yml", false},
		{"src/ci.yml", false},
		{"src/../.github/workflows/ci.yml", false},
		{filepath.Join(dir, ".github/x"), false},
		{filepath.Join(dir, "src/abs.go"), true},
		{"docs/readme.md", false},
		{outside, false},
	} {
		res := callJSON(t, env, "write", map[string]any{"path": c.path, "content": "pwned"})
		if res.IsError == c.allow {
			t.Errorf("write %s: %q, want allowed %v", c.path, res.Content, c.allow)
		}
		if !c.allow && !strings.Contains(res.Content, "denied") {
			t.Errorf("write %s: the refusal does not say it was denied: %q", c.path, res.Content)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".github/workflows/ci.yml")); strings.Contains(string(b), "pwned") {
		t.Fatal("a write reached .github through a link")
	}
	if _, err := os.Stat(filepath.Join(dir, ".github/evil.yml")); err == nil {
		t.Fatal("a write created a file in .github through a link")
	}
	// A dangling link in src pointing out: the write would create the target.
	os.Symlink("../.github/new.yml", filepath.Join(dir, "src/dangling.yml"))
	if res := callJSON(t, env, "write", map[string]any{"path": "src/dangling.yml", "content": "x"}); !res.IsError {
		t.Errorf("write through a dangling link out of src: %q", res.Content)
	}
	if _, err := os.Stat(filepath.Join(dir, ".github/new.yml")); err == nil {
		t.Fatal("a write through a dangling link created .github/new.yml")
	}
	// edit: write rules apply to it, and its own deny rule.
	if res := callJSON(t, env, "edit", map[string]any{"path": "src/a.go", "old_string": "needle", "new_string": "thread"}); res.IsError {
		t.Errorf("edit src/a.go: %q", res.Content)
	}
	if res := callJSON(t, env, "edit", map[string]any{"path": "src/sub/b.go", "old_string": "needle", "new_string": "x"}); !res.IsError || !strings.Contains(res.Content, "edit(src/sub/**)") {
		t.Errorf("edit src/sub/b.go: %q", res.Content)
	}
	if res := callJSON(t, env, "edit", map[string]any{"path": "src/ci.yml", "old_string": "push", "new_string": "x"}); !res.IsError {
		t.Errorf("edit through src/ci.yml: %q", res.Content)
	}
}

// TestPathRulesRead: read, view_image, ls, glob and grep judge what they
// open; a denied file's content never comes back.
func TestPathRulesRead(t *testing.T) {
	_, env := policyEnv(t, "read(src/**),write", "read(**/.env)")
	for _, c := range []struct {
		tool string
		in   map[string]any
		ok   bool
	}{
		{"read", map[string]any{"path": "src/a.go"}, true},
		{"read", map[string]any{"path": "src/.env"}, false},
		{"read", map[string]any{"path": ".env"}, false},
		{"read", map[string]any{"path": "src/ci.yml"}, false},
		{"read", map[string]any{"path": "src/link/workflows/ci.yml"}, false},
		{"read", map[string]any{"path": "docs/readme.md"}, false},
		{"view_image", map[string]any{"path": "src/ci.yml"}, false},
		{"ls", map[string]any{"path": "src"}, true},
		{"ls", map[string]any{"path": "src/link"}, false},
		{"ls", map[string]any{}, false},
		{"glob", map[string]any{"pattern": "**", "path": "src/link"}, false},
		{"grep", map[string]any{"pattern": "needle", "path": "src/link"}, false},
	} {
		res := callJSON(t, env, c.tool, c.in)
		if res.IsError == c.ok {
			t.Errorf("%s %v: %q, want allowed %v", c.tool, c.in, res.Content, c.ok)
		}
		if !c.ok && strings.Contains(res.Content, "needle") {
			t.Errorf("%s %v: a denied file's content came back: %q", c.tool, c.in, res.Content)
		}
	}
	// grep over src searches src/a.go but not src/.env, and says so.
	res := callJSON(t, env, "grep", map[string]any{"pattern": "needle", "path": "src", "include_ignored": true})
	if res.IsError || !strings.Contains(res.Content, "a.go") || strings.Contains(res.Content, "TOKEN") || !strings.Contains(res.Content, "path rules deny") {
		t.Errorf("grep src: %q", res.Content)
	}
}

// TestPathRulesSwappedLink: a link swapped back and forth between a
// directory in src and ../.github while write calls run never lets a write
// land in .github: the write is judged in the directory it really opens.
func TestPathRulesSwappedLink(t *testing.T) {
	dir, env := policyEnv(t, "write(src/**)", "")
	target := filepath.Join(dir, "src/swap")
	real := filepath.Join(dir, "src/real")
	os.MkdirAll(real, 0o755)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; !stop.Load(); i++ {
			tmp := target + ".tmp"
			os.Remove(tmp)
			dest := "real"
			if i%2 == 1 {
				dest = "../.github"
			}
			os.Symlink(dest, tmp)
			os.Rename(tmp, target)
		}
	})
	deadline := time.Now().Add(2 * time.Second)
	wrote := 0
	for time.Now().Before(deadline) {
		res := callJSON(t, env, "write", map[string]any{"path": "src/swap/f.txt", "content": "x"})
		if !res.IsError {
			wrote++
		}
	}
	stop.Store(true)
	wg.Wait()
	if _, err := os.Stat(filepath.Join(dir, ".github/f.txt")); err == nil {
		t.Fatal("a write landed in .github through the swapped link")
	}
	if wrote == 0 {
		t.Log("no write got through while the link swapped (the judge refused every one)")
	}
}
