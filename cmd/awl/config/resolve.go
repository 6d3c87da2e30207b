package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Input is what Resolve layers.
type Input struct {
	Schema Schema
	// Files are the files read, lowest first: the user's then the
	// project's, or the one named.
	Files []*File
	// Profile is the profile asked for, "" for none; ProfileFrom says
	// where ("--profile" or "AWL_PROFILE").
	Profile, ProfileFrom string
	// TrustProject is --trust-project or AWL_TRUST_PROJECT=1;
	// DistrustProject is AWL_TRUST_PROJECT=0 without the flag, which the
	// user file's trust-project = true does not override (a variable is
	// over the files).
	TrustProject, DistrustProject bool
	// UserFile is where the user file is (read or not), for the hint of
	// how to trust a project file.
	UserFile string
	Getenv   func(string) string
}

// Result is the settings of the files and the variables: every key a layer
// set, with its source, and the defaults. The caller lays the flags given
// over them.
type Result struct {
	Settings map[string]Setting
	// Servers are the [mcp-servers.NAME] tables of the trusted files, a
	// later file's server replacing an earlier one of the same name.
	Servers []Server
	// Trusted tells whether the project file, if one was read, is
	// trusted, and Why says by what.
	Trusted bool
	Why     string
}

// Resolve layers, lowest first: the keys' defaults; each file's top level,
// in order; each file's profile, when one is asked for; then the AWL_
// variables. A project file not trusted only narrows what the layers below
// it let the run do (Class); a key it may not set is an *Error with exit 4,
// one line for each.
func Resolve(in Input) (*Result, error) {
	r := &Result{Settings: map[string]Setting{}}
	for i := range in.Schema {
		k := &in.Schema[i]
		if k.Default == "" {
			continue
		}
		v, reason := fromString(k, k.Default)
		if reason != "" {
			return nil, fmt.Errorf("the default of %s: %s", k.Name, reason)
		}
		r.Settings[k.Name] = Setting{Value: v, Source: Source{Kind: "default"}}
	}
	if err := checkProfile(in); err != nil {
		return nil, err
	}
	r.Trusted, r.Why = trusted(in)
	var refused, moves []string
	layer := func(f *File, t table, where string) {
		for _, name := range sortedKeys(t) {
			e := t[name]
			k := in.Schema.Lookup(name)
			src := Source{Kind: "file", Path: f.Path, Line: e.line, Col: e.col}
			if f.Role == Project && r.Trusted && k.Moves {
				moves = append(moves, errorf(f.Path, e.line, e.col, "%s%s: a project file cannot move the run: it is found by walking up from the run's directory, so it cannot choose that directory (give -C or AWL_CD, or set %s in the user's file or a --config file)", where, name, name))
				continue
			}
			if f.Role != Project || r.Trusted {
				r.Settings[name] = Setting{Value: e.v, Source: src}
				continue
			}
			if k.Class == Trusted {
				refused = append(refused, refusal(in, f, e, where+name))
				continue
			}
			if below, ok := r.Settings[name]; k.Class == Sandbox && ok && strictness(e.v.(string)) < strictness(below.Value.(string)) {
				// A looser sandbox is refused, not ignored: the file
				// asks for what the run will not do (issue 45).
				refused = append(refused, errorf(f.Path, e.line, 0, "%s%s = %q: an untrusted project file may make the sandbox stricter, not looser than %q (%s). %s", where, name, e.v, below.Value, below.Source, trustHint(in)))
				continue
			}
			if v, ok := NarrowValue(k, r.Settings[name], e.v); ok {
				r.Settings[name] = Setting{Value: v, Source: src}
			}
		}
	}
	for _, f := range in.Files {
		if f.Role == Project && !r.Trusted && f.trust != nil {
			// A project file cannot vouch for itself.
			refused = append(refused, refusal(in, f, *f.trust, trustKey))
		}
		layer(f, f.top, "")
		r.servers(in, f, &refused)
	}
	if in.Profile != "" {
		for _, f := range in.Files {
			if t, ok := f.profiles[in.Profile]; ok {
				layer(f, t, "profile."+in.Profile+".")
			}
		}
	}
	if len(refused) > 0 {
		return nil, &Error{Code: 4, Lines: refused}
	}
	if len(moves) > 0 {
		return nil, &Error{Code: 2, Lines: moves}
	}
	if err := r.env(in); err != nil {
		return nil, err
	}
	return r, nil
}

// servers takes f's MCP servers, or refuses them in an untrusted project
// file.
func (r *Result) servers(in Input, f *File, refused *[]string) {
	if len(f.Servers) == 0 {
		return
	}
	if f.Role == Project && !r.Trusted {
		for _, s := range f.Servers {
			*refused = append(*refused, refusal(in, f, entry{line: s.Line}, serversKey+"."+s.Name))
		}
		return
	}
	for _, s := range f.Servers {
		r.Servers = slices.DeleteFunc(r.Servers, func(o Server) bool { return o.Name == s.Name })
		r.Servers = append(r.Servers, s)
	}
}

