package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// parseOutcome is everything a parse shows: the command, what it filled
// in, its error, the exit a help or --version asked for, and what it wrote.
type parseOutcome struct {
	command        string
	run            runCmd
	globals        globals
	err            string
	exit           int
	stdout, stderr string
}

func parseWith(t *testing.T, only bool, args []string) (out parseOutcome) {
	t.Helper()
	var whole cli
	var run runCLI
	g, gl, rc := any(&whole), &whole.globals, &whole.Run
	if only {
		g, gl, rc = &run, &run.globals, &run.Run
	}
	var stdout, stderr bytes.Buffer
	parser, err := newParser(g, &stdout, &stderr)
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
		out.run, out.globals = *rc, *gl
		out.stdout, out.stderr = stdout.String(), stderr.String()
	}()
	rewritten, err := rewriteResume(args)
	if err == nil {
		var kctx *kong.Context
		kctx, err = parser.Parse(rewritten)
		if err == nil {
			out.command = kctx.Command()
			rc.given = givenOf(kctx)
		}
	}
	if err != nil {
		out.err = err.Error()
	}
	return out
}

// runGrammarCases are command lines of `awl run`: for every flag of the
// run command, given well, badly, empty or without its value, and the
// usual shapes of a command line.
func runGrammarCases(t *testing.T) [][]string {
	t.Helper()
	cases := [][]string{
		{"run"}, {"run", "--help"}, {"run", "-h"}, {"run", "hello", "world"},
		{"--session-dir", "/x", "run", "p"}, {"--session-dir=/x", "run", "p"},
		{"run", "--bogus"}, {"run", "--sesion-dir", "x"}, {"run", "--version"},
		{"run", "--", "--not-a-flag"}, {"run", "-p", "x", "-f", "y"},
		{"run", "--resume"}, {"run", "--resume", "abc", "more"}, {"run", "-c", "go on"},
		{"run", "--session-dir", "/y", "p"},
	}
	parser, err := newParser(&cli{}, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range parser.Model.Children {
		if n.Name != "run" {
			continue
		}
		for _, f := range n.Flags {
			long := "--" + f.Name
			if f.IsBool() {
				cases = append(cases, []string{"run", long}, []string{"run", long + "=false"}, []string{"run", long + "=x"})
			} else {
				cases = append(cases, []string{"run", long, "1"}, []string{"run", long + "=x"},
					[]string{"run", long + "="}, []string{"run", long}, []string{"run", long, "2", long, "3s"})
			}
			if f.Short != 0 {
				cases = append(cases, []string{"run", fmt.Sprintf("-%c", f.Short), "4"})
			}
		}
	}
	return cases
}

// TestRunGrammar: for every `awl run` flag given well, badly, empty or
// without its value, and for the usual shapes of a command line, the run
// grammar that mainAt uses for `awl run` parses, fails and helps exactly as
// the whole grammar does.
func TestRunGrammar(t *testing.T) {
	cases := runGrammarCases(t)
	t.Logf("%d command lines", len(cases))
	if len(cases) < 150 {
		t.Fatalf("only %d cases: the run command's flags were not found", len(cases))
	}
	for _, args := range cases {
		if !onlyRun(args) {
			t.Fatalf("%q: onlyRun is false", args)
		}
		whole, run := parseWith(t, false, args), parseWith(t, true, args)
		if !reflect.DeepEqual(whole, run) {
			t.Errorf("%q:\nwhole grammar: %+v\nrun grammar:   %+v", args, whole, run)
		}
	}
	for _, args := range [][]string{{}, {"sessions"}, {"--help"}, {"--version", "run"}, {"--session-dir"}, {"runs"}, {"--session-dir", "run", "sessions"}} {
		if onlyRun(args) {
			t.Errorf("%q: onlyRun is true", args)
		}
	}
}

// TestFastRunMatchesKong: whenever fastRun accepts a command line, kong
// accepts it too and fills exactly the same runCmd and globals. The lines
// are the run grammar's cases and thousands generated from the run
// command's flags and awkward values (empty, separators only, a leading
// "-", octal and hex numbers, repeated flags, "--").
func TestFastRunMatchesKong(t *testing.T) {
	cases := runGrammarCases(t)
	var names []string
	for _, f := range runFlagTable.flags {
		names = append(names, "--"+f.name)
		if f.short != 0 {
			names = append(names, "-"+string(f.short))
		}
	}
	slices.Sort(names)
	names = append(names, "--session-dir", "--help", "--version", "--bogus", "-qc", "-oj")
	values := []string{"", " ", "x", "1", "0", "-1", "010", "0x10", "1_000", "1e3", "2.5", "3s", "1h2m",
		"-", "--", "-x", "a,b", "a,,b", ",", "a,", `a\,b`, "true", "false", "text", "json", "ndjson",
		"none", "=", "9223372036854775808", "NaN", "Inf", "héllo", "a b"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 8000 {
		args := []string{"run"}
		if rng.IntN(8) == 0 {
			args = []string{"--session-dir", values[rng.IntN(len(values))], "run"}
		}
		for range rng.IntN(6) {
			switch rng.IntN(5) {
			case 0:
				args = append(args, values[rng.IntN(len(values))])
			case 1:
				args = append(args, names[rng.IntN(len(names))]+"="+values[rng.IntN(len(values))])
			default:
				args = append(args, names[rng.IntN(len(names))], values[rng.IntN(len(values))])
			}
		}
		cases = append(cases, args)
	}
	var whole runCLI
	var stdout, stderr bytes.Buffer
	parser, err := newParser(&whole, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	accepted := 0
	for _, args := range cases {
		rewritten, err := rewriteResume(args)
		if err != nil {
			continue // mainAt refuses these before any parser
		}
		g, c, ok := fastRun(rewritten)
		if !ok {
			continue
		}
		accepted++
		out := kongParse(parser, &whole, rewritten)
		if out.err != "" || out.exit != -1 || stdout.Len() > 0 || stderr.Len() > 0 {
			t.Errorf("%q: fastRun accepted what kong refuses: %q (exit %d) %s%s", args, out.err, out.exit, stdout.String(), stderr.String())
		} else if !reflect.DeepEqual(c, out.run) || !reflect.DeepEqual(g, out.globals) {
			t.Errorf("%q:\nkong:    %+v %+v\nfastRun: %+v %+v", args, out.globals, out.run, g, c)
		}
		stdout.Reset()
		stderr.Reset()
	}
	t.Logf("fastRun took %d of %d command lines", accepted, len(cases))
	if accepted < len(cases)/10 {
		t.Fatalf("fastRun took only %d of %d lines: it no longer accelerates", accepted, len(cases))
	}
}

// kongParse parses args with a parser built once over grammar (kong resets
// the values at each parse).
func kongParse(parser *kong.Kong, grammar *runCLI, args []string) (out parseOutcome) {
	out.exit = -1
	defer func() {
		if p := recover(); p != nil {
			ep, ok := p.(exitPanic)
			if !ok {
				panic(p)
			}
			out.exit = ep.code
		}
		out.run, out.globals = grammar.Run, grammar.globals
	}()
	kctx, err := parser.Parse(args)
	if err != nil {
		out.err = err.Error()
	} else {
		grammar.Run.given = givenOf(kctx)
	}
	return out
}

// TestFastRunTakesCommonLines: the command lines the docs and pipelines
// write are parsed without kong, so their start does not pay for it.
func TestFastRunTakesCommonLines(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--no-stdin", "hello"},
		{"run", "summarise", "the", "log"},
		{"--session-dir", "/tmp/s", "run", "-o", "ndjson", "--max-turns", "20", "fix the test"},
		{"run", "--resume", "0190-abc", "step two"},
		{"run", "-c", "-q", "go on"},
		{"run", "--output-schema", "verdict.json", "--check", "go test ./...", "--timeout", "10m", "-p", "- a list item"},
		{"run", "--sandbox", "workspace-write", "--tools", "read,grep", "--model", "claude-sonnet-4-5", "-f", "prompt.md"},
	} {
		rewritten, err := rewriteResume(args)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := fastRun(rewritten); !ok {
			t.Errorf("%q: fastRun declined it", args)
		}
	}
}

// FuzzFastRun: for any command line (words separated by NUL), fastRun
// accepts only what kong accepts, and fills the same values.
func FuzzFastRun(f *testing.F) {
	for _, args := range [][]string{
		{"run", "--no-stdin", "hello"}, {"run", "-o", "ndjson", "--max-turns", "0x10", "p"},
		{"--session-dir", "/s", "run", "--tools", "a,,b", "--", "x"}, {"run", "-f=x"}, {"run", "w", "-q", "w"},
	} {
		f.Add(strings.Join(args, "\x00"))
	}
	var whole runCLI
	var stdout, stderr bytes.Buffer
	parser, err := newParser(&whole, &stdout, &stderr)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		rewritten, err := rewriteResume(args)
		if err != nil {
			return
		}
		g, c, ok := fastRun(rewritten)
		if !ok {
			return
		}
		stdout.Reset()
		stderr.Reset()
		out := kongParse(parser, &whole, rewritten)
		if out.err != "" || out.exit != -1 || stdout.Len() > 0 || stderr.Len() > 0 {
			t.Fatalf("%q: fastRun accepted what kong refuses: %q (exit %d)", args, out.err, out.exit)
		}
		if !reflect.DeepEqual(c, out.run) || !reflect.DeepEqual(g, out.globals) {
			t.Fatalf("%q:\nkong:    %+v %+v\nfastRun: %+v %+v", args, out.globals, out.run, g, c)
		}
	})
}

