package main

import (
	"io"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// helpKeys walks the model as fillHelp does and calls f with each
// command's, argument's and flag's key and help; kong's own --help is left
// out.
func helpKeys(node *kong.Node, path string, f func(key, help string)) {
	pre := path
	if path != "" {
		f(path, node.Help)
		pre += " "
	}
	for _, a := range node.Positional {
		f(pre+"<"+a.Name+">", a.Help)
	}
	for _, fl := range node.Flags {
		if fl.Name != "help" {
			f(pre+"--"+fl.Name, fl.Help)
		}
	}
	for _, c := range node.Children {
		helpKeys(c, pre+c.Name, f)
	}
}

// TestHelpTexts keeps helpTable and the grammar in step: every command,
// argument and flag has a text, every text belongs to one of them once, none is
// left with an @name@ unfilled, and no help is in a struct tag (where kong
// would parse it at every start).
func TestHelpTexts(t *testing.T) {
	parser, err := newParser(&cli{}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	helpKeys(parser.Model.Node, "", func(key, help string) {
		used[key] = true
		if help == "" {
			t.Errorf("%q has no help: add it to helpTable", key)
		}
		if i := strings.IndexByte(help, '@'); i >= 0 && strings.IndexByte(help[i+1:], '@') >= 0 {
			t.Errorf("%q: help with an unfilled variable: %s", key, help)
		}
	})
	seen := map[string]bool{}
	for _, e := range helpTable {
		if seen[e.key] {
			t.Errorf("helpTable has %q twice: the second text wins", e.key)
		}
		seen[e.key] = true
		if !used[e.key] {
			t.Errorf("helpTable has %q, which the grammar has not", e.key)
		}
	}

	bare, err := kong.New(&cli{}, kong.Name("awl"), kong.Writers(io.Discard, io.Discard), kong.Exit(func(int) {}))
	if err != nil {
		t.Fatal(err)
	}
	helpKeys(bare.Model.Node, "", func(key, help string) {
		if help != "" {
			t.Errorf("%q has its help in a struct tag (%q): move it to helpTable", key, help)
		}
	})
}
