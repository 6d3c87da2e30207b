package policy

import (
	"fmt"
	"strings"
)

// gitForms reads git's options before its subcommand (c is a command
// whose name's last element is git) for what the command line makes git
// run: it returns, besides c as written, the command each alias the
// command line defines stands for when the subcommand names it (git -c
// alias.p=push p origin is git push origin too; a chain, each step), and
// why it cannot be judged: a shell alias (alias.p=!…), an alias or a
// setting that runs a command whose value is not in the text (-c
// core.pager=…, --config-env=alias.p=VAR, include.path=…), --exec-path=DIR,
// or an option word not in the text (git $OPTS push, git -C $DIR push:
// an unquoted expansion may split into an option and a subcommand).
// Aliases in the repository's or the user's config files are not seen.
func gitForms(c []arg) ([][]arg, string) {
	i, aliases, why := gitOptions(c, 1, nil)
	if why != "" {
		return nil, why
	}
	if i >= len(c) || len(aliases) == 0 {
		return nil, ""
	}
	return gitAliasForms(c[0], c[i:], aliases)
}

// gitOptions reads git's options in c from i on, as git's handle_options
// reads them on its command line and again at the head of each alias's
// value: it returns where the subcommand starts, the aliases the options
// define added to aliases (name, lowercased: its value, nil when not in
// the text; a later definition replaces an earlier one), and why the
// options cannot be judged.
func gitOptions(c []arg, i int, aliases map[string]*string) (int, map[string]*string, string) {
	for ; i < len(c); i++ {
		a := c[i]
		if !a.static || a.multi {
			return i, nil, "a word among git's options is not in the text"
		}
		if !strings.HasPrefix(a.s, "-") {
			break
		}
		var setting arg
		opt := a.s
		switch {
		case a.s == "-c" || a.s == "--config-env":
			if i++; i >= len(c) {
				return i, nil, "" // git refuses a missing value
			}
			setting = c[i]
			if setting.multi {
				return i, nil, "a word among git's options is not in the text"
			}
		case strings.HasPrefix(a.s, "--config-env="):
			opt, setting = "--config-env", arg{s: strings.TrimPrefix(a.s, "--config-env="), static: true}
		case strings.HasPrefix(a.s, "--exec-path="):
			return i, nil, fmt.Sprintf("git %s runs git's commands from a directory of its own", a.s)
		case isGitValued(a.s):
			if i++; i < len(c) && c[i].multi {
				return i, nil, "a word among git's options is not in the text"
			}
			continue
		default:
			continue
		}
		name, value, why := gitSetting(opt, setting)
		if why != "" {
			return i, nil, why
		}
		if name != "" {
			if aliases == nil {
				aliases = map[string]*string{}
			}
			aliases[name] = value
		}
	}
	return i, aliases, ""
}

// gitSetting reads one setting of git -c NAME=VALUE (or --config-env
// NAME=VAR, whose value is the variable's): the alias it defines (its
// name lowercased, and its value, nil when not in the text), or why it
// cannot be judged.
func gitSetting(opt string, setting arg) (alias string, value *string, why string) {
	text := setting.s
	if !setting.static {
		// "user.name=" of user.name="$N": the text it starts with.
		if !strings.Contains(text, "=") {
			return "", nil, fmt.Sprintf("git %s with a setting whose name is not in the text", opt)
		}
	}
	key, v, _ := strings.Cut(text, "=")
	known := setting.static && opt == "-c"
	section, rest, ok := strings.Cut(strings.ToLower(key), ".")
	switch {
	case !ok:
		return "", nil, "" // git refuses a name without a section
	case section == "alias" && strings.Contains(rest, "."):
		return "", nil, fmt.Sprintf("git %s %s: an alias git may read", opt, key)
	case section == "alias" && known:
		return rest, &v, ""
	case section == "alias":
		return rest, nil, ""
	case gitRunsSetting(section, rest, v, known):
		return "", nil, fmt.Sprintf("git %s %s=…: the setting makes git run a command", opt, key)
	}
	return "", nil, ""
}

