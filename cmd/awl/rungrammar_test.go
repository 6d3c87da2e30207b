package main

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
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
		var kctx interface{ Command() string }
		kctx, err = parser.Parse(rewritten)
		if err == nil {
			out.command = kctx.Command()
		}
	}
	if err != nil {
		out.err = err.Error()
	}
	return out
}

// TestRunGrammar: for every `awl run` flag given well, badly, empty or
// without its value, and for the usual shapes of a command line, the run
// grammar that mainAt uses for `awl run` parses, fails and helps exactly as
// the whole grammar does.
func TestRunGrammar(t *testing.T) {
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
