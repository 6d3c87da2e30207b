package policy

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// runsCode says whether name is a command that runs code the text does
// not show, and why: with any bash rule set they are denied unless bash is
// allowed whole. (This and the other sets of this file are switches, not
// maps: a package-level map is built by an initialiser at every start of
// awl, tools or not.)
func runsCode(name string) (why string, ok bool) {
	switch name {
	case "eval":
		return "runs its arguments as a command", true
	case "source", ".":
		return "runs the commands of a file", true
	case "exec":
		return "replaces the shell with a command", true
	case "alias":
		return "defines an alias", true
	case "unalias":
		return "changes an alias", true
	case "enable":
		return "loads or switches builtins", true
	case "trap":
		return "runs its argument as a command", true
	case "fc":
		return "runs commands from the history", true
	case "hash":
		return "changes which program a name runs", true
	case "shopt":
		return "changes how the shell reads commands", true
	case "mapfile", "readarray":
		return "may run a callback (-C)", true
	case "coproc":
		return "starts a coprocess", true
	}
	return "", false
}

// isShell reports the programs that start a shell: with a script
// argument, a file or stdin, what they run is not in the text.
func isShell(name string) bool {
	switch name {
	case "sh", "bash", "rbash", "dash", "ash", "zsh", "ksh", "mksh", "oksh", "pdksh", "yash", "fish", "csh", "tcsh", "busybox", "toybox":
		return true
	}
	return false
}

// isNameTaker reports the builtins that take a variable name, in which
// bash evaluates an array subscript as arithmetic (and so runs $(…) in it).
func isNameTaker(name string) bool {
	switch name {
	case "read", "printf", "unset", "test", "[", "wait", "getopts", "export", "declare", "local", "readonly", "typeset":
		return true
	}
	return false
}

// unwrap returns the commands a simple command starts, as the judge must
// see them: the command itself, and the command a wrapper (env, command,
// builtin, nohup, nice, timeout, stdbuf, setsid, time, xargs, find -exec)
// runs in its place or besides, appended to cmds. A reason is returned
// when what runs cannot be judged from the text.
func unwrap(cmds [][]arg, args []arg) ([][]arg, string) {
	for range 16 {
		if len(args) == 0 {
			return cmds, ""
		}
		name := args[0]
		if !name.static || name.multi {
			return cmds, "the command name is not in the text"
		}
		base := filepath.Base(name.s)
		if why, ok := runsCode(base); ok {
			return cmds, fmt.Sprintf("%s %s", base, why)
		}
		if isShell(base) {
			return cmds, fmt.Sprintf("%s runs a script", base)
		}
		if isScriptRunner(base) {
			return cmds, fmt.Sprintf("%s runs its arguments through a shell", base)
		}
		if isLauncher(base) && slices.ContainsFunc(args[1:], func(a arg) bool { return !a.static || a.multi }) {
			return cmds, fmt.Sprintf("%s runs a command, and a word of it is not in the text", base)
		}
		if isLauncher(base) {
			if why := launcherRuns(base, args[1:]); why != "" {
				return cmds, why
			}
			var why string
			if cmds, why = launchedGit(cmds, args[1:]); why != "" {
				return cmds, why
			}
		}
		if isNameTaker(base) {
			for _, a := range args[1:] {
				if a.static && strings.Contains(a.s, "[") && strings.ContainsAny(a.s, "$`") {
					return cmds, fmt.Sprintf("%s with %q evaluates a subscript as code", base, a.s)
				}
			}
		}
		var rest []arg
		var why string
		switch base {
		case "command", "builtin", "nohup", "setsid", "time":
			rest, why = skipFlags(args[1:], map[string]bool{"command": true, "builtin": true}[base])
			if rest == nil && why == "" {
				return append(cmds, args), ""
			}
		case "env":
			rest, why = unwrapEnv(args[1:])
		case "nice", "stdbuf", "timeout":
			rest, why = unwrapOpts(base, args[1:])
		case "xargs":
			rest, why = unwrapXargs(args[1:])
		case "find":
			cmds = append(cmds, args)
			sub, why := unwrapFind(args[1:])
			if why != "" {
				return cmds, why
			}
			for _, s := range sub {
				var why string
				cmds, why = unwrap(cmds, s)
				if why != "" {
					return cmds, why
				}
			}
			return cmds, ""
		case "git":
			forms, why := gitForms(args)
			return append(append(cmds, args), forms...), why
		default:
			return append(cmds, args), ""
		}
		if why != "" {
			return cmds, why
		}
		if rest == nil {
			// The wrapper alone: env prints, xargs runs echo.
			return append(cmds, args), ""
		}
		args = rest
	}
	return cmds, "wrappers nested too deeply"
}

