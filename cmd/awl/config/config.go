// Package config reads awl's configuration files (TOML): the user's
// $XDG_CONFIG_HOME/awl/config.toml, a project's .awl/config.toml, or the
// one file --config or AWL_CONFIG names, and the AWL_ variables; it layers
// them, with their profiles, under the command line's flags, and applies
// the trust rule to a project file (docs/config.md).
//
// It knows the keys only as a Schema its caller hands it (cmd/awl builds
// it from the run command's flags), so a flag added there is a key here.
// Every value keeps where it came from (Source), for `awl config show` and
// for errors: "path:line:col: reason".
package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Class is what a file may do with a key; an untrusted project file only
// narrows what a run may do, as the class says (docs/config.md).
type Class uint8

const (
	// None is no key.
	None Class = iota
	// Free may be set by any file.
	Free
	// Trusted may be set only by a trusted file: an untrusted project
	// file that sets it is refused (exit 4).
	Trusted
	// Min is a limit where 0 is a value: an untrusted project file's
	// value counts only when smaller.
	Min
	// Limit is a limit where 0 means none: an untrusted project file's
	// value counts where there was none, or when smaller.
	Limit
	// Allow is an allow list: an untrusted project file's list
	// intersects the one below it.
	Allow
	// Deny is a deny list: an untrusted project file's entries are added.
	Deny
	// Sandbox is the sandbox mode: an untrusted project file's counts
	// only when stricter.
	Sandbox
	// Narrow is a switch that narrows when on: an untrusted project file
	// may turn it on, never off.
	Narrow
)

// Type is a key's type.
type Type uint8

const (
	String Type = iota
	Bool
	Int
	Float
	Duration
	List
)

// typeNames say what a value of each type is, for errors.
var typeNames = [...]string{
	String:   "a string",
	Bool:     "true or false",
	Int:      "an integer",
	Float:    "a number",
	Duration: `a duration string such as "10m" or "90s"`,
	List:     "an array of strings",
}

// Key is one key a file may hold.
type Key struct {
	Name  string
	Type  Type
	Class Class
	// Enum is the values a String key may take, if limited.
	Enum []string
	// Path says the value is a path: a relative one is taken from the
	// file's base directory (the directory holding .awl for a project
	// file, the file's own directory otherwise). "-" and "none" stay.
	Path bool
	// Default is the value when no layer sets it, as the flag's default
	// tag spells it; "" for none.
	Default string
	// Sep is what separates a list variable's items: "," or, for "",
	// newlines.
	Sep string
	// Split, when set, splits a list's items instead of Sep, in a variable
	// and in each item of a file's array alike: the tool rules of tools
	// and deny-tools split on the commas outside parentheses
	// (bash(echo a,b) is one rule), and a narrowing compares rule with
	// rule.
	Split func(string) []string
	// Moves says the key moves the run's directory (cd). A project file,
	// found by walking up from that directory, cannot choose it: one that
	// is trusted and sets it is exit 2 (an untrusted one is refused as
	// for any Trusted key).
	Moves bool
	// Intersect, when set, is what an Allow list below and an untrusted
	// project file's list above it allow together (the tool rules'
	// meaning: bash(git *) and bash(git diff *) give bash(git diff *));
	// unset, the items both lists hold as written.
	Intersect func(below, above []string) []string
}

// Env is the key's environment variable: AWL_ and the name in upper case
// with "_" for "-".
func (k *Key) Env() string {
	return "AWL_" + strings.ToUpper(strings.ReplaceAll(k.Name, "-", "_"))
}

// Schema is the keys a file may hold.
type Schema []Key

// Lookup returns the key named name, or nil.
func (s Schema) Lookup(name string) *Key {
	for i := range s {
		if s[i].Name == name {
			return &s[i]
		}
	}
	return nil
}

// Value is a key's value: a string, bool, int64, float64, time.Duration or
// []string, as its Type says.
type Value = any

// Source is where a value came from.
type Source struct {
	// Kind is "default", "file", "env" or "flag".
	Kind string
	// Path, Line and Col place a file's value.
	Path      string
	Line, Col int
	// Env is the variable of an "env" value.
	Env string
}

func (s Source) String() string {
	switch s.Kind {
	case "file":
		return fmt.Sprintf("%s:%d", s.Path, s.Line)
	case "env":
		return "env " + s.Env
	}
	return s.Kind
}

// Setting is a key's value and where it came from.
type Setting struct {
	Value  Value
	Source Source
}

// Error is a configuration that cannot be used: a file, a variable or a
// profile. Its lines each name the file, line and column where they
// apply. Code is the exit code: 2 for a file that is wrong, 4 for a
// project file that may not set what it sets.
type Error struct {
	Lines []string
	Code  int
}

// Error is the lines, each with its control characters escaped: a key
// or a profile's name is the file's text, and a hostile project file's
// "\u001b[2J" or "\n::error::" must reach neither a terminal nor a CI
// log as itself.
func (e *Error) Error() string {
	lines := make([]string, len(e.Lines))
	for i, l := range e.Lines {
		lines[i] = escapeControls(l)
	}
	return strings.Join(lines, "\n")
}

// escapeControls is s with each control character, bidirectional control
// and invalid byte written as Go would quote it (\x1b, \n, \u202e).
func escapeControls(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && strings.HasPrefix(s[i:], "\ufffd"):
			b.WriteRune(r)
		case r == utf8.RuneError, unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r):
			q := strconv.QuoteToASCII(string(r))
			if r == utf8.RuneError {
				q = strconv.Quote(s[i : i+1])
			}
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// errorf is one line of a usage Error at pos.
func errorf(path string, line, col int, format string, args ...any) string {
	where := path
	if line > 0 {
		where += ":" + strconv.Itoa(line)
		if col > 0 {
			where += ":" + strconv.Itoa(col)
		}
	}
	return where + ": " + fmt.Sprintf(format, args...)
}

// Format is v as a flag would spell it, for `awl config show` and for the
// flag decoder (lists: one item each).
func Format(v Value) string {
	switch v := v.(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case time.Duration:
		return v.String()
	case []string:
		return strings.Join(v, ",")
	}
	return fmt.Sprint(v)
}
