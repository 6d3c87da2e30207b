package main

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// kongOutcome is everything a parse of the whole grammar shows: what it
// filled in, the command, its error and usage hint, the exit a help or
// --version asked for, and what it wrote.
type kongOutcome struct {
	grammar        cli
	command        string
	err, hint      string
	exit           int
	stdout, stderr string
}

// outcomeOf parses args with a fresh parser of the whole grammar.
func outcomeOf(t *testing.T, args []string, parseWith func(*kong.Kong, []string) (*kong.Context, error)) (out kongOutcome) {
	t.Helper()
	var grammar cli
	var stdout, stderr bytes.Buffer
	parser, err := newParser(&grammar, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	out.exit = -1
	defer func() {
		if p := recover(); p != nil {
			ep, ok := p.(exitPanic)
			if !ok {
				panic(p)
			}
			out.exit = ep.code
		}
		out.grammar = grammar
		out.stdout, out.stderr = stdout.String(), stderr.String()
	}()
	kctx, err := parseWith(parser, args)
	if err == nil {
		out.command = kctx.Command()
		return out
	}
	out.err = err.Error()
	var kpe *kong.ParseError
	var pe *parseError
	switch {
	case errors.As(err, &kpe):
		kctx = kpe.Context
	case errors.As(err, &pe):
		kctx = pe.ctx
	default:
		t.Fatalf("%q: %T is not a parse error", args, err)
	}
	if kctx != nil && kctx.Selected() != nil {
		out.hint = kctx.Command()
	}
	return out
}

// commandLines are command lines of every command: bare, asking for help,
// with words, and with each of its flags given well, badly, empty or
// without its value.
func commandLines(t *testing.T) [][]string {
	t.Helper()
	parser, err := newParser(&cli{}, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	lines := [][]string{
		{}, {"--help"}, {"-h"}, {"--version"}, {"--version", "--help"}, {"--help", "--version"},
		{"run", "--help", "--version"}, {"run", "--version", "-h"}, {"bogus"}, {"--bogus"},
		{"--session-dir"}, {"--session-dir", "/x"}, {"--session-dir=/x", "sessions"},
		{"run", "-o", "xml", "p"}, {"run", "-o", "json", "-o", "xml"}, {"schema", "events", "extra"},
	}
	var walk func(n *kong.Node, words []string)
	walk = func(n *kong.Node, words []string) {
		w := func(more ...string) []string { return append(append([]string(nil), words...), more...) }
		lines = append(lines, w(), w("--help"), w("x"), w("x", "y"), w("--bogus"), w("--version"), w("--session-dir", "/s"))
		for _, a := range n.Positional {
			for _, e := range a.EnumSlice() {
				lines = append(lines, w(e), w(e, "--help"))
			}
		}
		for _, f := range n.Flags {
			long := "--" + f.Name
			if f.IsBool() {
				lines = append(lines, w(long), w(long+"=false"), w(long+"=x"), w("x", long))
				continue
			}
			lines = append(lines, w(long, "1"), w(long+"=x"), w(long+"="), w(long), w("x", long, "2"))
			for _, e := range f.EnumSlice() {
				lines = append(lines, w(long, e))
			}
		}
		for _, c := range n.Children {
			walk(c, w(c.Name))
		}
	}
	walk(parser.Model.Node, nil)
	return lines
}

// TestParseMatchesKong: for command lines of every command, given well,
// badly or asking for help or the version, parse fills in, fails, hints
// and helps exactly as kong's own Parse does.
func TestParseMatchesKong(t *testing.T) {
	lines := commandLines(t)
	seen := map[string]int{}
	for _, args := range lines {
		theirs := outcomeOf(t, args, (*kong.Kong).Parse)
		ours := outcomeOf(t, args, parse)
		if !reflect.DeepEqual(theirs, ours) {
			t.Errorf("%q:\nkong's Parse: %+v\nparse:        %+v", args, theirs, ours)
		}
		kind := "parsed"
		switch {
		case ours.exit == 0:
			kind = "help or version"
		case ours.err != "":
			kind = "other error"
			for _, s := range []string{"missing flags", "must be one of", "expected one of", "expected"} {
				if strings.Contains(ours.err, s) {
					kind = s
					break
				}
			}
		}
		seen[kind]++
	}
	t.Logf("%d command lines: %v", len(lines), seen)
	// What validate and beforeReset do must each have been compared.
	for _, kind := range []string{"parsed", "help or version", "missing flags", "must be one of", "expected one of", "expected"} {
		if seen[kind] == 0 {
			t.Errorf("no command line ended as %q: the comparison misses it", kind)
		}
	}
}

// hooks are the methods kong would look up and call by name on a value of
// the grammar (a command, a flag's value, an argument's) or run before a
// command: parse and runSelected call none but --version's BeforeReset.
var hooks = []string{"BeforeReset", "BeforeResolve", "BeforeApply", "AfterApply", "AfterRun", "Validate"}

// TestGrammarNeedsNoMore: the grammar uses nothing of kong that parse
// leaves out: no hook but --help's and --version's BeforeReset, no
// Provide method, no validator, no xor or and group, no environment
// variable, no argument that branches, and enums only on strings.
func TestGrammarNeedsNoMore(t *testing.T) {
	parser, err := newParser(&cli{}, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	checkMethods := func(what string, v reflect.Value, allowed string) {
		for _, typ := range []reflect.Type{v.Type(), reflect.PointerTo(v.Type())} {
			for m := range typ.Methods() {
				if (strings.HasPrefix(m.Name, "Provide") || slices.Contains(hooks, m.Name)) && m.Name != allowed {
					t.Errorf("%s: %s has a method %s that kong would call and parse does not", what, typ, m.Name)
				}
			}
		}
	}
	checkValue := func(what string, v *kong.Value) {
		if len(v.Tag.Envs) > 0 {
			t.Errorf("%s takes environment variables %v: validate does not check them", what, v.Tag.Envs)
		}
		if v.Enum != "" && v.Target.Kind() != reflect.String {
			t.Errorf("%s: an enum on a %s: validate checks only strings", what, v.Target.Kind())
		}
	}
	flags := 0
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		if n.Type == kong.ArgumentNode {
			t.Errorf("%s: an argument with commands of its own: validate does not check one", n.Path())
		}
		checkMethods(n.Path(), n.Target, "")
		for _, f := range n.Flags {
			flags++
			what := n.Path() + " --" + f.Name
			if len(f.Xor) > 0 || len(f.And) > 0 {
				t.Errorf("%s is in an xor or and group: validate does not check them", what)
			}
			checkValue(what, f.Value)
			allowed := ""
			if _, ok := f.Target.Interface().(versionFlag); ok || f == parser.Model.HelpFlag {
				allowed = "BeforeReset"
			}
			checkMethods(what, f.Target, allowed)
		}
		for _, a := range n.Positional {
			checkValue(n.Path()+" <"+a.Name+">", a)
			checkMethods(n.Path()+" <"+a.Name+">", a.Target, "")
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(parser.Model.Node)
	if flags < 50 {
		t.Fatalf("only %d flags walked", flags)
	}
}

// TestEveryCommandRuns: every command without commands of its own has a
// Run that runSelected calls, and no command with commands of its own has
// a Run at all (kong would run it after the one selected, and let it run
// alone; runSelected and validate do neither).
func TestEveryCommandRuns(t *testing.T) {
	parser, err := newParser(&cli{}, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	leaves := 0
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		_, hasRun := n.Target.Addr().Type().MethodByName("Run")
		switch {
		case len(n.Children) == 0 && !runnable(n):
			t.Errorf("%s: no Run(*app) or Run(*app, *session.Store) for runSelected to call", n.Path())
		case len(n.Children) > 0 && hasRun:
			t.Errorf("%s has commands and a Run of its own", n.Path())
		case len(n.Children) == 0:
			leaves++
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(parser.Model.Node)
	if leaves < 10 {
		t.Fatalf("only %d commands found", leaves)
	}
}
