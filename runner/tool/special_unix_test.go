//go:build unix

package tool

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/awlrun/awl/internal/testenv"
)

// TestSpecialFilesDoNotBlock: opening a FIFO for reading or writing blocks
// until the other end opens; every tool must refuse it instead.
func TestSpecialFilesDoNotBlock(t *testing.T) {
	dir := tree(t, map[string]string{"a.txt": "findme\n"})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		testenv.Require(t, fmt.Sprintf("mkfifo: %v", err))
	}
	env := Env{Dir: dir}
	want(t, call(t, env, "read", `{"path":"pipe"}`), true, "read: pipe is not a regular file but a named pipe")
	want(t, call(t, env, "edit", `{"path":"pipe","old_string":"a","new_string":"b"}`), true, "edit: pipe is not a regular file")
	want(t, call(t, env, "write", `{"path":"pipe","content":"x"}`), true, "write: pipe is not a regular file")
	want(t, call(t, env, "view_image", `{"path":"pipe"}`), true, "view_image: pipe: is a named pipe, not an image")
	want(t, call(t, env, "grep", `{"pattern":"findme"}`), false, "a.txt:1: findme")
	want(t, call(t, env, "read", `{"path":"/dev/zero"}`), true, "/dev/zero is not a regular file but a character device")
}