// launchedGit appends to cmds what git runs for the aliases its command
// line defines, for each word of a launcher's that names git (sudo git -c
// alias.p=push p), or says why it cannot be judged.
func launchedGit(cmds [][]arg, args []arg) ([][]arg, string) {
	for k, a := range args {
		if a.static && !a.multi && filepath.Base(a.s) == "git" {
			forms, why := gitForms(args[k:])
			if why != "" {
				return cmds, why
			}
			cmds = append(cmds, forms...)
		}
	}
	return cmds, ""
}

// skipFlags skips the options of command, builtin, nohup, setsid and
// time (all single letters without values): nil when no command follows.
func skipFlags(args []arg, pOnly bool) ([]arg, string) {
	for i, a := range args {
		if !a.static {
			return nil, "an option not in the text"
		}
		if a.s == "--" {
			return nilIfEmpty(args[i+1:]), ""
		}
		if !strings.HasPrefix(a.s, "-") || a.s == "-" {
			return args[i:], ""
		}
		if pOnly && strings.Trim(a.s[1:], "pvV") != "" {
			return nil, fmt.Sprintf("the option %s", a.s)
		}
	}
	return nil, ""
}

func nilIfEmpty(a []arg) []arg {
	if len(a) == 0 {
		return nil
	}
	return a
}

// unwrapEnv skips env's options and assignments.
func unwrapEnv(args []arg) ([]arg, string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static || a.multi {
			return nil, "an argument of env not in the text"
		}
		switch {
		case a.s == "--":
			continue
		case a.s == "-S" || strings.HasPrefix(a.s, "--split-string") || strings.HasPrefix(a.s, "-S") || a.s == "-":
			return nil, "env -S splits a string into a command"
		case a.s == "-u" || a.s == "-C" || a.s == "--unset" || a.s == "--chdir":
			if i++; i < len(args) && (!args[i].static || args[i].multi) {
				return nil, "an argument of env not in the text"
			}
		case strings.HasPrefix(a.s, "-"):
			if strings.HasPrefix(a.s, "--") || strings.Trim(a.s[1:], "i0v") == "" || strings.HasPrefix(a.s, "-u") || strings.HasPrefix(a.s, "-C") {
				continue
			}
			return nil, fmt.Sprintf("the env option %s", a.s)
		case strings.Contains(a.s, "="):
			name, _, _ := strings.Cut(a.s, "=")
			if dangerousVar(name) {
				return nil, fmt.Sprintf("env assigning %s changes what a command runs", name)
			}
		default:
			return args[i:], ""
		}
	}
	return nil, ""
}

// valued is, per wrapper, its options that take the next word as a value.
func valued(wrapper string) []string {
	switch wrapper {
	case "nice":
		return niceValued
	case "stdbuf":
		return stdbufValued
	case "timeout":
		return timeoutValued
	case "xargs":
		return xargsValued
	}
	return nil
}

var (
	niceValued    = []string{"-n", "--adjustment"}
	stdbufValued  = []string{"-i", "-o", "-e", "--input", "--output", "--error"}
	timeoutValued = []string{"-s", "-k", "--signal", "--kill-after"}
	xargsValued   = []string{"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}
)

// unwrapOpts skips the options of nice, stdbuf and timeout (and timeout's
// duration).
func unwrapOpts(name string, args []arg) ([]arg, string) {
	i, why := skipValued(name, args)
	if why != "" {
		return nil, why
	}
	if name == "timeout" && i < len(args) {
		// The duration: already known static and single by skipValued.
		i++
	}
	return nilIfEmpty(args[i:]), ""
}

// skipValued returns the index of the first word after the options.
func skipValued(name string, args []arg) (int, string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static || a.multi {
			return 0, fmt.Sprintf("an argument of %s not in the text", name)
		}
		if a.s == "--" {
			return i + 1, ""
		}
		if !strings.HasPrefix(a.s, "-") || a.s == "-" {
			return i, ""
		}
		if slices.Contains(valued(name), a.s) {
			if i++; i < len(args) && (!args[i].static || args[i].multi) {
				return 0, fmt.Sprintf("an argument of %s not in the text", name)
			}
		}
	}
	return len(args), ""
}

