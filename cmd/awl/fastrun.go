package main

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/awlrun/awl/runner/policy"
)

// fastRun parses the command line of an ordinary `awl run` without kong.
// Building kong's model of the grammar and parsing with it took about
// 4.5 ms of a 27 ms start (half of what awl adds to a bare Go program
// making the same request, docs/performance.md), every time a pipeline
// starts a step. fastRun reads what the same struct tags say (name, short,
// default, sep, enum: runFlagTable, written from them) and fills the same
// runCmd and globals, for the plain shapes a script writes: known flags
// with valid values, positional words, "--".
//
// It is an accelerator, never a second grammar: anything it does not
// handle exactly as kong does (help, --version, an unknown flag, an empty
// or malformed value, a bool flag given a value, a short flag cluster, a
// value that looks like a flag, a type it does not know) makes it decline,
// and kong parses the line and reports what is wrong. TestFastRunMatchesKong
// checks, over the run grammar's cases and many generated command lines,
// that whenever fastRun accepts a line kong accepts it too and fills
// exactly the same values.
//
// args are the command line after rewriteResume.
func fastRun(args []string) (globals, runCmd, bool) {
	var g globals
	var c runCmd
	for _, a := range args {
		// kong turns a word that is not UTF-8 into U+FFFD characters.
		if !utf8.ValidString(a) {
			return g, c, false
		}
	}
	i := 0
	// The global flags before the command: --session-dir only (--version
	// and --help are kong's).
	for ; i < len(args) && args[i] != "run"; i++ {
		v, next, ok := sessionDirValue(args, i)
		if !ok {
			return g, c, false
		}
		g.SessionDir, i = v, next
		c.given.add("session-dir")
	}
	if i == len(args) {
		return g, c, false
	}
	fl := &runFlagTable
	if !fl.defaults(&c) {
		return g, c, false
	}
	rv := reflect.ValueOf(&c).Elem()
	// kong takes the prompt's words as one run of positional arguments: a
	// word after a flag that follows them is refused.
	const (
		noWords = iota
		inWords
		afterWords
	)
	words := noWords
	for i++; i < len(args); i++ {
		a := args[i]
		if words == inWords && strings.HasPrefix(a, "-") {
			words = afterWords
		}
		switch {
		case a == "--":
			if words == afterWords && i+1 < len(args) {
				return g, c, false
			}
			c.Args = append(c.Args, args[i+1:]...)
			return g, c, true
		case strings.HasPrefix(a, "--session-dir"):
			v, next, ok := sessionDirValue(args, i)
			if !ok {
				return g, c, false
			}
			g.SessionDir, i = v, next
			c.given.add("session-dir")
		case strings.HasPrefix(a, "-"):
			name, value, hasValue := strings.Cut(a, "=")
			var f *fastFlag
			switch {
			case strings.HasPrefix(name, "--"):
				f = fl.byName(name[2:])
			case len(name) == 2 && !hasValue:
				// kong reads -f=x as -f with the value "=x".
				f = fl.byShort(name[1])
			}
			if f == nil {
				return g, c, false
			}
			c.given.add(f.name)
			field := rv.Field(f.index)
			if f.kind == reflect.Bool {
				if hasValue {
					return g, c, false
				}
				field.SetBool(true)
				continue
			}
			if !hasValue {
				if i+1 == len(args) || strings.HasPrefix(args[i+1], "-") {
					return g, c, false
				}
				i++
				value = args[i]
			}
			// A repeated flag takes its last value; a list flag gathers
			// them all.
			if !f.set(field, value) {
				return g, c, false
			}
		default:
			if words == afterWords {
				return g, c, false
			}
			words = inWords
			c.Args = append(c.Args, a)
		}
	}
	return g, c, true
}

// defaults sets the flags' default values in c, as kong does before a
// parse.
func (fl *fastFlags) defaults(c *runCmd) bool {
	rv := reflect.ValueOf(c).Elem()
	for i := range fl.flags {
		if f := &fl.flags[i]; f.def != "" && !f.set(rv.Field(f.index), f.def) {
			return false
		}
	}
	return true
}

