package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// requiredSamples are valid values for the flags a command requires, so
// that the flag under test is the only thing wrong with a command line.
var requiredSamples = map[string]string{"older-than": "30d", "mcp-config": "mcp.json", "html": "report.html"}

// TestEmptyFlagValues walks the whole grammar: every flag that takes a
// value, of every command, refuses an empty one (an unset "$VAR") with exit
// 2 and an error naming the flag, as `--flag ""` and as `--flag=`. A new
// flag is covered without anyone remembering to add it here.
func TestEmptyFlagValues(t *testing.T) {
	var grammar cli
	parser, err := newParser(&grammar, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	var walk func(node *kong.Node, path []string, inherited []*kong.Flag)
	walk = func(node *kong.Node, path []string, inherited []*kong.Flag) {
		flags := append(append([]*kong.Flag(nil), inherited...), node.Flags...)
		if len(node.Children) > 0 {
			for _, child := range node.Children {
				if child.Type == kong.CommandNode {
					walk(child, append(path, child.Name), flags)
				}
			}
			return
		}
		// The command's required positionals and flags, with valid values.
		var base []string
		for _, f := range flags {
			if f.Required {
				v, ok := requiredSamples[f.Name]
				if !ok {
					t.Fatalf("awl %s: --%s is required: add a valid value to requiredSamples", strings.Join(path, " "), f.Name)
				}
				base = append(base, "--"+f.Name+"="+v)
			}
		}
		for _, p := range node.Positional {
			if p.Required {
				base = append(base, "x")
			}
		}
		for _, f := range flags {
			if f.IsBool() || f.IsCounter() {
				continue
			}
			for _, form := range [][]string{{"--" + f.Name, ""}, {"--" + f.Name + "="}} {
				args := append(append(append([]string(nil), path...), form...), base...)
				var stdout, stderr bytes.Buffer
				code := Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
				want := "awl: --" + f.Name + ": the "
				if code != 2 || !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), " is empty") {
					t.Errorf("awl %q: exit %d, stderr %q; want exit 2 and %q", args, code, stderr.String(), want)
				}
			}
			if f.Short != 0 {
				args := append(append(append([]string(nil), path...), "-"+string(f.Short), ""), base...)
				var stdout, stderr bytes.Buffer
				if code := Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != 2 {
					t.Errorf("awl %q: exit %d, want 2", args, code)
				}
			}
			checked++
		}
	}
	walk(parser.Model.Node, nil, nil)
	t.Logf("%d flags refuse an empty value", checked)
	if checked < 50 {
		t.Errorf("checked %d flags; the walk missed most of the grammar", checked)
	}
}
