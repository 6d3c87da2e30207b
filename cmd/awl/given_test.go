package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestGivenFlagsMatch: the record of the flags given is the same whether
// fastRun or kong parsed the command line, for short flags, repeated list
// flags, values joined with "=", global flags before and after the command,
// a bool given "=false"; and an empty value given explicitly is refused by
// both, with no record to act on. Precedence (configuration files below
// flags) reads this record, so a flag the fast path parses must count as
// given exactly as kong's would.
func TestGivenFlagsMatch(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the record, names joined by spaces; "!" when refused
		fast bool   // fastRun takes the line
	}{
		{[]string{"run", "--tools", "read", "--tools", "grep,ls", "-q", "-C", "/tmp", "p"}, "cd quiet tools", true},
		{[]string{"--session-dir", "/s", "run", "-o", "json", "--max-turns=3", "p"}, "max-turns output session-dir", true},
		{[]string{"run", "--session-dir=/s", "p"}, "session-dir", true},
		{[]string{"run", "--check", "a", "--check", "b", "--check=c", "p"}, "check", true},
		{[]string{"run", "--sandbox-writable=/a", "--sandbox-writable", "/b", "p"}, "sandbox-writable", true},
		{[]string{"run", "-c", "go", "on"}, "continue", true},
		{[]string{"run", "--resume", "abc", "next"}, "resume", true},
		{[]string{"run", "-f", "-x.md"}, "prompt-file", true},
		{[]string{"run", "-p", "- a list item", "--max-cost-usd", "0.5"}, "max-cost-usd prompt", true},
		{[]string{"run", "p", "--no-stdin"}, "no-stdin", true},
		{[]string{"run", "--", "--model", "x"}, "", true},
		{[]string{"run", "hello"}, "", true},
		{[]string{"run", "--tools", "a", "--no-tools", "--context-window", "0x10", "p"}, "context-window no-tools tools", true},
		// kong's alone: a bool given a value, a short flag cluster.
		{[]string{"run", "--stream=false", "p"}, "stream", false},
		{[]string{"run", "-qc", "p"}, "continue quiet", false},
		// Empty values, given explicitly: refused by both.
		{[]string{"run", "--model=", "p"}, "!", false},
		{[]string{"run", "--model", "", "p"}, "!", false},
		{[]string{"run", "-o", "", "p"}, "!", false},
		{[]string{"run", "--tools=,", "p"}, "!", false},
		{[]string{"run", "--check="}, "!", false},
		{[]string{"run", "--session-dir=", "p"}, "!", false},
	} {
		rewritten, err := rewriteResume(tc.args)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		_, c, ok := fastRun(rewritten)
		if ok != tc.fast {
			t.Errorf("%q: fastRun took it: %v, want %v", tc.args, ok, tc.fast)
		}
		if ok && strings.Join(c.given.names, " ") != tc.want {
			t.Errorf("%q: fastRun's record %q, want %q", tc.args, c.given.names, tc.want)
		}
		for _, grammar := range []any{&runCLI{}, &cli{}} {
			var stdout, stderr bytes.Buffer
			parser, err := newParser(grammar, &stdout, &stderr)
			if err != nil {
				t.Fatal(err)
			}
			kctx, err := parse(parser, rewritten)
			switch {
			case tc.want == "!" && err == nil:
				t.Errorf("%q: kong took an empty value (record %q)", tc.args, givenOf(kctx).names)
			case tc.want != "!" && err != nil:
				t.Errorf("%q: kong refused it: %v", tc.args, err)
			case err == nil:
				if got := strings.Join(givenOf(kctx).names, " "); got != tc.want {
					t.Errorf("%q: kong's record %q, want %q", tc.args, got, tc.want)
				}
			}
		}
	}
}

// TestGivenFlagsRecord: has and add keep the record sorted and each name
// once, in any order of adding.
func TestGivenFlagsRecord(t *testing.T) {
	var g givenFlags
	for _, n := range []string{"tools", "cd", "tools", "model", "cd", "a"} {
		g.add(n)
	}
	if want := []string{"a", "cd", "model", "tools"}; !slices.Equal(g.names, want) {
		t.Fatalf("record %q, want %q", g.names, want)
	}
	for _, n := range []string{"a", "cd", "model", "tools"} {
		if !g.has(n) {
			t.Errorf("has(%q) is false", n)
		}
	}
	for _, n := range []string{"", "b", "mode", "toolsx", "z"} {
		if g.has(n) {
			t.Errorf("has(%q) is true", n)
		}
	}
}
