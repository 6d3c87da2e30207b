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
// command_not_found_handle that records each program bash would look up
// and start, and checks that each is one the rules allow. mvdan.cc/sh's
// interpreter (FuzzBash's oracle) reads text as its parser does; bash is
// the shell the bash tool runs, and where the two read a command
// differently (a backslash-newline, quotes in ${x:-…}, a comment, a
// here-document's end) only bash shows what really starts. Skipped
// without bash.
func TestBashTableAgainstBash(t *testing.T) {
	p := mustNew(t, strict)
	for _, c := range bashCases {
		checkInBash(t, p, c.cmd)
	}
}

// TestBashDenyOnlyAgainstBash does the same for the commands deny rules
// alone allow: what bash starts under a launcher, a path or git's
// options never matches a deny rule.
func TestBashDenyOnlyAgainstBash(t *testing.T) {
	p := mustNew(t, denyOnly)
	for cmd := range denyOnlyCases {
		checkInBash(t, p, cmd)
	}
}

// checkInBash runs cmd in bash, when p allows it, and fails the test for
// each program bash looks up in PATH that p's rules do not allow. A
// program named by a path runs for real, in a temporary directory.
func checkInBash(t *testing.T, p *Policy, cmdText string) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	if p.Bash(cmdText) != nil {
		return
	}
	// One printf a call (one write, so a pipeline's calls do not
	// interleave): each word, a newline in it made a space, then \036.
	const handler = "command_not_found_handle() { printf '%s\\037' \"${@//$'\\n'/ }\" $'\\036' >> \"$AWL_CALLS\"; }\n"
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	calls := filepath.Join(t.TempDir(), "calls")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "-c", handler+cmdText)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + t.TempDir(), "HOME=" + dir, "AWL_CALLS=" + calls}
	cmd.Stdin = strings.NewReader("")
	cmd.Run()
	log, _ := os.ReadFile(calls)
	for _, rec := range bytes.Split(log, []byte("\x1e\x1f")) {
		if len(rec) == 0 {
			continue
		}
		words := strings.Split(strings.TrimSuffix(string(rec), "\x1f"), "\x1f")
		if d := concrete(p, words); d != "" {
			t.Errorf("%q: allowed, but bash starts %q: %s", cmdText, words, d)
		}
	}
}
