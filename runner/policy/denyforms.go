package policy

import (
	"fmt"
	"path/filepath"
	"strings"
)

// isLauncher reports the programs that run the command their arguments
// name, after options and operands of their own (sudo -u x CMD, flock FILE
// CMD, chrt 1 CMD, ionice -c3 CMD): the judge does not know each one's
// grammar, so a deny rule is judged against every run of their words that
// starts with a plain word, as well as against the whole command. (A
// switch, not a map: no initialiser at awl's start.)
func isLauncher(name string) bool {
	switch name {
	case "sudo", "doas", "pkexec", "runuser", "setpriv", "chroot", "unshare", "nsenter", "flock", "ionice",
		"taskset", "chrt", "prlimit", "numactl", "cgexec", "strace", "ltrace", "valgrind", "catchsegv",
		"fakeroot", "faketime", "eatmydata", "firejail", "bwrap", "systemd-run", "xvfb-run",
		"dbus-run-session", "unbuffer", "proxychains", "proxychains4", "torsocks", "caffeinate", "chpst",
		"entr", "gdb", "perf":
		return true
	}
	return false
}

// isScriptRunner reports the programs that run their arguments, or a
// string among them, through a shell (watch, ssh, parallel, su -c, script
// -c, sg, capsh): what runs is not in the text as a command.
func isScriptRunner(name string) bool {
	switch name {
	case "watch", "ssh", "parallel", "su", "script", "sg", "capsh":
		return true
	}
	return false
}

// isGitValued reports git's options before the subcommand that take the
// next word as their value.
func isGitValued(opt string) bool {
	switch opt {
	case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--list-cmds", "--attr-source":
		return true
	}
	return false
}

// deniedBy reports whether the deny pattern cp could match the command c
// in any form it may take to run: as written; with a command name given
// as a path (/bin/rm, ./rm) taken by its last element; with git's
// options before its subcommand (git -C dir -c k=v push) left out; and,
// for a launcher (sudo, flock, chrt, …), each run of its words that
// begins with a plain word, judged the same way.
func (cp *cmdPattern) deniedBy(c []arg, depth int) bool {
	if len(c) == 0 || depth > 16 {
		return len(c) > 0
	}
	if cp.match(c, true) {
		return true
	}
	if !c[0].static || c[0].multi {
		return false // unwrap refuses such a command before a rule is asked
	}
	base := filepath.Base(c[0].s)
	if base != c[0].s {
		named := append([]arg{{s: base, static: true}}, c[1:]...)
		if cp.match(named, true) {
			return true
		}
	}
	if base == "git" {
		// Named by its last element too: /usr/bin/git -C . push.
		if g := gitSubcommand(c); g != nil && (cp.match(g, true) || cp.match(append([]arg{{s: base, static: true}}, g[1:]...), true)) {
			return true
		}
	}
	if isLauncher(base) {
		for k := 1; k < len(c); k++ {
			if a := c[k]; a.static && !a.multi && !strings.HasPrefix(a.s, "-") && cp.deniedBy(c[k:], depth+1) {
				return true
			}
		}
	}
	return false
}

// gitSubcommand returns git's command with its options before the
// subcommand left out (git -C dir --no-pager push x: git push x); nil
// when it has none.
func gitSubcommand(c []arg) []arg {
	i := 1
	for i < len(c) && c[i].static && strings.HasPrefix(c[i].s, "-") && c[i].s != "--" {
		if isGitValued(c[i].s) {
			i++
		}
		i++
	}
	if i == 1 || i >= len(c) {
		return nil
	}
	return append([]arg{c[0]}, c[i:]...)
}

// launcherRuns says why what the launcher name runs with args cannot be
// judged, "" when it can: a plain word of it names a shell, a program that
// runs its arguments through one, or a builtin that runs code (sudo sh -c
// 'rm x', flock l bash x.sh, sudo su -c …), or an option makes the
// launcher itself run a string through a shell (sudo -s, sudo -i, flock
// -c). Not knowing each launcher's grammar, every plain word counts: sudo
// apt-get install zsh cannot be judged either.
func launcherRuns(name string, args []arg) string {
	for _, a := range args {
		if shellOption(name, a.s) {
			return fmt.Sprintf("%s %s runs a string through a shell", name, a.s)
		}
		if strings.HasPrefix(a.s, "-") || a.s == "." {
			continue
		}
		w := filepath.Base(a.s)
		if _, ok := runsCode(w); ok || isShell(w) || isScriptRunner(w) {
			return fmt.Sprintf("%s runs %s, which runs what the text does not show", name, w)
		}
	}
	return ""
}

// shellOption reports the launchers' options that run a string through a
// shell: sudo's -s and -i (alone or among other letters), --shell and
// --login; flock's -c and --command.
func shellOption(launcher, opt string) bool {
	short := len(opt) > 1 && opt[0] == '-' && opt[1] != '-'
	switch launcher {
	case "sudo":
		return opt == "--shell" || opt == "--login" || short && strings.ContainsAny(opt[1:], "si")
	case "flock":
		return strings.HasPrefix(opt, "--command") || short && strings.ContainsRune(opt[1:], 'c')
	}
	return false
}
