package policy

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBashTableAgainstBash runs every command of the table that the judge
// allows through real bash, with an empty PATH and a
// command_not_found_handle that records each program bash would start,
// and checks that each is one the rules allow. mvdan.cc/sh's interpreter
// (FuzzBash's oracle) reads text as its parser does; bash is the shell the
// bash tool runs, and where the two read a command differently (a
// backslash-newline, quotes in ${x:-…}, a comment, a here-document's
// end) only bash shows what really starts. Skipped without bash.
func TestBashTableAgainstBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	p := mustNew(t, strict)
	handler := "command_not_found_handle() { printf '%s\\037' \"$@\" >> \"$AWL_CALLS\"; printf '\\n' >> \"$AWL_CALLS\"; }\n"
	for _, c := range bashCases {
		if p.Bash(c.cmd) != nil {
			continue
		}
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "src"), 0o755)
		calls := filepath.Join(t.TempDir(), "calls")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cmd := exec.CommandContext(ctx, bash, "-c", handler+c.cmd)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + t.TempDir(), "HOME=" + dir, "AWL_CALLS=" + calls}
		cmd.Stdin = strings.NewReader("")
		cmd.Run()
		cancel()
		log, _ := os.ReadFile(calls)
		for _, line := range bytes.Split(bytes.TrimSpace(log), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			words := strings.Split(strings.TrimSuffix(string(line), "\x1f"), "\x1f")
			if d := concrete(p, words); d != "" {
				t.Errorf("%q: allowed, but bash starts %q: %s", c.cmd, words, d)
			}
		}
	}
}