// unwrapXargs returns the command xargs runs, with the words it adds from
// its input: at the end, or in place of the -I string.
func unwrapXargs(args []arg) ([]arg, string) {
	i, why := skipValued("xargs", args)
	if why != "" {
		return nil, why
	}
	replace := ""
	for k, a := range args[:i] {
		if k > 0 && (args[k-1].s == "-I" || args[k-1].s == "--replace") {
			replace = a.s
		}
		if v, ok := strings.CutPrefix(a.s, "-I"); ok && v != "" {
			replace = v
		}
		if v, ok := strings.CutPrefix(a.s, "-i"); ok {
			replace = or(v, "{}")
		}
		if v, ok := strings.CutPrefix(a.s, "--replace="); ok {
			replace = v
		}
	}
	cmd := slices.Clone(args[i:])
	if len(cmd) == 0 {
		cmd = []arg{{s: "echo", static: true}}
	}
	if replace == "" {
		return append(cmd, arg{multi: true}), ""
	}
	for k, a := range cmd {
		if a.static && strings.Contains(a.s, replace) {
			cmd[k] = arg{}
		}
	}
	return cmd, ""
}

// unwrapFind returns the commands find's -exec, -execdir, -ok and -okdir
// run, {} standing for the file names it finds.
func unwrapFind(args []arg) ([][]arg, string) {
	var out [][]arg
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static || a.multi {
			return out, "an argument of find not in the text (it could be -exec)"
		}
		switch a.s {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		var cmd []arg
		for i++; i < len(args); i++ {
			b := args[i]
			if !b.static || b.multi {
				return out, "an argument of find not in the text"
			}
			if b.s == ";" || (b.s == "+" && len(cmd) > 0 && cmd[len(cmd)-1].s == "{}") {
				break
			}
			cmd = append(cmd, b)
		}
		for k, b := range cmd {
			if strings.Contains(b.s, "{}") {
				cmd[k] = arg{}
			}
		}
		if len(cmd) > 0 {
			out = append(out, cmd)
		}
	}
	return out, ""
}

// simple judges one simple command, the node n of the source.
func (j *judge) simple(args []arg, n syntax.Node) {
	cmds, why := unwrap(j.cmds[:0], args)
	j.cmds = cmds[:0]
	for _, c := range cmds {
		if j.denial != nil {
			continue
		}
		switch filepath.Base(c[0].s) {
		case "cd", "pushd", "popd":
			j.cd = true
		}
		j.match(c, n)
	}
	if why != "" {
		j.cannot(fmt.Sprintf("%q: %s", j.text(n), why))
	}
}

// match judges one command by the rules: no deny rule may possibly match
// it, and some allow rule must certainly match it (or bash is allowed
// whole).
func (j *judge) match(c []arg, n syntax.Node) {
	for _, r := range j.p.deny {
		if r.cmd != nil && r.cmd.deniedBy(c, 0) {
			j.deny(r.Text, fmt.Sprintf("%q matches it", j.text(n)))
			return
		}
	}
	if j.p.bashAllowed {
		return
	}
	if j.p.allowedBy(c) {
		return
	}
	var allowed []string
	for _, r := range j.p.allow {
		if r.cmd != nil {
			allowed = append(allowed, r.Text)
		}
	}
	list := strings.Join(allowed, ", ")
	if list == "" {
		list = "none"
	}
	j.deny("", fmt.Sprintf("%q is not allowed by any rule (allowed commands: %s)", j.text(n), list))
}

// allowedBy reports whether some bash(…) allow rule certainly matches the
// command c: those naming its command, then those whose name is a glob.
func (p *Policy) allowedBy(c []arg) bool {
	if len(c) > 0 && c[0].static && !c[0].multi {
		for _, cp := range p.allowNamed[c[0].s] {
			if cp.match(c, false) {
				return true
			}
		}
	} else {
		for _, r := range p.allow {
			if r.cmd != nil && r.cmd.match(c, false) {
				return true
			}
		}
		return false
	}
	for _, cp := range p.allowWild {
		if cp.match(c, false) {
			return true
		}
	}
	return false
}
