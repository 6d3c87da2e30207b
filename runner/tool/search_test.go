package tool

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

var searchTree = map[string]string{
	"main.go":               "package main\n\nfunc main() {\n\tprintln(\"Hello\")\n}\n",
	"README.md":             "# hello\nsee main.go\n",
	"cmd/awl/cli.go":        "package cli\n// hello from cli\n",
	"cmd/awl/cli_test.go":   "package cli\n",
	"internal/a/b/deep.go":  "package b\nvar Hello = 1\n",
	"internal/a/b/data.bin": "hello\x00binary",
	".git/config":           "hello = git\n",
	".git/objects/x.go":     "package git\n",
	"vendor/.git/HEAD":      "hello\n",
	"a.go/inner.txt":        "hello\n",
}

func TestGlob(t *testing.T) {
	dir := tree(t, searchTree)
	cases := []struct {
		input string
		isErr bool
		want  string
	}{
		{`{"pattern":"*.go"}`, false, "main.go\n"},
		{`{"pattern":"**/*.go"}`, false, "cmd/awl/cli.go\ncmd/awl/cli_test.go\ninternal/a/b/deep.go\nmain.go\n"},
		{`{"pattern":"**"}`, false, "README.md\na.go/inner.txt\ncmd/awl/cli.go\ncmd/awl/cli_test.go\ninternal/a/b/data.bin\ninternal/a/b/deep.go\nmain.go\n"},
		{`{"pattern":"cmd/**/*_test.go"}`, false, "cmd/awl/cli_test.go\n"},
		{`{"pattern":"internal/**/b/*"}`, false, "internal/a/b/data.bin\ninternal/a/b/deep.go\n"},
		{`{"pattern":"*/*/*.go"}`, false, "cmd/awl/cli.go\ncmd/awl/cli_test.go\n"},
		{`{"pattern":"**/*.go","path":"cmd"}`, false, "awl/cli.go\nawl/cli_test.go\n"},
		{`{"pattern":"./cmd/awl/cli.go"}`, false, "cmd/awl/cli.go\n"},
		{`{"pattern":"[A-Z]*"}`, false, "README.md\n"},
		{`{"pattern":"**/*.py"}`, false, "no files match **/*.py in ."},
		{`{"pattern":"nope/**/*.go"}`, false, "no files match nope/**/*.go in ."},
		{`{"pattern":"cmd"}`, false, "no files match cmd in ."},
		{`{"pattern":"[x"}`, true, `glob: bad pattern "[x": syntax error in pattern`},
		{`{"pattern":""}`, true, `glob: pattern "" matches nothing`},
		{`{"pattern":"*","path":"main.go"}`, true, "glob: main.go is not a directory"},
		{`{"pattern":"*","path":"nope"}`, true, "glob: nope: no such file or directory"},
	}
	for _, c := range cases {
		res := call(t, Env{Dir: dir}, "glob", c.input)
		if res.IsError != c.isErr || res.Content != c.want {
			t.Errorf("glob %s =\n%s(error %v)\nwant\n%s(error %v)", c.input, res.Content, res.IsError, c.want, c.isErr)
		}
	}
	// An absolute pattern lists absolute paths.
	abs := filepath.ToSlash(dir) + "/cmd/**/cli.go"
	res := call(t, Env{Dir: "/"}, "glob", args(t, map[string]any{"pattern": abs}))
	want(t, res, false, filepath.ToSlash(dir)+"/cmd/awl/cli.go\n")
}

func TestGlobCap(t *testing.T) {
	files := map[string]string{}
	for i := range MaxGlobResults + 3 {
		files[fmt.Sprintf("d%d/f%04d.txt", i%7, i)] = ""
	}
	res := call(t, Env{Dir: tree(t, files)}, "glob", `{"pattern":"**/*.txt"}`)
	want(t, res, false, "[showing 1000 of 1003 matches; 3 more not shown: narrow the pattern or the path]")
	if n := strings.Count(res.Content, ".txt\n"); n != MaxGlobResults {
		t.Errorf("listed %d paths, want %d", n, MaxGlobResults)
	}
}

