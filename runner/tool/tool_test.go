package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// call runs the built-in tool name in env with input.
func call(t *testing.T, env Env, name, input string) Result {
	t.Helper()
	return builtinNamed(t, env, name).Run(context.Background(), json.RawMessage(input))
}

// builtinNamed returns the built-in tool name in env.
func builtinNamed(t testing.TB, env Env, name string) Tool {
	t.Helper()
	for _, tl := range Builtins(env) {
		if tl.Name() == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// args encodes v as tool input.
func args(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tree writes files (slash paths to contents) under a new temp dir.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// want checks a result's error flag and that its content holds every part.
func want(t *testing.T, res Result, isErr bool, parts ...string) {
	t.Helper()
	if res.IsError != isErr {
		t.Errorf("IsError = %v, want %v; content:\n%s", res.IsError, isErr, res.Content)
	}
	for _, p := range parts {
		if !strings.Contains(res.Content, p) {
			t.Errorf("content lacks %q; content:\n%s", p, res.Content)
		}
	}
}

func TestBuiltinsOrderAndSchemas(t *testing.T) {
	var names []string
	for _, tl := range Builtins(Env{}) {
		names = append(names, tl.Name())
		if tl.Description() == "" {
			t.Errorf("%s: empty description", tl.Name())
		}
		var s struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(tl.Schema(), &s); err != nil {
			t.Fatalf("%s: schema is not JSON: %v", tl.Name(), err)
		}
		if s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties || s.Required == nil {
			t.Errorf("%s: schema %s: want type object, a required list, additionalProperties false", tl.Name(), tl.Schema())
		}
		for _, r := range s.Required {
			if _, ok := s.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", tl.Name(), r)
			}
		}
		if again := tl.Schema(); string(again) != string(tl.Schema()) {
			t.Errorf("%s: schema bytes differ between calls", tl.Name())
		}
	}
	wantNames := []string{"bash", "read", "write", "edit", "ls", "glob", "grep", "view_image"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("Builtins = %v, want %v", names, wantNames)
	}
}

// TestBadArguments sends every tool malformed input: each must come back as
// an error result that says what was wrong.
func TestBadArguments(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		input string
		want  string
	}{
		{`not json`, "must be a JSON object"},
		{`[1,2]`, "must be a JSON object, got an array"},
		{`"x"`, "must be a JSON object, got a string"},
		{`null`, "must be a JSON object"},
		{`{"nope": 1}`, `unknown argument "nope"`},
	}
	for _, tl := range Builtins(Env{Dir: dir}) {
		for _, c := range cases {
			res := tl.Run(context.Background(), json.RawMessage(c.input))
			if !res.IsError || !strings.Contains(res.Content, c.want) || !strings.HasPrefix(res.Content, tl.Name()+":") {
				t.Errorf("%s(%s) = %+v, want an error naming the tool and saying %q", tl.Name(), c.input, res, c.want)
			}
		}
	}
	required := map[string]string{
		"bash": "command", "read": "path", "write": "path", "edit": "path",
		"glob": "pattern", "grep": "pattern", "view_image": "path",
	}
	for name, arg := range required {
		for _, in := range []string{``, `{}`} {
			want(t, call(t, Env{Dir: dir}, name, in), true, `missing required argument "`+arg+`"`)
		}
	}
	want(t, call(t, Env{Dir: dir}, "read", `{"path": 7}`), true, `argument "path" must be a string, got a number 7`)
	want(t, call(t, Env{Dir: dir}, "bash", `{"command": "true", "timeout": "5"}`), true, `argument "timeout" must be an integer, got a string "5"`)
	want(t, call(t, Env{Dir: dir}, "bash", `{"command": "true", "timeout": 1.5}`), true, `must be an integer`)
	want(t, call(t, Env{Dir: dir}, "edit", `{"path": "a", "old_string": "x", "new_string": "y", "replace_all": "yes"}`), true, `argument "replace_all" must be a boolean`)
}

func TestResolve(t *testing.T) {
	env := Env{Dir: "/work", Getenv: func(k string) string {
		if k == "HOME" {
			return "/home/u"
		}
		return ""
	}}
	for in, out := range map[string]string{
		"a/b":       "/work/a/b",
		"../x":      "/x",
		"/abs/../p": "/p",
		"~/notes":   "/home/u/notes",
		"~":         "/home/u",
		"~user/x":   "/work/~user/x",
	} {
		if got := env.resolve(in); got != out {
			t.Errorf("resolve(%q) = %q, want %q", in, got, out)
		}
	}
	if got := (Env{Dir: "/work"}).resolve("~/x"); got != "/work/~/x" {
		t.Errorf("without Getenv, resolve(~/x) = %q, want it under Dir", got)
	}
}

// TestDocsShowSchemas keeps docs/tools.md in step with the code: each tool's
// section shows its schema byte for byte.
func TestDocsShowSchemas(t *testing.T) {
	doc, err := os.ReadFile("../../docs/tools.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range Builtins(Env{}) {
		section := "\n## " + tl.Name() + "\n"
		i := strings.Index(string(doc), section)
		if i < 0 {
			t.Errorf("docs/tools.md has no section %q", strings.TrimSpace(section))
			continue
		}
		rest := string(doc[i+len(section):])
		if j := strings.Index(rest, "\n## "); j >= 0 {
			rest = rest[:j]
		}
		if !strings.Contains(rest, "```json\n"+string(tl.Schema())+"\n```") {
			t.Errorf("docs/tools.md section %s does not show the schema\n%s", tl.Name(), tl.Schema())
		}
	}
}
