package policy

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// gitRules allow git and deny its push: what a job that may commit but
// not publish sets.
var gitRules = Options{Allow: []string{"bash(git *),bash(echo *)"}, Deny: []string{"bash(git push *)"}}

// gitConfigCases try to get past bash(git push *) with what git's own
// command line makes it run: an alias, a setting that runs a command, the
// variables that carry settings; allow is whether the command passes
// gitRules.
var gitConfigCases = map[string]bool{
	// An alias given on the command line is judged as what it stands for.
	"git -c alias.p=push p origin":                false,
	"git -c alias.p=push p":                       false,
	"git -c alias.P=push p origin":                false, // names are matched without regard to case
	"git -c ALIAS.p=push p":                       false,
	"git -c alias.p=push P origin":                false,
	"git -c alias.p='push --force' p origin main": false,
	"git -c alias.p=\"push\" p":                   false,
	"git -c alias.p='--no-pager push' p":          false,
	"git -c alias.p=' push' p":                    false, // git fails: '' is no command
	"git -c alias.p=pu\\sh p":                     false,
	"git -c alias.p='\"pu\"sh' p":                 false,
	"git -c alias.a=b -c alias.b=push a origin":   false, // a chain
	"git -c alias.b=push -c alias.a=b a":          false,
	"git -c alias.a='b -f' -c alias.b=push a":     false,
	"git -c alias.p=status -c alias.p=push p":     false, // the last one counts
	"git -C . -c alias.p=push p":                  false,
	"git -c alias.p=push -C . p":                  false,
	"git --no-pager -c alias.p=push p":            false,
	"git -c alias.status=push status":             false, // git runs status; both forms are judged
	"git -c alias.p=push \"$SUB\" origin":         false,
	"env git -c alias.p=push p":                   false,
	"command git -c alias.p=push p":               false,
	"sudo git -c alias.p=push p":                  false,
	"echo x | xargs git -c alias.p=push p":        false,
	"git -c alias.p.command=push p":               false, // alias.NAME.* : an alias git may read
	// An alias's own options are git's: git reads its -c as the command
	// line's, so an alias it defines is expanded next.
	"git -c 'alias.p=-c alias.q=push q' p origin":                  false,
	"git -c 'alias.p=-c alias.q=status -c alias.q=push q' p":       false,
	"git -c 'alias.p=-c alias.Q=push q' p":                         false,
	"git -c 'alias.p=-c alias.q=!./x q' p":                         false,
	"git -c 'alias.p=--config-env=alias.q=V q' p":                  false,
	"git -c 'alias.p=-c core.sshCommand=./x fetch' p":              false,
	"git -c 'alias.p=-c core.pager=./x log' p":                     false,
	"git -c 'alias.p=-c help.autocorrect=immediate pish' p origin": false,
	"git -c 'alias.p=--exec-path=./x status' p":                    false,
	"git -c 'alias.p=-c alias.q=push status' p":                    true, // q is not used
	"git -c 'alias.p=-c alias.q=status q' p":                       true,
	"git -c 'alias.p=-c user.name=ci commit -m x' p":               true,
	"git -c 'alias.p=-c alias.q=push -c alias.q=status q' p":       true, // the last one counts
	"git --config-env=alias.p=P p":                                 false,
	"git --config-env alias.p=P p":                                 false,
	"P=push git --config-env=alias.p=P p":                          false,
	"git -c alias.p='!git push' p":                                 false, // a shell alias
	"git -c alias.p='!echo hi' p":                                  false,
	"git -c alias.p=\"$X\" p":                                      false,
	"git -c \"alias.p=$X\" p":                                      false,
	"git -c alias.p=status -c alias.q='!sh' p":                     true,  // q is not used
	"git -c alias.p='unclosed p":                                   false, // the shell refuses the quote
	"git -c alias.p=\"'unclosed\" p":                               false, // git refuses it
	"git -c alias.st=status st":                                    true,
	"git -c alias.l='log --oneline -1' l":                          true,
	"git -c alias.p=push status":                                   true,
	"git -c alias.p=push commit -m push":                           true,
	"git -c alias.a=b -c alias.b=a a":                              true, // git refuses the loop
	"git -c alias.p= p":                                            false,
	"git -c alias.p --version":                                     true,
	"git -c alias.st=status -c alias.l='log -1' st":                true,
	"git -c alias.sw='switch -c' sw push-fix":                      true,
	"git -c user.name=ci -c user.email=ci@x commit -m x":           true,
	"git -c user.name=\"$N\" commit -m x":                          true,
	"git -c \"user.name=$N\" commit -m x":                          true,
	// Settings whose value is a command git runs cannot be judged.
	"git -c core.pager='sh -c x' log":                    false,
	"git -c core.pager=./evil log":                       false,
	"git -c core.pager=cat log":                          true,
	"git -c core.pager= log":                             true,
	"git -c pager.log=false log":                         true,
	"git -c pager.log='rm x' log":                        false,
	"git -c core.sshCommand=x fetch":                     false,
	"git -c core.sshcommand=x fetch":                     false,
	"git -c CORE.SSHCOMMAND=x fetch":                     false,
	"git -c core.editor=x commit":                        false,
	"git -c core.editor=true commit":                     true,
	"git -c sequence.editor=x rebase -i HEAD~2":          false,
	"git -c core.fsmonitor=./x status":                   false,
	"git -c core.fsmonitor=false status":                 true,
	"git -c core.hooksPath=h commit -m x":                false,
	"git -c core.askPass=./x fetch":                      false,
	"git -c core.gitProxy=./x fetch":                     false,
	"git -c core.alternateRefsCommand=x fetch":           false,
	"git -c credential.helper=./x fetch":                 false,
	"git -c credential.https://x.example.helper=x fetch": false,
	"git -c credential.helper= fetch":                    true,
	"git -c diff.external=./x diff":                      false,
	"git -c diff.x.textconv=./x diff":                    false,
	"git -c diff.x.command=./x diff":                     false,
	"git -c filter.x.clean=./x add .":                    false,
	"git -c filter.x.process=./x checkout .":             false,
	"git -c merge.x.driver=./x merge y":                  false,
	"git -c gpg.program=./x commit -S -m x":              false,
	"git -c gpg.ssh.program=./x commit -S -m x":          false,
	"git -c interactive.diffFilter=./x add -p":           false,
	"git -c include.path=x.cfg p":                        false,
	"git -c includeIf.onbranch:main.path=x.cfg st":       false,
	"git -c init.templateDir=t init":                     false,
	"git -c protocol.ext.allow=always fetch 'ext::x'":    false,
	"git -c protocol.allow=always fetch 'ext::x'":        false,
	"git -c protocol.file.allow=always submodule update": true,
	"git -c remote.origin.uploadpack=./x fetch":          false,
	"git -c remote.origin.vcs=x fetch":                   false,
	"git -c submodule.x.update='!./x' submodule update":  false,
	"git -c tar.x.command=./x archive --format=x HEAD":   false,
	"git -c uploadpack.packObjectsHook=./x fetch":        false,
	"git -c help.autocorrect=immediate pish origin":      false, // runs push
	"git -c help.autocorrect=0 pish origin":              true,
	"git -c hook.x.command=./x commit -m x":              false,
	"git --config-env=core.pager=P log":                  false,
	"git --config-env=user.name=N commit -m x":           true,
	"git --exec-path=./x status":                         false,
	"git --exec-path":                                    true,
	// An option word the text does not fix may split into an option and a
	// subcommand: git -C $D status with D='. push'.
	"git -C $D status":                false,
	"git -C \"$D\" status":            true,
	"git -c $KV status":               false,
	"git -c \"$KV\" status":           false,
	"git -c user.name=$N commit -m x": false,
	"git $OPT status":                 false,
	// The variables that carry settings cannot be judged, before the
	// command, through env or exported.
	"GIT_CONFIG_PARAMETERS=\"'alias.p'='push'\" git p":                                  false,
	"env GIT_CONFIG_PARAMETERS=\"'alias.p'='push'\" git p":                              false,
	"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p":         false,
	"env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p":     false,
	"export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push; git p": false,
	"GIT_CONFIG_GLOBAL=x.cfg git p":                                                     false,
	"GIT_CONFIG_SYSTEM=x.cfg git p":                                                     false,
	"GIT_CONFIG=x.cfg git p":                                                            false,
	"git status":                                                                        true,
}

