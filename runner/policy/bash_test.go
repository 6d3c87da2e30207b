package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func mustNew(t testing.TB, o Options) *Policy {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// strict allows a few commands and denies two families: what a CI job
// would set.
var strict = Options{
	Allow: []string{"bash(git status),bash(git diff *),bash(go test ./...),bash(npm test),bash(echo *),bash(ls *),bash(cat *),bash(grep *),bash(true),bash(cd *),bash(find *),read,write(src/**)"},
	Deny:  []string{"bash(git push *),bash(rm *)"},
}

// bashCases try to get past bash(git status) and its neighbours (the
// rules of strict) with every construct of the shell: allow is whether the
// command passes.
var bashCases = []struct {
	cmd   string
	allow bool
}{
	// Plain commands.
	{"git status", true},
	{"git status --short", false},
	{"git -c alias.s=status s", false}, // allow rules match the command as written
	{"git -c alias.status=push status", false},
	{"git  status", true},
	{"git diff", true},
	{"git diff HEAD~1 -- src", true},
	{"git log", false},
	{"go test ./...", true},
	{"go test ./... -run X", false},
	{"go test ./runner", false},
	{"npm test", true},
	{"npm install", false},
	{"rm -rf /", false},
	{"rm", false},
	{"git push origin main", false},
	{"git push", false},
	{"", true},
	{"   ", true},
	{"# just a comment", true},
	{"git status # rm -rf /", true},
	// Lists and operators.
	{"git status; rm -rf /", false},
	{"git status && rm -rf /", false},
	{"git status || rm -rf /", false},
	{"git status | rm -rf /", false},
	{"git status |& rm -rf /", false},
	{"git status & rm -rf /", false},
	{"git status &\nrm x", false},
	{"git status\nrm -rf /", false},
	{"git status\r\nrm -rf /", false},
	{"git status\r\n", false}, // bash runs git with "status\r"
	{"git status; git diff; go test ./...", true},
	{"git status && echo ok || echo fail", true},
	{"git status | cat", true},
	{"! git status", true},
	{"! rm x", false},
	// Grouping.
	{"(git status)", true},
	{"(rm x)", false},
	{"{ git status; rm x; }", false},
	{"{ git status; echo done; }", true},
	{"( ( ( rm x ) ) )", false},
	// Substitutions.
	{"echo $(rm -rf /)", false},
	{"echo `rm -rf /`", false},
	{"echo \"$(rm -rf /)\"", false},
	{"echo $(git status)", true},
	{"echo \"`git status`\"", true},
	{"cat <(rm x)", false},
	{"cat <(git status)", true},
	{"echo >(rm x)", false},
	{"echo $(echo $(echo $(rm x)))", false},
	{"echo ${x:-$(rm x)}", false},
	{"echo ${x/a/$(rm x)}", false},
	{"echo ${x#$(rm x)}", false},
	{"echo \"${x:=`rm x`}\"", false},
	// The words of a command are read around the commands nested in them
	// (the judge reuses one buffer for both): neither may take the
	// other's place.
	{"rm \"$(git status)\"", false},
	{"rm $(git status) $(git status --short)", false},
	{"git status \"$(echo a b c d e f g h)\"", false},
	{"git diff \"$(echo a b c d e f g h)\" \"$(rm x)\"", false},
	{"git diff \"$(echo $(echo a b c d e f g h) i j)\" HEAD", true},
	{"echo a b c d e f g h i j k l m n o p q r s t u v w x y z \"$(git push origin)\" z", false},
	{"git push \"$(echo a b c d e f g h i j k l m n o p q r s t u v w x y z)\"", false},
	{"$(git status) rm", false},
	{"cat $(ls $(git status) a) b > src/a; rm -f /", false},
	// Where bash reads the text otherwise than the parser (each checked
	// against bash 5.2): a backslash-newline in double quotes or an
	// unquoted here-document joins "$" and "(…)", and single quotes in a
	// double-quoted ${x:-…} are text, not quotes.
	{"echo \"$\\\n(rm x)\"", false},
	{"echo \"${x:-$\\\n(rm x)}\"", false},
	{"echo \"$(echo \"$\\\n(rm x)\")\"", false},
	{"cat <<EOF\n$\\\n(rm x)\nEOF", false},
	{"cat <<EOF\n$\\\n{x:-$(rm x)}\nEOF", false},
	{"echo \"${x:='$(rm x)'}\"", false},
	{"echo \"${x:+'$(rm x)'}\"", false},
	{"echo \"${x-'$(rm x)'}\"", false},
	{"echo \"${x:-'`rm x`'}\"", false},
	{"echo \"${x:-'${y:-$(rm x)}'}\"", false},
	{"echo \"${x:-$'$(rm x)'}\"", false},
	{"cat <<EOF\n${x:-'$(rm x)'}\nEOF", false},
	{"echo ${x-'$(rm x)'}", true},
	{"echo \"${x:-\\$(rm x)}\"", true},
	{"echo \"a\\\nb $x\"", true},
	{"cat <<'EOF'\n$\\\n(rm x)\nEOF", true},
	{"cat <<E\\OF\n$(rm x)\nEOF", true},
	{"cat <<E\"O\"F\n`rm x`\nEOF", false}, // literal to bash, expanded by mvdan.cc/sh: denied
	// bash joins an unquoted here-document's backslash-newlines before it
	// looks for the delimiter: EO\<newline>F ends it, and the next line
	// is a command.
	{"cat <<EOF\nx\nEO\\\nF\nrm x\nEOF", false},
	{"cat <<E\\\nOF\nx\nEO\\\nF\nrm x\nEOF", false}, // the delimiter joined too
	{"cat <<EOF\\\n\nx\nEO\\\nF\nrm x\nEOF", false},
	{"cat <<-EOF\n\tx\n\tE\\\nOF\nrm x\nEOF", false},
	{"cat <<EOF\na \\\nb\nEOF", true},
	{"cat <<'EOF'\nx\nEO\\\nF\nrm x\nEOF", true},
	// A comment ends at the newline in bash even after a backslash; the
	// parser would read the next line into the comment.
	{"echo ok # look \\\nrm x", false},
	{"echo ok #\\\nrm -rf /", false},
	{"git status # look \\\nrm x", false},
	{"echo a \\\n# c\ngit status", true},
	{"echo 'a # b \\\n'; git status", true},
	// Here-documents.
	{"cat <<EOF\n$(rm -rf /)\nEOF", false},
	{"cat <<'EOF'\n$(rm -rf /)\nEOF", true},
	{"cat <<EOF\nhello\nEOF", true},
	{"cat <<<\"$(rm x)\"", false},
	{"cat <<-EOF\n\t`rm x`\n\tEOF", false},
	{"rm x <<EOF\nEOF", false},
	// Compound commands.
	{"if git status; then rm x; fi", false},
	{"if rm x; then git status; fi", false},
	{"if git status; then echo a; else rm x; fi", false},
	{"if git status; then echo a; elif rm x; then echo b; fi", false},
	{"if git status; then echo a; else echo b; fi", true},
	{"for f in a b; do rm $f; done", false},
	{"for f in $(rm x); do echo $f; done", false},
	{"for f in a b; do echo $f; done", true},
	{"while git status; do rm x; done", false},
	{"until rm x; do git status; done", false},
	{"while true; do echo y; done", true},
	{"case x in x) rm x;; esac", false},
	{"case $(rm x) in x) echo;; esac", false},
	{"case x in $(rm x)) echo;; esac", false},
	{"case x in a) echo a;; b) git status;; esac", true},
	{"case x in a) echo a;& b) rm x;;& esac", false},
	{"select x in a; do rm x; done", false},
	// Functions.
	{"f() { rm -rf /; }", false},
	{"f() { rm -rf /; }; f", false},
	{"function f { rm x; }", false},
	{"f() { git status; }; f", false},
	{"git() { rm -rf /; }; git status", false},
	{"f() ( rm x )", false},
	// What cannot be judged from the text.
	{"eval 'rm -rf /'", false},
	{"eval git status", false},
	{"source ./x.sh", false},
	{". ./x.sh", false},
	{"bash -c 'rm -rf /'", false},
	{"sh -c 'git status'", false},
	{"/bin/bash -c 'rm x'", false},
	{"zsh -c 'rm x'", false},
	{"bash x.sh", false},
	{"echo rm x | bash", false},
	{"busybox sh -c 'rm x'", false},
	{"exec rm x", false},
	{"exec git status", false},
	{"$CMD", false},
	{"$CMD status", false},
	{"${CMD} status", false},
	{"\"$(echo rm)\" -rf /", false},
	{"$(echo rm) -rf /", false},
	{"`echo rm` -rf /", false},
	{"alias git='rm -rf /'", false},
	{"trap 'rm x' EXIT", false},
	{"enable -f ./evil.so evil", false},
	{"hash -p /bin/rm git; git status", false},
	{"shopt -s expand_aliases", false},
	{"fc -s", false},
	{"mapfile -C 'rm x' -c 1 a < f", false},
	{"coproc rm x", false},
	{"coproc git status", true},
	// Wrappers: the wrapped command is judged.
	{"env rm -rf /", false},
	{"env git status", true},
	{"env -i FOO=1 git status", true},
	{"env -u HOME git status", true},
	{"env -S 'rm -rf /'", false},
	{"env --split-string='rm x'", false},
	{"env PATH=/tmp git status", false},
	{"env LD_PRELOAD=/tmp/x.so git status", false},
	{"env $X git status", false},
	{"/usr/bin/env rm x", false},
	{"command rm x", false},
	{"command git status", true},
	{"command -p rm x", false},
	{"command -v rm", false},
	{"builtin eval 'rm x'", false},
	{"builtin echo hi", true},
	{"nohup rm x", false},
	{"nohup git status", true},
	{"nice -n 5 rm x", false},
	{"nice git status", true},
	{"timeout 10 rm x", false},
	{"timeout -s KILL 10 go test ./...", true},
	{"timeout -s $A0 0 go test ./...", false}, // $A0 empty: the duration is "go" (found by FuzzBash)
	{"env -u $X rm x", false},
	{"xargs -n $N rm", false},
	{"stdbuf -oL rm x", false},
	{"setsid rm x", false},
	{"time rm x", false},
	{"time git status", true},
	{"command env nohup rm x", false},
	{"xargs rm < files", false},
	{"echo a | xargs rm", false},
	{"echo a | xargs -0 -n1 rm -f", false},
	{"echo a | xargs -I{} rm {}", false},
	{"echo a | xargs echo", true},
	{"echo a | xargs", true},
	{"echo a | xargs git status", false},
	{"find . -name x -exec rm {} \\;", false},
	{"find . -name x -exec rm {} +", false},
	{"find . -execdir rm {} \\;", false},
	{"find . -ok rm {} \\;", false},
	{"find . -name '*.go' -exec grep -n foo {} +", true},
	{"find . -name '*.go' -exec cat {} \\; -exec rm {} \\;", false},
	{"find . $ARGS", false},
	{"find . -exec env rm {} \\;", false},
	// Assignments and redirections do not hide the command.
	{"FOO=1 rm x", false},
	{"FOO=1 git status", true},
	{"FOO=$(rm x) git status", false},
	{"PATH=/tmp git status", false},
	{"PATH=/tmp:$PATH; git status", false},
	{"export PATH=/tmp; git status", false},
	{"LD_PRELOAD=/tmp/evil.so git status", false},
	{"BASH_ENV=/tmp/x bash", false},
	{"GIT_EXTERNAL_DIFF=./evil.sh git diff", false},
	{"GIT_PAGER='sh -c evil' git diff", false},
	{"export GIT_CONFIG_PARAMETERS=\"'core.pager=sh -c evil'\"; git diff", false},
	{"GIT_DIR=/tmp/other/.git git status", false},
	{"PAGER=./evil git diff", false},
	{"env GIT_SSH_COMMAND=evil git status", false},
	{"GOFLAGS=-toolexec=./evil go test ./...", false},
	{"NODE_OPTIONS='--require ./evil.js' npm test", false},
	{"npm_config_script_shell=./evil npm test", false},
	{"GIT_TERMINAL_PROMPT=0 git status", true},
	{"CGO_ENABLED=0 go test ./...", true},
	{"PS4='$(rm x)'", false},
	{"X=1", true},
	{"X=$(rm x)", false},
	{"a[$(rm x)]=1", false},
	{"export FOO=bar; git status", true},
	{"declare -n r=x", false},
	{"declare -i x=1", false},
	{"declare $X", false},
	{"local x=$(rm x)", false},
	{"> out rm x", false},
	{"2>/dev/null rm x", false},
	{"git status 2>/dev/null", true},
	{"git status > /dev/null 2>&1", true},
	{"git status >&2", true},
	{"git status 2>&-", true},
	{"git status > $(rm x)", false},
	{"git status < <(rm x)", false},
	// Redirections that write are judged by the write rules.
	{"git status > src/status.txt", true},
	{"git status > .github/workflows/ci.yml", false},
	{"git status >> .github/x", false},
	{"git status &> .github/x", false},
	{"git status &>> .github/x", false},
	{"git status >| .github/x", false},
	{"git status <> .github/x", false},
	{"git status >& .github/x", false},
	{"git status > src/../.github/x", false},
	{"git status > /etc/passwd", false},
	{"git status > $OUT", false},
	{"git status > ~/x", false},
	{"git status > src/$X", false},
	{"{ git status; } > .github/x", false},
	{"(git status) > .github/x", false},
	{"f() { git status; } > .github/x", false},
	{"git status > src/a; cd ..; git status > src/a", false},
	{"cd / && git status > src/x", false},
	{"git status < .github/x", true},
	// Quoting tricks.
	{"g'i't status", true},
	{"\"git\" \"status\"", true},
	{"'rm' x", false},
	{"r\\m x", false},
	{"\\rm x", false},
	{"r''m x", false},
	{"r\"\"m x", false},
	{"$'rm' x", false},
	{"$'\\x72m' x", false},
	{"$'\\x67it' status", true},
	{"$\"rm\" x", false},
	{"git\\ status", false},
	{"'git status'", false},
	{"git st\\\natus", true},
	{"r\\\nm x", false},
	{"git sta'tus'", true},
	{"git 'status;rm' x", false},
	{"echo 'a;rm x'", true},
	{"echo \"a;rm x\"", true},
	{"echo a\\;rm x", true},
	{"git status\\;rm x", false},
	// Globs and braces in command names and arguments.
	{"/bin/r? x", false},
	{"r* x", false},
	{"[r]m x", false},
	{"{rm,x}", false},
	{"{git,status}", false},
	{"git status{,}", false},
	{"git s*", false},
	{"git diff *.go", true},
	{"go test ./...{,}", false},
	{"?it status", false},
	{"@(rm) x", false},
	// Arithmetic and tests.
	{"echo $((1+2))", true},
	{"echo $(( $(rm x) ))", false},
	{"echo $((x))", false},
	{"echo $((a[$(rm x)]))", false},
	{"((x=1))", false},
	{"((1))", true},
	{"(( $(rm x) ))", false},
	{"let x=1", false},
	{"for ((i=0; i<3; i++)); do echo $i; done", false},
	{"echo ${a[$(rm x)]}", false},
	{"echo ${x:$(rm x)}", false},
	{"echo ${!x}", false},
	{"echo ${x@P}", false},
	{"echo ${x@Q}", true},
	{"[[ $x -eq 1 ]]", false},
	{"[[ -v 'a[$(rm x)]' ]]", false},
	{"[[ -n $(rm x) ]]", false},
	{"[[ $x == y ]]", true},
	{"[[ $x =~ $(rm x) ]]", false},
	{"echo $[1+1]", true},
	{"read 'a[$(rm x)]'", false},
	{"unset 'a[$(rm x)]'", false},
	{"printf -v 'a[$(rm x)]' x", false},
	// Parse errors are denied with the parser's message.
	{"git status (", false},
	{"echo $(", false},
	{"if true; then", false},
	{"git status 'unterminated", false},
	{"case", false},
}

// TestBashTable tries to get past bash(git status) and its neighbours with
// every construct of the shell: allow is whether the command passes.
func TestBashTable(t *testing.T) {
	p := mustNew(t, strict)
	for _, c := range bashCases {
		d := p.Bash(c.cmd)
		if got := d == nil; got != c.allow {
			t.Errorf("%q: allowed %v, want %v (%v)", c.cmd, got, c.allow, d)
		}
	}
}

// TestBashDenialNamesRule: a denial names the rule and says why.
func TestBashDenialNamesRule(t *testing.T) {
	p := mustNew(t, strict)
	d := p.Bash("git status && git push --force")
	if d == nil || d.Rule != "bash(git push *)" || !strings.Contains(d.Reason, "git push --force") {
		t.Fatalf("denial %+v: want rule bash(git push *) and the command", d)
	}
	d = p.Bash("git log")
	if d == nil || d.Rule != "" || !strings.Contains(d.Reason, `"git log" is not allowed by any rule`) || !strings.Contains(d.Reason, "bash(git status)") {
		t.Fatalf("denial %+v", d)
	}
	d = p.Bash("echo $(")
	if d == nil || !strings.Contains(d.Reason, "does not parse") {
		t.Fatalf("denial %+v", d)
	}
	d = p.Bash("eval x")
	if d == nil || !strings.Contains(d.Reason, "cannot be judged") {
		t.Fatalf("denial %+v", d)
	}
}

// TestBashWhole: with bash allowed whole and no bash deny rule, what cannot
// be judged runs; a bash deny rule brings the judge back.
func TestBashWhole(t *testing.T) {
	whole := mustNew(t, Options{Allow: []string{"bash,read"}})
	for _, cmd := range []string{"eval 'rm x'", "bash -c 'x'", "$X", "rm -rf x"} {
		if d := whole.Bash(cmd); d != nil {
			t.Errorf("bash allowed whole: %q denied: %v", cmd, d)
		}
	}
	none := mustNew(t, Options{})
	if d := none.Bash("eval 'rm x'; $(("); d != nil {
		t.Errorf("no rules: denied %v", d)
	}
	deny := mustNew(t, Options{Deny: []string{"bash(rm *)"}})
	for cmd, allow := range map[string]bool{"eval 'rm x'": false, "ls; rm x": false, "ls -l": true, "$X": false, "git status": true} {
		if d := deny.Bash(cmd); (d == nil) != allow {
			t.Errorf("deny bash(rm *): %q allowed %v, want %v (%v)", cmd, d == nil, allow, d)
		}
	}
	// Write rules alone judge the redirections, not the commands.
	write := mustNew(t, Options{Allow: []string{"bash,write(src/**)"}})
	for cmd, allow := range map[string]bool{"eval x": true, "echo > src/a": true, "echo > b": false, "echo > $X": false} {
		if d := write.Bash(cmd); (d == nil) != allow {
			t.Errorf("write(src/**): %q allowed %v, want %v (%v)", cmd, d == nil, allow, d)
		}
	}
}

// TestBashDenyOnly tries to get past deny rules alone (bash allowed
// otherwise, the judge on because a bash deny rule exists) with what runs
// a denied program under another name: a path, a launcher (sudo, flock,
// chrt, …), a program that runs its arguments through a shell, git's
// options before its subcommand. What the rules do not name still runs.
func TestBashDenyOnly(t *testing.T) {
	p := mustNew(t, denyOnly)
	for cmd, allow := range denyOnlyCases {
		if d := p.Bash(cmd); (d == nil) != allow {
			t.Errorf("%q: allowed %v, want %v (%v)", cmd, d == nil, allow, d)
		}
	}
}

// denyOnly denies two families and allows the rest of bash.
var denyOnly = Options{Deny: []string{"bash(rm *),bash(git push *)"}}

// denyOnlyCases are TestBashDenyOnly's commands: allow is whether the
// command passes denyOnly.
var denyOnlyCases = map[string]bool{
	"/bin/rm x":                              false,
	"./rm x":                                 false,
	"/usr/bin/git push origin":               false,
	"timeout 5 /bin/rm x":                    false,
	"env /bin/rm x":                          false,
	"command /bin/rm x":                      false,
	"time /bin/rm x":                         false,
	"echo f | xargs /bin/rm":                 false,
	"find . -exec /bin/rm {} +":              false,
	"sudo rm -rf /":                          false,
	"sudo -u root rm x":                      false,
	"sudo -E /bin/rm x":                      false,
	"doas rm x":                              false,
	"pkexec rm x":                            false,
	"flock /tmp/l rm x":                      false,
	"ionice -c3 rm x":                        false,
	"chrt 1 rm x":                            false,
	"taskset 1 /bin/rm x":                    false,
	"strace -f rm x":                         false,
	"chroot / rm x":                          false,
	"unshare -r rm x":                        false,
	"nsenter -t 1 -m rm x":                   false,
	"fakeroot rm x":                          false,
	"sudo git -C . push origin":              false,
	"sudo sudo rm x":                         false,
	"sudo $CMD x":                            false,
	"sudo rm$X":                              false,
	`sudo "$(echo rm)" x`:                    false,
	"watch rm x":                             false,
	"watch 'rm x'":                           false,
	"su -c 'rm x'":                           false,
	"script -qc 'rm x' /dev/null":            false,
	"ssh host rm x":                          false,
	"parallel rm ::: x":                      false,
	"git -C . push origin":                   false,
	"git -c core.sshCommand=x push":          false,
	"git --git-dir=.git --work-tree=. push":  false,
	"git --git-dir .git push":                false,
	"git --no-pager push":                    false,
	"git -C sub status":                      true,
	"git --no-pager log -1":                  true,
	"/usr/bin/git status":                    true,
	"sudo apt-get install -y jq":             true,
	"sudo -u nobody make test":               true,
	"flock /tmp/l make test":                 true,
	"echo rm x":                              true,
	"ls -l /bin/rm":                          true,
	"rmdir x":                                true,
	"git commit -m 'rm the old push code'":   true,
	"git -C . pushd":                         true,
	"git -c alias.p=push p origin":           false,
	"git -c alias.a=b -c alias.b=push a":     false,
	"git -c alias.p='!git push' p":           false,
	"git -c core.pager='rm x' log":           false,
	"git -C $D status":                       false,
	"git -c alias.st=status st":              true,
	"git -c alias.p=push status":             true,
	"git -c core.pager=cat log -1":           true,
	"printf '%s\\n' 'sudo rm x' > /dev/null": true,
	"cat <<'EOF'\nsudo rm -rf /\nEOF":        true,
}

// TestBashHuge: very long and very deeply nested commands are judged in
// bounded time, without exhausting the stack.
func TestBashHuge(t *testing.T) {
	p := mustNew(t, strict)
	cases := map[string]bool{
		strings.Repeat("git status; ", 20000) + "rm x":                                       false,
		strings.Repeat("git status; ", 20000):                                                true,
		strings.Repeat("$(", 5000) + "echo" + strings.Repeat(")", 5000):                      false,
		strings.Repeat("(", 5000) + "git status" + strings.Repeat(")", 5000):                 false,
		strings.Repeat("{ ", 3000) + "git status" + strings.Repeat("; }", 3000):              false,
		strings.Repeat("if true; then ", 3000) + "git status" + strings.Repeat("; fi", 3000): false,
		"echo " + strings.Repeat("a", 2<<20):                                                 false,
		"echo " + strings.Repeat("'a'", 100000):                                              true,
		"echo " + strings.Repeat("${x:-", 3000) + strings.Repeat("}", 3000):                  false,
	}
	for cmd, allow := range cases {
		start := time.Now()
		d := p.Bash(cmd)
		if (d == nil) != allow {
			t.Errorf("%.60q… (%d bytes): allowed %v, want %v (%v)", cmd, len(cmd), d == nil, allow, d)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("%.60q…: took %v", cmd, el)
		}
	}
}

// TestBashDenyOnlyShells: under deny rules alone, a shell, or a program
// that runs one, is never judged by its own words: what it runs is not in
// the text, directly or under a launcher (sudo sh -c 'rm x'), and a
// command name written with a path is git's too (/usr/bin/git -C . push).
func TestBashDenyOnlyShells(t *testing.T) {
	p := mustNew(t, Options{Deny: []string{"bash(rm *),bash(git push *)"}})
	for cmd, allow := range map[string]bool{
		"bash -c 'rm x'":                      false,
		"/bin/sh -c 'rm x'":                   false,
		"env bash -c 'rm x'":                  false,
		"bash x.sh":                           false,
		"sudo sh -c 'rm x'":                   false,
		"sudo bash -c 'rm x'":                 false,
		"sudo /bin/bash x.sh":                 false,
		"flock l bash -c 'rm x'":              false,
		"chroot / sh -c 'rm x'":               false,
		"strace -f sh -c 'rm x'":              false,
		"sudo env bash -c 'rm x'":             false,
		"sudo su -c 'rm x'":                   false,
		"sudo source x":                       false,
		"sudo -s 'rm x'":                      false,
		"sudo -iu root 'rm x'":                false,
		"sudo --login 'rm x'":                 false,
		"flock -c 'rm x' l":                   false,
		"flock -n /tmp/l -c 'rm x'":           false,
		"flock --command='rm x' l":            false,
		"/usr/bin/git -C . push":              false,
		"./git --no-pager push":               false,
		"sudo /usr/bin/git -C . push":         false,
		"git \"$SUB\" origin":                 false,
		"find /bin -name rm -exec {} -rf x ;": false,
		"sudo -u nobody make test":            true,
		"flock -n /tmp/l make test":           true,
		"sudo apt-get install -y jq":          true,
		"/usr/bin/git -C . status":            true,
		"sudo ls -l .":                        true,
		"bash --version > /dev/null; ls -l":   false,
	} {
		if d := p.Bash(cmd); (d == nil) != allow {
			t.Errorf("%q: allowed %v, want %v (%v)", cmd, d == nil, allow, d)
		}
	}
}

// TestBashRedirectThroughLink: a redirection's target is judged where it
// lands, the links of its directory followed: write(src/**) does not let
// echo > src/link/x write through src/link into .github.
func TestBashRedirectThroughLink(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"src/sub", ".github/workflows"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	os.Symlink("../.github", filepath.Join(dir, "src/link"))
	os.Symlink("sub", filepath.Join(dir, "src/inner"))
	p := mustNew(t, Options{Dir: dir, Allow: []string{"bash,write(src/**)"}})
	for cmd, allow := range map[string]bool{
		"echo x > src/a":                          true,
		"echo x > src/inner/a":                    true,
		"echo x > src/link/workflows/ci.yml":      false,
		"echo x >> src/link/workflows/ci.yml":     false,
		"echo x > src/a; echo y > src/link/x.yml": false,
		"echo x > src/sub/../link/x":              false,
	} {
		if d := p.Bash(cmd); (d == nil) != allow {
			t.Errorf("write(src/**): %q allowed %v, want %v (%v)", cmd, d == nil, allow, d)
		}
	}
}