func TestPatternMatch(t *testing.T) {
	cases := []struct {
		pat, name string
		want      bool
	}{
		{"*.go", "a.go", true},
		{"*.go", "d/a.go", false},
		{"**/*.go", "a.go", true},
		{"**/*.go", "d/e/a.go", true},
		{"**", "d/e/a.go", true},
		{"a/**", "a/x", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"a/**/**/b", "a/b", true},
		{"**/a/**/a/**/a/**/b", strings.Repeat("a/", 40) + "c", false},
		{"?.txt", "ab.txt", false},
	}
	for _, c := range cases {
		p, err := parsePattern(c.pat)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.match(strings.Split(c.name, "/")); got != c.want {
			t.Errorf("%q match %q = %v, want %v", c.pat, c.name, got, c.want)
		}
	}
	p, _ := parsePattern("src/*/x/*.go")
	for dir, want := range map[string]bool{"src": true, "src/a": true, "src/a/x": true, "src/a/y": false, "lib": false, "src/a/x/z": false} {
		if got := p.mayMatchUnder(strings.Split(dir, "/")); got != want {
			t.Errorf("mayMatchUnder(%q) = %v, want %v", dir, got, want)
		}
	}
}

func TestGrep(t *testing.T) {
	dir := tree(t, searchTree)
	cases := []struct {
		input string
		isErr bool
		want  string
	}{
		{`{"pattern":"hello"}`, false, "README.md:1: # hello\na.go/inner.txt:1: hello\ncmd/awl/cli.go:2: // hello from cli\n"},
		{`{"pattern":"hello","ignore_case":true}`, false,
			"README.md:1: # hello\na.go/inner.txt:1: hello\ncmd/awl/cli.go:2: // hello from cli\ninternal/a/b/deep.go:2: var Hello = 1\nmain.go:4: \tprintln(\"Hello\")\n"},
		{`{"pattern":"^package \\w+$","glob":"*.go"}`, false,
			"cmd/awl/cli.go:1: package cli\ncmd/awl/cli_test.go:1: package cli\ninternal/a/b/deep.go:1: package b\nmain.go:1: package main\n"},
		{`{"pattern":"package","glob":"cmd/**/*_test.go"}`, false, "cmd/awl/cli_test.go:1: package cli\n"},
		{`{"pattern":"package","path":"cmd/awl"}`, false, "cli.go:1: package cli\ncli_test.go:1: package cli\n"},
		{`{"pattern":"main","path":"main.go"}`, false, "main.go:1: package main\nmain.go:3: func main() {\n"},
		{`{"pattern":"zzz"}`, false, "no matches for zzz in ."},
		{`{"pattern":"a(b"}`, true, "grep: bad regular expression: error parsing regexp: missing closing ): `a(b`"},
		{`{"pattern":""}`, true, "grep: pattern is empty"},
		{`{"pattern":"x","glob":"[x"}`, true, `grep: glob: bad pattern "[x"`},
		{`{"pattern":"x","path":"nope"}`, true, "grep: nope: no such file or directory"},
		{`{"pattern":"x","path":"internal/a/b/data.bin"}`, true, "grep: internal/a/b/data.bin is a binary file"},
	}
	for _, c := range cases {
		res := call(t, Env{Dir: dir}, "grep", c.input)
		if res.IsError != c.isErr || !strings.HasPrefix(res.Content, c.want) || (!c.isErr && res.Content != c.want) {
			t.Errorf("grep %s =\n%s(error %v)\nwant\n%s(error %v)", c.input, res.Content, res.IsError, c.want, c.isErr)
		}
	}
}