// TestBashGitConfig: git's command line cannot take a push, or a command,
// past the rules.
func TestBashGitConfig(t *testing.T) {
	p := mustNew(t, gitRules)
	for cmd, allow := range gitConfigCases {
		if d := p.Bash(cmd); (d == nil) != allow {
			t.Errorf("%q: allowed %v, want %v (%v)", cmd, d == nil, allow, d)
		}
	}
	d := p.Bash("git -c alias.p='!git push' p")
	if d == nil || !strings.Contains(d.Reason, "git alias p runs a shell command") || !strings.Contains(d.Reason, "cannot be judged") {
		t.Errorf("shell alias: denial %+v", d)
	}
	d = p.Bash("git -c core.sshCommand='ssh -o ProxyCommand=x' fetch")
	if d == nil || !strings.Contains(d.Reason, "git -c core.sshCommand=…: the setting makes git run a command") {
		t.Errorf("core.sshCommand: denial %+v", d)
	}
	d = p.Bash("git -c alias.p=push p origin")
	if d == nil || d.Rule != "bash(git push *)" {
		t.Errorf("alias: denial %+v, want rule bash(git push *)", d)
	}
	// With bash allowed whole and no bash deny rule, nothing is judged.
	whole := mustNew(t, Options{Allow: []string{"bash"}})
	if d := whole.Bash("git -c alias.p='!rm x' p"); d != nil {
		t.Errorf("bash allowed whole: denied %v", d)
	}
}