// BenchmarkParseRunLine parses a pipeline's `awl run` line the two ways
// mainAt can: fastRun, and kong's parser built for the run grammar.
func BenchmarkParseRunLine(b *testing.B) {
	args := []string{"run", "-o", "ndjson", "--max-turns", "20", "--sandbox", "workspace-write", "--no-stdin", "fix the failing test"}
	b.Run("fastRun", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			rewritten, _ := rewriteResume(args)
			if _, _, ok := fastRun(rewritten); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("kong", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var g runCLI
			parser, err := newParser(&g, io.Discard, io.Discard)
			if err != nil {
				b.Fatal(err)
			}
			rewritten, _ := rewriteResume(args)
			if _, err := parser.Parse(rewritten); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestVersionWithoutParser: `awl --version` and `awl version`, which
// mainAt answers before building a parser, print what kong's flag and
// command print, with the same exit.
func TestVersionWithoutParser(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), args, strings.NewReader(""), &out, &errOut)
		// Through kong: the same words with a global flag it must parse.
		var kout, kerr bytes.Buffer
		kcode := Main(context.Background(), append([]string{"--session-dir", t.TempDir()}, args...), strings.NewReader(""), &kout, &kerr)
		if code != 0 || kcode != 0 || out.String() != kout.String() || out.String() != currentStamp().String()+"\n" || errOut.Len()+kerr.Len() > 0 {
			t.Errorf("%q: exit %d %q %q; through kong exit %d %q %q", args, code, out.String(), errOut.String(), kcode, kout.String(), kerr.String())
		}
	}
}
