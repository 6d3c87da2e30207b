package main

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/modelinfo"
)

// TestRunWindow: the window flags become the run's runner.Window. Without
// --prune-at, a --compact-at below the default prune threshold brings
// pruning down with it, so pruning still comes first.
func TestRunWindow(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		model string
		want  runner.Window
	}{
		{nil, "claude-sonnet-4-5", runner.Window{Tokens: 200000}},
		{nil, "claude-sonnet-4-5-20250929", runner.Window{Tokens: 200000}},
		{nil, "no-such-model", runner.Window{}},
		{[]string{"--context-window", "20000"}, "claude-sonnet-4-5", runner.Window{Tokens: 20000}},
		{[]string{"--context-window", "20000"}, "no-such-model", runner.Window{Tokens: 20000}},
		{[]string{"--prune-at", "30", "--compact-at", "70"}, "claude-sonnet-4-5", runner.Window{Tokens: 200000, PruneAt: 30, CompactAt: 70}},
		{[]string{"--compact-at", "50"}, "claude-sonnet-4-5", runner.Window{Tokens: 200000, PruneAt: 50, CompactAt: 50}},
		{[]string{"--compact-at", "90"}, "claude-sonnet-4-5", runner.Window{Tokens: 200000, CompactAt: 90}},
		{[]string{"--prune-at", "90", "--no-compact"}, "claude-sonnet-4-5", runner.Window{Tokens: 200000, PruneAt: 90, NoCompact: true}},
	} {
		var grammar cli
		parser, err := newParser(&grammar, io.Discard, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parser.Parse(append([]string{"run"}, tc.args...)); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		c := &grammar.Run
		if err := c.validateWindow(); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		var stderr bytes.Buffer
		a := &app{ctx: context.Background(), stderr: &stderr}
		if got := c.window(a, modelinfo.Default(), "anthropic", tc.model); got != tc.want {
			t.Errorf("%v with %s: window %+v, want %+v", tc.args, tc.model, got, tc.want)
		}
	}
}
