//go:build unix

package tool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/awlrun/awl/internal/testenv"
)

// TestIgnoreHostileTree: named pipes where ignore files and sources should
// be, a directory link loop, and links to files: nothing blocks or loops.
func TestIgnoreHostileTree(t *testing.T) {
	dir := gitRepo(t, map[string]string{
		"a.txt":     "findme\n",
		"sub/b.txt": "findme\n",
	})
	for _, p := range []string{".ignore", "sub/.gitignore", "fifo.txt"} {
		if err := syscall.Mkfifo(filepath.Join(dir, p), 0o644); err != nil {
			testenv.Require(t, fmt.Sprintf("mkfifo: %v", err))
		}
	}
	if err := os.Symlink("..", filepath.Join(dir, "sub", "loop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	env := Env{Dir: dir}
	want(t, call(t, env, "grep", `{"pattern":"findme"}`), false, "a.txt:1: findme\nlink.txt:1: findme\nsub/b.txt:1: findme\n")
	res := call(t, env, "glob", `{"pattern":"**"}`)
	if res.Content != ".ignore\na.txt\nfifo.txt\nlink.txt\nsub/.gitignore\nsub/b.txt\nsub/loop\n" {
		t.Errorf("glob ** = %q", res.Content)
	}
	want(t, call(t, env, "ls", `{"path":"sub"}`), false, ".gitignore\nb.txt\nloop/\n")
}

// TestSearchStops: a cancelled search says so instead of returning part of
// the results as if they were all.
func TestSearchStops(t *testing.T) {
	dir := tree(t, map[string]string{"a.txt": "x\n", "d/b.txt": "x\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, in := range map[string]string{"grep": `{"pattern":"x"}`, "glob": `{"pattern":"**"}`} {
		res := builtinNamed(t, Env{Dir: dir}, name).Run(ctx, []byte(in))
		want(t, res, true, name+": stopped: context canceled")
	}
}