// sessionDirValue reads --session-dir DIR or --session-dir=DIR at args[i];
// it returns the value, the index of its last word, and false for anything
// else or an empty value.
func sessionDirValue(args []string, i int) (string, int, bool) {
	switch a := args[i]; {
	case a == "--session-dir":
		if i+1 == len(args) || args[i+1] == "" || strings.HasPrefix(args[i+1], "-") {
			return "", i, false
		}
		return args[i+1], i + 1, true
	case strings.HasPrefix(a, "--session-dir="):
		v := strings.TrimPrefix(a, "--session-dir=")
		return v, i, v != ""
	}
	return "", i, false
}

// fastFlag is one flag of runCmd as fastRun reads it.
type fastFlag struct {
	name  string       // the long name, without "--"
	short byte         // the short name, 0 for none
	index int          // of the field in runCmd
	kind  reflect.Kind // of the value (the element for a slice or pointer)
	slice bool
	ptr   bool
	sep   string // a list flag's separator, "" for none
	enum  []string
	def   string
	bits  int
	dur   bool // a time.Duration
	ref   bool // schemaRef
	// cfg is what a configuration file may do with the flag's key
	// (given.go).
	cfg keyClass
	// cfgPath says the value is a path.
	cfgPath bool
}

// fastFlags is runCmd's flags, in the fields' order, as fastRun and the
// configuration files read them. runFlagTable
// (fastrun_flags.go) is written from runCmd's struct tags and held to
// them by TestRunFlagsAreTheTags: reading the tags by reflection at each
// start cost about 0.4 ms (docs/performance.md).
type fastFlags struct {
	flags []fastFlag
}

// byName returns the flag named --name, or nil.
func (fl *fastFlags) byName(name string) *fastFlag {
	for i := range fl.flags {
		if fl.flags[i].name == name {
			return &fl.flags[i]
		}
	}
	return nil
}

// byShort returns the flag named -s, or nil.
func (fl *fastFlags) byShort(s byte) *fastFlag {
	for i := range fl.flags {
		if s == 0 {
			break
		}
		if fl.flags[i].short == s {
			return &fl.flags[i]
		}
	}
	return nil
}

// set decodes value into field as kong would, or returns false where kong
// would refuse it (or fastRun is not sure).
func (f *fastFlag) set(field reflect.Value, value string) bool {
	if value == "" {
		return false
	}
	switch {
	case f.ref:
		field.Set(reflect.ValueOf(schemaRef{Set: true, Ref: value}))
		return true
	case f.slice:
		if isRuleList(f.name) && len(policy.Split(value)) == 0 {
			return false // as emptyRefuser: a rule list of commas is empty
		}
		parts := []string{value}
		if f.sep != "" {
			// As emptyRefuser: a list of separators and spaces is empty.
			if strings.Contains(value, `\`) || strings.TrimSpace(strings.ReplaceAll(value, f.sep, "")) == "" {
				return false
			}
			parts = strings.Split(value, f.sep)
		}
		for _, p := range parts {
			el := reflect.New(field.Type().Elem()).Elem()
			if p == "" || !f.scalar(el, p) {
				return false
			}
			field.Set(reflect.Append(field, el))
		}
		return true
	case f.ptr:
		el := reflect.New(field.Type().Elem())
		if !f.scalar(el.Elem(), value) {
			return false
		}
		field.Set(el)
		return true
	}
	return f.scalar(field, value)
}

func (f *fastFlag) scalar(v reflect.Value, s string) bool {
	if f.enum != nil {
		found := false
		for _, e := range f.enum {
			found = found || e == s
		}
		if !found {
			return false
		}
	}
	switch {
	case f.dur:
		d, err := time.ParseDuration(s)
		if err != nil {
			return false
		}
		v.SetInt(int64(d))
	case f.kind == reflect.String:
		v.SetString(s)
	case f.kind == reflect.Int || f.kind == reflect.Int64:
		n, err := strconv.ParseInt(s, 0, f.bits)
		if err != nil {
			return false
		}
		v.SetInt(n)
	case f.kind == reflect.Float64:
		n, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			return false // NaN and ±Inf are kong's to pass on to checkFlags
		}
		v.SetFloat(n)
	default:
		return false
	}
	return true
}