// checkProfile refuses a profile no file defines, naming those that are.
func checkProfile(in Input) error {
	if in.Profile == "" {
		return nil
	}
	var names, paths []string
	for _, f := range in.Files {
		if _, ok := f.profiles[in.Profile]; ok {
			return nil
		}
		for _, n := range f.Profiles() {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		paths = append(paths, f.Path)
	}
	slices.Sort(names)
	msg := fmt.Sprintf("%s %s: no configuration file defines [profile.%s]", in.ProfileFrom, in.Profile, in.Profile)
	switch {
	case len(paths) == 0:
		msg += " (no configuration file was read: awl config path says where they are looked for)"
	case len(names) == 0 && len(paths) == 1:
		msg += fmt.Sprintf(" (%s defines no profile)", paths[0])
	case len(names) == 0:
		msg += fmt.Sprintf(" (%s define no profile)", strings.Join(paths, " and "))
	default:
		msg += fmt.Sprintf("; the profiles are: %s", strings.Join(names, ", "))
	}
	return &Error{Code: 2, Lines: []string{msg}}
}

// trusted tells whether a project file is trusted, and by what.
func trusted(in Input) (bool, string) {
	if in.TrustProject {
		return true, "--trust-project or AWL_TRUST_PROJECT"
	}
	if in.DistrustProject {
		return false, ""
	}
	for _, f := range in.Files {
		if f.Role == User && f.trust != nil && f.trust.v == true {
			return true, fmt.Sprintf("trust-project in %s:%d", f.Path, f.trust.line)
		}
	}
	return false, ""
}

// refusal is the line of exit 4 for a key an untrusted project file may
// not set.
func refusal(in Input, f *File, e entry, key string) string {
	return errorf(f.Path, e.line, 0, "%s: an untrusted project file may not set this key: it could send the key elsewhere, run a command outside the model's confined tools, reach a path of the file's choosing or loosen the sandbox. %s", key, trustHint(in))
}

// trustHint says how to trust a project file.
func trustHint(in Input) string {
	return "If this repository's file is yours to trust, pass --trust-project, set AWL_TRUST_PROJECT=1, or put trust-project = true in " + in.UserFile
}

// NarrowValue is what v, from a layer that may only narrow (an untrusted
// project file, a caller of `awl mcp serve`), makes of the setting below
// it, and whether it changes it.
func NarrowValue(k *Key, below Setting, v Value) (Value, bool) {
	has := below.Source.Kind != ""
	switch k.Class {
	case Free:
		return v, true
	case Min:
		return v, !has || less(v, below.Value)
	case Limit:
		if zero(v) {
			return nil, false
		}
		return v, !has || zero(below.Value) || less(v, below.Value)
	case Allow:
		if !has {
			return v, true
		}
		if k.Intersect != nil {
			return k.Intersect(below.Value.([]string), v.([]string)), true
		}
		both := []string{}
		for _, s := range below.Value.([]string) {
			if slices.Contains(v.([]string), s) {
				both = append(both, s)
			}
		}
		return both, true
	case Deny:
		if !has {
			return v, true
		}
		out := slices.Clone(below.Value.([]string))
		for _, s := range v.([]string) {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out, true
	case Sandbox:
		var b string
		if has {
			b, _ = below.Value.(string)
		}
		return v, strictness(v.(string)) > strictness(b)
	case Narrow:
		return v, v == true
	}
	return nil, false
}

// sandboxModes are the sandbox's modes, loosest first.
var sandboxModes = []string{"off", "workspace-write", "read-only"}

// strictness orders the sandbox modes, loosest first.
func strictness(mode string) int {
	return slices.Index(sandboxModes, strings.TrimSpace(mode))
}

// zero tells whether a limit's value is 0, no limit.
func zero(v Value) bool {
	switch v := v.(type) {
	case int64:
		return v == 0
	case float64:
		return v == 0
	case time.Duration:
		return v == 0
	}
	return false
}

// less tells whether a is smaller than b, two values of one numeric key.
func less(a, b Value) bool {
	switch a := a.(type) {
	case int64:
		return a < b.(int64)
	case float64:
		return a < b.(float64)
	case time.Duration:
		return a < b.(time.Duration)
	}
	return false
}

// env lays the AWL_ variables over the files: each key's, when set and
// not empty.
func (r *Result) env(in Input) error {
	if in.Getenv == nil {
		return nil
	}
	var lines []string
	for i := range in.Schema {
		k := &in.Schema[i]
		name := k.Env()
		s := in.Getenv(name)
		if s == "" {
			continue
		}
		v, reason := fromString(k, s)
		if reason != "" {
			// The hint for a variable is a variable.
			reason = strings.Replace(reason, "no-tools = true", "AWL_NO_TOOLS=1", 1)
			lines = append(lines, fmt.Sprintf("%s: %s", name, reason))
			continue
		}
		r.Settings[k.Name] = Setting{Value: v, Source: Source{Kind: "env", Env: name}}
	}
	if len(lines) > 0 {
		return &Error{Code: 2, Lines: lines}
	}
	return nil
}

// fromString reads a key's value as a variable (or a default) spells it:
// a list's items separated by its separator, or one a line.
func fromString(k *Key, s string) (Value, string) {
	switch k.Type {
	case String:
		return checkString(k, s)
	case Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Sprintf("%q is not true or false (nor 1 or 0)", s)
		}
		return b, ""
	case Int:
		n, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return nil, fmt.Sprintf("%q is not an integer", s)
		}
		return checkValue(k, n)
	case Float:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Sprintf("%q is not a number", s)
		}
		return checkValue(k, x)
	case Duration:
		return parseDuration(s)
	}
	sep := k.Sep
	if sep == "" {
		sep = "\n"
	}
	var items []any
	parts := strings.Split(s, sep)
	if k.Split != nil {
		parts = k.Split(s)
	}
	for _, it := range parts {
		if strings.TrimSpace(it) != "" {
			items = append(items, strings.TrimSpace(it))
		}
	}
	return checkValue(k, items)
}