// gitRunsSetting reports whether git setting section.rest (lowercased; the
// subsection, if any, is rest's middle) may make git run a command or read
// other settings: a pager, an editor, a hook, a helper, a driver, a
// filter, a browser, a transport that runs one, an included file. value
// counts only when known: the values that run nothing (core.pager=cat,
// credential.helper= that clears the helpers) are allowed.
func gitRunsSetting(section, rest, value string, known bool) bool {
	name := rest[strings.LastIndexByte(rest, '.')+1:]
	sub := strings.TrimSuffix(strings.TrimSuffix(rest, name), ".")
	switch section {
	case "include", "includeif", "hook", "filter", "browser", "difftool", "mergetool", "guitool", "instaweb", "sendemail", "man":
		return true
	case "pager":
		return !(known && (plainPager(value) || isGitBool(value)))
	case "protocol":
		// ext:: runs a command; only its policy (or the default one) can
		// allow it.
		return name == "allow" && (sub == "" || sub == "ext") && !(known && value == "never")
	}
	if strings.HasSuffix(name, "command") || strings.HasSuffix(name, "cmd") || strings.HasSuffix(name, "program") ||
		strings.HasSuffix(name, "hook") || strings.HasSuffix(name, "helper") {
		// core.sshCommand, gpg.ssh.defaultKeyCommand, tar.<format>.command,
		// sendemail.toCmd, gpg.program, uploadpack.packObjectsHook,
		// credential.helper (empty: clears the helpers).
		return !(known && value == "" && name == "helper")
	}
	switch section + "." + name {
	case "core.pager":
		return !(known && plainPager(value))
	case "core.editor", "sequence.editor":
		return !(known && (value == "true" || value == ":"))
	case "core.fsmonitor":
		return !(known && isGitBool(value))
	case "help.autocorrect":
		// git runs the command it guesses a mistyped one stands for.
		return !(known && (value == "0" || value == "never" || value == "show" || value == "false"))
	case "core.hookspath", "core.gitproxy", "core.askpass", "diff.external", "diff.textconv", "diff.tool", "diff.guitool",
		"merge.tool", "merge.guitool", "merge.driver", "imap.tunnel", "interactive.difffilter", "init.templatedir",
		"web.browser", "help.browser", "remote.receivepack", "remote.uploadpack", "remote.vcs", "submodule.update",
		"sendemail.smtpserver":
		return true
	}
	return false
}

// plainPager reports the pagers that run nothing else.
func plainPager(v string) bool {
	switch v {
	case "", "cat", "less", "more":
		return true
	}
	return false
}

// isGitBool reports git's boolean values.
func isGitBool(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "1", "0":
		return true
	}
	return false
}

// gitAliasForms returns the commands git runs for the subcommand and its
// arguments sub when aliases defines it: git with each step of the
// expansion, the arguments after it. An alias whose value is not in the
// text, a shell alias, and one git cannot split cannot be judged. Alias
// names are matched without regard to case, as git matches them, and an
// alias is expanded even where it hides a command git has (git runs the
// command then: judging both forms is the safe side).
func gitAliasForms(git arg, sub []arg, aliases map[string]*string) ([][]arg, string) {
	var forms [][]arg
	seen := map[string]bool{}
	for {
		name := strings.ToLower(sub[0].s)
		v, ok := aliases[name]
		if !ok || seen[name] {
			return forms, "" // not an alias, or a loop git refuses
		}
		seen[name] = true
		if v == nil {
			return nil, fmt.Sprintf("the alias git %s stands for is not in the text", sub[0].s)
		}
		if strings.HasPrefix(*v, "!") {
			return nil, fmt.Sprintf("git alias %s runs a shell command", sub[0].s)
		}
		words, ok := splitGitAlias(*v)
		if !ok || len(words) == 0 || words[0] == "" {
			return nil, fmt.Sprintf("git alias %s: git cannot split %q", sub[0].s, *v)
		}
		next := make([]arg, 0, len(words)+len(sub)-1)
		for _, w := range words {
			next = append(next, arg{s: w, static: true})
		}
		next = append(next, sub[1:]...)
		forms = append(forms, append([]arg{git}, next...))
		// The alias's own options (--no-pager) come before its command,
		// and git reads them as it reads its command line's: an alias
		// defined there (-c alias.q=push q) is expanded next, a setting
		// that runs a command cannot be judged.
		k, _, why := gitOptions(next, 0, aliases)
		if why != "" {
			return nil, why
		}
		if k >= len(next) {
			return forms, ""
		}
		sub = next[k:]
	}
}

// splitGitAlias splits an alias's value as git does (split_cmdline):
// at whitespace outside quotes, '…' and "…" quoting, a backslash escaping
// the next character outside single quotes. ok is false where git
// refuses the value (an unclosed quote, a backslash at the end).
func splitGitAlias(v string) (words []string, ok bool) {
	var b strings.Builder
	var quote byte
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case quote == 0 && isSpace(c):
			words = append(words, b.String())
			b.Reset()
			for i+1 < len(v) && isSpace(v[i+1]) {
				i++
			}
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		case c == quote:
			quote = 0
		default:
			if c == '\\' && quote != '\'' {
				if i++; i >= len(v) {
					return nil, false
				}
				c = v[i]
			}
			b.WriteByte(c)
		}
	}
	if quote != 0 {
		return nil, false
	}
	return append(words, b.String()), true
}

// isSpace is git's own isspace (sane_ctype), which its split uses: not
// C's, it leaves out \v and \f.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}
