package tool

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeConfiner records what the tools asked of it.
type fakeConfiner struct {
	wrapped  []string
	wrapErr  error
	denied   string // CheckWrite refuses paths under this directory
	checked  []string
	extraEnv string
}

func (f *fakeConfiner) Start(cmd *exec.Cmd) error {
	f.wrapped = append(f.wrapped, strings.Join(cmd.Args, " "))
	cmd.Env = append(cmd.Env, f.extraEnv)
	if f.wrapErr != nil {
		return f.wrapErr
	}
	return cmd.Start()
}

func (f *fakeConfiner) CheckWrite(path string) error {
	f.checked = append(f.checked, path)
	if strings.HasPrefix(path, f.denied+string(filepath.Separator)) {
		return errors.New("Permission denied\n(fake sandbox)")
	}
	return nil
}

func (f *fakeConfiner) Note() string { return "(fake sandbox)" }

func TestConfine(t *testing.T) {
	dir := tree(t, map[string]string{"a.txt": "one\n"})
	outside := t.TempDir()
	fc := &fakeConfiner{denied: outside, extraEnv: "CONFINED=yes"}
	env := Env{Dir: dir, Confine: fc}

	// bash starts through Start, after its environment is set.
	res := call(t, env, "bash", args(t, map[string]any{"command": "echo $CONFINED"}))
	want(t, res, false, "yes\n", "exit code: 0")
	if strings.Contains(res.Content, "fake sandbox") {
		t.Errorf("a successful result has the note:\n%s", res.Content)
	}
	if len(fc.wrapped) != 1 || !strings.HasSuffix(fc.wrapped[0], "bash -c echo $CONFINED") {
		t.Errorf("wrapped %q", fc.wrapped)
	}
	// A failure ends with the note, on a line of its own.
	res = call(t, env, "bash", args(t, map[string]any{"command": "printf no; exit 3"}))
	want(t, res, true, "no\nexit code: 3\n(fake sandbox)")
	if !strings.HasSuffix(res.Content, "\n(fake sandbox)") {
		t.Errorf("note not last:\n%s", res.Content)
	}
	// A Start failure is a result, and nothing runs.
	fc.wrapErr = errors.New("no helper")
	res = call(t, env, "bash", args(t, map[string]any{"command": "touch ran"}))
	want(t, res, true, "bash: could not start: no helper")
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the command ran although Start failed")
	}

	// write and edit ask before writing, with the path resolved, and name
	// it as the model wrote it when refused.
	target := filepath.Join(outside, "x.txt")
	want(t, call(t, env, "write", args(t, map[string]any{"path": target, "content": "x"})), true, "write: "+target+": Permission denied\n(fake sandbox)")
	if err := os.WriteFile(target, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want(t, call(t, env, "edit", args(t, map[string]any{"path": target, "old_string": "one", "new_string": "two"})), true, "edit: "+target+": Permission denied\n(fake sandbox)")
	if b, _ := os.ReadFile(target); string(b) != "one\n" {
		t.Errorf("edited through a refusal: %q", b)
	}
	want(t, call(t, env, "write", args(t, map[string]any{"path": "b.txt", "content": "b"})), false, "created b.txt")
	want(t, call(t, env, "edit", args(t, map[string]any{"path": "a.txt", "old_string": "one", "new_string": "two"})), false, "edited a.txt")
	if got := fc.checked[len(fc.checked)-2:]; got[0] != filepath.Join(dir, "b.txt") || got[1] != filepath.Join(dir, "a.txt") {
		t.Errorf("checked %q, want the resolved paths", got)
	}
}