// TestBashGitConfigAgainstBash runs every command gitRules allow through
// bash, and each git command bash starts through real git, which says in
// its trace what it runs: each must be one the rules allow.
func TestBashGitConfigAgainstBash(t *testing.T) {
	p := mustNew(t, gitRules)
	for cmd := range gitConfigCases {
		checkInBash(t, p, cmd)
	}
}

// TestGitRunsSeesAliases: the oracle's own check: real git's trace shows
// the push an alias stands for, and a shell alias's command.
func TestGitRunsSeesAliases(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	runs := gitRuns(t, []string{"git", "-c", "alias.a=b", "-c", "alias.b=push --dry-run", "a", "origin"})
	if !slices.ContainsFunc(runs, func(r []string) bool { return slices.Equal(r, []string{"git", "push", "--dry-run", "origin"}) }) {
		t.Errorf("alias chain: git runs %q, want git push --dry-run origin among them", runs)
	}
	runs = gitRuns(t, []string{"git", "-c", "alias.p=!echo hi", "p"})
	if !slices.ContainsFunc(runs, func(r []string) bool { return r[0] != "git" }) {
		t.Errorf("shell alias: git runs %q, want the shell command among them", runs)
	}
}

// TestSplitGitAlias splits aliases' values as real git does: each value
// is given to git as an alias, and the expansion its trace shows (or its
// refusal) must be what splitGitAlias returns.
func TestSplitGitAlias(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	for _, v := range []string{
		"push", "push --force", "  push  x  ", "push\tx", "push\vx", "push\fx", "push\rx", "push\nx",
		`"pu sh" x`, `'pu sh' x`, `pu"s h"`, `a\ b`, `a\\b`, `"a\"b"`, `'a\b'`, `"a\b"`, `'a'\''b'`,
		`"unclosed`, `'unclosed`, `x\`, `""`, `x ""`, `'' x`,
	} {
		want, ok := splitGitAlias(v)
		dir := t.TempDir()
		cmd := exec.Command(git, "-c", "alias.zz="+v, "zz")
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + t.TempDir(), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TRACE=1"}
		var trace bytes.Buffer
		cmd.Stderr = &trace
		cmd.Run()
		_, got, expanded := strings.Cut(trace.String(), "trace: alias expansion: zz => ")
		if expanded != ok {
			t.Errorf("%q: git expanded it %v, splitGitAlias %v (%q): %s", v, expanded, ok, want, trace.String())
			continue
		}
		if !ok {
			continue
		}
		got, _, _ = strings.Cut(got, "\n")
		if words := unquoteGitTrace(got); !slices.Equal(words, want) {
			t.Errorf("%q: git splits it %q, splitGitAlias %q", v, words, want)
		}
	}
}
