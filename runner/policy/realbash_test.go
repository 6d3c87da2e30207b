package policy

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
		if filepath.Base(words[0]) != "git" {
			continue
		}
		for _, run := range gitRuns(t, words) {
			if run[0] != "git" {
				t.Errorf("%q: allowed, but git runs %q", cmdText, run)
			} else if d := concrete(p, run); d != "" {
				t.Errorf("%q: allowed, but git runs %q: %s", cmdText, run, d)
			}
		}
	}
}

// gitRuns asks real git what it runs for a git command bash would start:
// the commands its trace (GIT_TRACE) says it runs, built in, external
// (git-foo as git foo) or once the aliases of its command line are
// expanded, and any other program it starts (a shell alias, a pager). It
// runs in an empty directory that is no repository, with no
// configuration files and an empty PATH; nil without git.
func gitRuns(t *testing.T, words []string) [][]string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		return nil
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, git, words[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + t.TempDir(), "HOME=" + dir, "GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "GIT_TRACE=1"}
	cmd.Stdin = strings.NewReader("")
	var trace bytes.Buffer
	cmd.Stderr = &trace
	cmd.Run()
	var runs [][]string
	for _, line := range strings.Split(trace.String(), "\n") {
		_, rest, ok := strings.Cut(line, " trace: ")
		if !ok {
			continue
		}
		kind, argv, _ := strings.Cut(rest, ": ")
		switch kind {
		case "built-in", "exec", "run_command":
		default:
			continue
		}
		run := unquoteGitTrace(argv)
		if len(run) == 0 {
			continue
		}
		if sub, ok := strings.CutPrefix(run[0], "git-"); ok {
			run = append([]string{"git", sub}, run[1:]...)
		}
		if len(runs) == 0 || !slices.Equal(runs[len(runs)-1], run) {
			runs = append(runs, run) // exec, then run_command, of one command
		}
	}
	return runs
}

// unquoteGitTrace splits a command as git's trace writes it
// (sq_quote_argv_pretty): words at spaces, a word that needs it in single
// quotes, a quote in it as '\”.
func unquoteGitTrace(s string) []string {
	var words []string
	var b strings.Builder
	in, started := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			in, started = !in, true
		case c == '\\' && !in && i+1 < len(s):
			i++
			b.WriteByte(s[i])
			started = true
		case c == ' ' && !in:
			if started {
				words = append(words, b.String())
			}
			b.Reset()
			started = false
		default:
			b.WriteByte(c)
			started = true
		}
	}
	if started {
		words = append(words, b.String())
	}
	return words
}