func TestGrepCapsAndCuts(t *testing.T) {
	long := strings.Repeat("x", 3*grepLineBytes)
	dir := tree(t, map[string]string{
		"many.txt": strings.Repeat("match\n", MaxGrepMatches+10),
		"long.txt": long + "needle\n",
	})
	res := call(t, Env{Dir: dir}, "grep", `{"pattern":"match","path":"many.txt"}`)
	want(t, res, false, fmt.Sprintf("many.txt:%d: match\n[showing %d of %d matching lines in 1 file; 10 more not shown: narrow the pattern, or the search with path or glob]\n", MaxGrepMatches, MaxGrepMatches, MaxGrepMatches+10))
	// A match past the displayed part of a line is still found.
	res = call(t, Env{Dir: dir}, "grep", `{"pattern":"needle"}`)
	want(t, res, false, "long.txt:1: "+long[:grepLineBytes]+" [… line cut]\n")
}

// FuzzGlobPattern checks the glob matcher never panics and that pruning is
// safe: a directory that holds a matching file is never skipped.
func FuzzGlobPattern(f *testing.F) {
	for _, s := range [][2]string{
		{"**/*.go", "a/b/c.go"}, {"a/**/b/**", "a/x/b/y"}, {"[a-", "a"}, {"*/?", "x/y"},
		{"src/*/x/*.go", "src/q/x/m.go"}, {`\*`, "*"}, {"**", "z"}, {"a/**/**/b", "a/b"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, name string) {
		p, err := parsePattern(pat)
		if err != nil {
			return
		}
		segs := strings.Split(name, "/")
		if slices.Contains(segs, "") {
			return // a walk never yields empty segments
		}
		if !p.match(segs) {
			return
		}
		for i := 1; i < len(segs); i++ {
			if !p.mayMatchUnder(segs[:i]) {
				t.Fatalf("%q matches %q, but the walk would skip %q", pat, name, strings.Join(segs[:i], "/"))
			}
		}
	})
}

// TestConcurrentCalls runs every tool at once, as the runner does for the
// independent calls of one turn; the race detector checks they share nothing.
func TestConcurrentCalls(t *testing.T) {
	dir := tree(t, searchTree)
	env := Env{Dir: dir}
	inputs := map[string]string{
		"bash":       `{"command":"echo hi"}`,
		"read":       `{"path":"main.go"}`,
		"write":      `{"path":"out/new.txt","content":"x"}`,
		"edit":       `{"path":"README.md","old_string":"# hello","new_string":"# hi"}`,
		"ls":         `{}`,
		"glob":       `{"pattern":"**/*.go"}`,
		"grep":       `{"pattern":"package"}`,
		"view_image": `{"path":"main.go"}`,
	}
	tools := Builtins(env)
	results := make([]Result, len(tools))
	var wg sync.WaitGroup
	for i, tl := range tools {
		wg.Go(func() { results[i] = tl.Run(t.Context(), json.RawMessage(inputs[tl.Name()])) })
	}
	wg.Wait()
	for i, tl := range tools {
		if wantErr := tl.Name() == "view_image"; results[i].IsError != wantErr {
			t.Errorf("%s: %+v", tl.Name(), results[i])
		}
	}
}

// TestMatchSegment: the shortcuts agree with path.Match.
func TestMatchSegment(t *testing.T) {
	segs := []string{"*.go", "*_test.go", "main*", "*", "a", "*a*", `\*.go`, "[ab]*", "?.go", "*.", "x*y", `*\*`}
	names := []string{"a.go", "x_test.go", "main.go", "main", "a", "", "*.go", "b.go", "ab.go", "go", "x.y", "xy", "q*"}
	for _, s := range segs {
		for _, n := range names {
			want, _ := path.Match(s, n)
			if got := matchSegment(s, n); got != want {
				t.Errorf("matchSegment(%q, %q) = %v, path.Match says %v", s, n, got, want)
			}
		}
	}
}
