package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// gitTrust is what git's configuration files of a repository lead a later
// git to act on, beyond the git directory: every directory core.hooksPath
// names in any of them, and every file they include (include.path and
// includeIf.*.path, followed as git follows them). An included file is
// configuration like the repository's own: one that lies in the
// workspace could set core.fsmonitor, core.hooksPath or a pager for the
// next git outside the sandbox. Conditional includes are taken as if
// their condition held, and every hooksPath value counts, not only the
// last: which one git ends up with depends on where and how it runs.
type gitTrust struct {
	hooks []string // existing directories
	// noHooks are the hooks directories named that are not (yet) one: a
	// command that makes one there writes hooks a later git runs.
	noHooks  []string
	includes []string // included files, absolute, whether or not they exist
}

// huskyHooks is, for the hooks directory h that husky 9 names (.husky/_,
// whose every hook sources its h, which runs .husky/<the hook's name>),
// the directory of the hooks it runs (.husky): "" for any other. Those
// are the hooks a later git commit runs as much as h's own.
func huskyHooks(h string) string {
	if filepath.Base(h) != "_" {
		return ""
	}
	if st, err := os.Stat(filepath.Join(h, "h")); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return filepath.Dir(h)
}

// maxIncludeDepth is how deep git follows includes (its own limit).
const maxIncludeDepth = 10

// configTrust reads the configuration files git reads for the repository
// whose worktree is root and whose git directories are dirs (its own and
// its common directory): the system's, the user's, and each dir's config
// and config.worktree, with what they include.
func configTrust(root string, dirs ...string) gitTrust {
	home, _ := os.UserHomeDir()
	var files []string
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		files = append(files, envOr("GIT_CONFIG_SYSTEM", "/etc/gitconfig"))
	}
	if g := os.Getenv("GIT_CONFIG_GLOBAL"); g != "" {
		files = append(files, g)
	} else {
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		files = append(files, filepath.Join(xdg, "git", "config"), filepath.Join(home, ".gitconfig"))
	}
	for _, d := range dirs {
		files = append(files, filepath.Join(d, "config"), filepath.Join(d, "config.worktree"))
	}
	var t gitTrust
	seen := map[string]bool{}
	var read func(f string, depth int)
	read = func(f string, depth int) {
		b, err := os.ReadFile(f)
		if err != nil {
			return
		}
		gitConfigEntries(string(b), func(section, key, value string) {
			switch {
			case section == "core" && key == "hookspath":
				if h := expandConfigPath(value, home, root); h != "" {
					if st, err := os.Stat(h); err == nil && st.IsDir() {
						t.hooks = append(t.hooks, h)
						if husky := huskyHooks(h); husky != "" {
							t.hooks = append(t.hooks, husky)
						}
					} else {
						t.noHooks = append(t.noHooks, h)
					}
				}
			case (section == "include" || section == "includeif") && key == "path":
				inc := expandConfigPath(value, home, filepath.Dir(f))
				if inc == "" || seen[inc] || depth >= maxIncludeDepth {
					return
				}
				seen[inc] = true
				t.includes = append(t.includes, inc)
				read(inc, depth+1)
			}
		})
	}
	for _, f := range files {
		read(f, 0)
	}
	return t
}

// envOr is the variable k's value, or def when it is empty.
func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// expandConfigPath is the path a config value names: "~/" is the home
// directory, a relative path is taken from base; "" for an empty value.
func expandConfigPath(v, home, base string) string {
	switch {
	case v == "":
		return ""
	case v == "~" || strings.HasPrefix(v, "~/"):
		if home == "" {
			return ""
		}
		return filepath.Join(home, strings.TrimPrefix(v, "~"))
	case !filepath.IsAbs(v):
		return filepath.Join(base, v)
	}
	return filepath.Clean(v)
}

// gitConfigEntries calls fn with each variable of the git config text s:
// its section's name (lower case, without the subsection), its key
// (lower case) and its value, quotes, escapes, comments and continued
// lines resolved as git resolves them. A key alone is "true". A section
// header may have a variable after it on the same line ("[core]
// hooksPath = x"), as git allows.
func gitConfigEntries(s string, fn func(section, key, value string)) {
	section := ""
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#' || c == ';':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '[':
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return
			}
			header := s[i+1 : i+end]
			i += end + 1
			name, _, _ := strings.Cut(strings.TrimSpace(header), " ")
			name, _, _ = strings.Cut(name, ".")
			section = strings.ToLower(strings.TrimSpace(name))
		default:
			j := i
			for j < len(s) && (isKeyByte(s[j])) {
				j++
			}
			key := strings.ToLower(s[i:j])
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
			if j == i {
				// Not a key: skip the line.
				for i < len(s) && s[i] != '\n' {
					i++
				}
				continue
			}
			value := "true"
			if j < len(s) && s[j] == '=' {
				value, j = configValueAt(s, j+1)
			}
			fn(section, key, value)
			i = j
		}
	}
}

func isKeyByte(c byte) bool {
	return c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// configValueAt reads a value starting at s[i], after the '=': up to the
// end of its line (a backslash at the end continues it), a comment
// outside quotes, with unquoted space at its ends dropped. It returns the
// value and where reading stopped.
func configValueAt(s string, i int) (string, int) {
	var b strings.Builder
	quoted := false
	keep := 0 // b's length up to its last byte that is not unquoted space
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n' && !quoted:
			return b.String()[:keep], i
		case c == '\n':
			return b.String(), i // an unterminated quote: git refuses the file
		case (c == '#' || c == ';') && !quoted:
			for i < len(s) && s[i] != '\n' {
				i++
			}
			return b.String()[:keep], i
		case c == '"':
			quoted = !quoted
			keep = b.Len()
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case '\n':
				continue
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			default:
				b.WriteByte(s[i])
			}
			keep = b.Len()
		case (c == ' ' || c == '\t' || c == '\r') && !quoted:
			if b.Len() > 0 {
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
			keep = b.Len()
		}
	}
	return b.String()[:keep], i
}
