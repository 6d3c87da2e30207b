package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	for in, want := range map[string][]string{
		"bash(echo a,b),read":                  {"bash(echo a,b)", "read"},
		" read , , write(src/**) ":             {"read", "write(src/**)"},
		"bash(f (a,b) c),mcp__gh__*":           {"bash(f (a,b) c)", "mcp__gh__*"},
		"":                                     nil,
		",,":                                   nil,
		"bash(git diff *),bash(go test ./...)": {"bash(git diff *)", "bash(go test ./...)"},
	} {
		if got := Split(in); !slices.Equal(got, want) {
			t.Errorf("Split(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseRuleErrors(t *testing.T) {
	for rule, want := range map[string]string{
		"bash(":           "must end with )",
		"bash)":           ") without (",
		"(x)":             "no tool name",
		"bash()":          "the pattern is empty",
		"bash(  )":        "the pattern is empty",
		"mcp__gh__x(foo)": "argument patterns apply to bash and the file tools",
		"bash(a; b)":      "one simple command",
		"bash(a | b)":     "one simple command",
		"bash(X=1 a)":     "one simple command",
		"bash(echo $X)":   "no expansion",
		"bash(echo 'a)":   "cannot parse",
		"read(~/x)":       "~ is not expanded",
		"read([)":         "bad pattern",
		"[":               "bad pattern",
	} {
		_, err := ParseRule(rule)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRule(%q) = %v, want an error with %q", rule, err, want)
		}
	}
	_, err := New(Options{Allow: []string{"read,nosuch"}, Known: func(n string) bool { return n == "read" }, Builtins: []string{"read"}})
	if err == nil || err.Error() != `--tools: unknown tool "nosuch" (tools: read)` {
		t.Errorf("unknown tool: %v", err)
	}
	_, err = New(Options{Deny: []string{"bash(a;b)"}, DenyFrom: "deny-tools (awl.toml)"})
	if err == nil || !strings.HasPrefix(err.Error(), `deny-tools (awl.toml): rule "bash(a;b)"`) {
		t.Errorf("deny error: %v", err)
	}
	if _, err := New(Options{Allow: []string{"mcp__gh__x,mcp__*"}, Known: func(string) bool { return false }}); err != nil {
		t.Errorf("MCP names and globs need no known tool: %v", err)
	}
}

func TestCmdPattern(t *testing.T) {
	st := func(ws ...string) []arg {
		out := make([]arg, len(ws))
		for i, w := range ws {
			switch w {
			case "$":
				out[i] = arg{}
			case "$@":
				out[i] = arg{multi: true}
			default:
				out[i] = arg{s: w, static: true}
			}
		}
		return out
	}
	for _, c := range []struct {
		pat            string
		args           []arg
		sure, possible bool
	}{
		{"git diff *", st("git", "diff"), true, true},
		{"git diff *", st("git", "diff", "a", "b"), true, true},
		{"git diff:*", st("git", "diff", "$@"), true, true},
		{"git diff *", st("git", "$"), false, true},
		{"git push *", st("git", "$@"), false, true},
		{"git push *", st("git", "status"), false, false},
		{"git * --stat", st("git", "log", "--stat"), true, true},
		{"git * --stat", st("git", "$", "--stat"), true, true},
		{"git * --stat", st("git", "$@", "--stat"), false, true},
		{"git * --stat", st("git", "--stat"), false, false},
		{"go test ./...", st("go", "test", "./..."), true, true},
		{"go test ./...", st("go", "test", "./...", "x"), false, false},
		{"go test ./...", st("go", "test", "./...", "$@"), false, true},
		{"'a b' c", st("a b", "c"), true, true},
		{"a\\*", st("a*"), true, true},
		{"a\\*", st("ab"), false, false},
		{"'a*'", st("ab"), false, false},
		{"a*", st("ab"), true, true},
		{"npm run test:*", st("npm", "run", "test", "--watch"), true, true},
		{"npm run test:*", st("npm", "run", "test:unit"), false, false},
		{"rm -[rf]*", st("rm", "-rf"), true, true},
		{"rm -[!rf]", st("rm", "-r"), false, false},
		{"x?", st("xé"), true, true},
	} {
		cp, err := parseCmdPattern(c.pat)
		if err != nil {
			t.Fatalf("%q: %v", c.pat, err)
		}
		if got := cp.match(c.args, false); got != c.sure {
			t.Errorf("%q sure match of %+v = %v", c.pat, c.args, got)
		}
		if got := cp.match(c.args, true); got != c.possible {
			t.Errorf("%q possible match of %+v = %v", c.pat, c.args, got)
		}
	}
}

func TestOffers(t *testing.T) {
	p := mustNew(t, Options{Allow: []string{"bash(git status),write(src/**),read,mcp__gh__*"}, Deny: []string{"edit,mcp__gh__delete"}})
	for name, want := range map[string]bool{
		"bash": true, "write": true, "edit": false, "read": true, "grep": false, "ls": false,
		"mcp__gh__list": true, "mcp__gh__delete": false, "mcp__other__x": false,
	} {
		if got := p.Offers(name); got != want {
			t.Errorf("Offers(%s) = %v, want %v", name, got, want)
		}
	}
	p = mustNew(t, Options{Allow: []string{"read(src/**)"}})
	for _, name := range readTools {
		if !p.Offers(name) {
			t.Errorf("read(src/**) does not offer %s", name)
		}
	}
	if p.Offers("write") || p.Offers("bash") {
		t.Error("read(src/**) offers write or bash")
	}
	// A deny rule with a pattern leaves the tool offered.
	p = mustNew(t, Options{Deny: []string{"bash(rm *),edit(.github/**)"}})
	if !p.Offers("bash") || !p.Offers("edit") {
		t.Error("a deny rule with a pattern removed its tool")
	}
	if none := mustNew(t, Options{NoTools: true}); none.Offers("read") || none.MayOffer("mcp__x__") {
		t.Error("--no-tools offers")
	}
	var nilPolicy *Policy
	if !nilPolicy.Offers("bash") || nilPolicy.Check("bash", []byte(`{"command":"rm -rf /"}`)) != nil {
		t.Error("a nil policy refuses")
	}
}

func TestMayOfferAndUnoffered(t *testing.T) {
	p := mustNew(t, Options{Allow: []string{"read,mcp__gh__list"}, Deny: []string{"mcp__bad__*"}})
	for prefix, want := range map[string]bool{"mcp__gh__": true, "mcp__bad__": false, "mcp__other__": false} {
		if got := p.MayOffer(prefix); got != want {
			t.Errorf("MayOffer(%s) = %v, want %v", prefix, got, want)
		}
	}
	if !p.DeniesUnoffered("mcp__gh__delete", true) || p.DeniesUnoffered("mcp__gh__delete", false) || !p.DeniesUnoffered("mcp__bad__x", false) {
		t.Error("DeniesUnoffered")
	}
}

// TestPaths: the path judge, relative to the run's directory, '..'
// resolved, symbolic links followed: a link's target must match too.
func TestPaths(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"src/sub", ".github/workflows", "docs"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	os.Symlink("../.github", filepath.Join(dir, "src/link"))
	os.Symlink(filepath.Join(dir, ".github/workflows/ci.yml"), filepath.Join(dir, "src/ci.yml"))
	os.Symlink("sub", filepath.Join(dir, "src/inner"))
	p := mustNew(t, Options{Dir: dir, Allow: []string{"write(src/**),read"}, Deny: []string{"edit(src/sub/locked*),read(**/.env)"}})
	for _, c := range []struct {
		tool, path string
		allow      bool
	}{
		{"write", "src/a.go", true},
		{"write", "src/new/dir/a.go", true},
		{"write", "src", true},
		{"write", "docs/a.md", false},
		{"write", "src/../.github/workflows/ci.yml", false},
		{"write", "src/link/workflows/ci.yml", false},
		{"write", "src/ci.yml", false},
		{"write", "src/inner/a.go", true},
		{"write", "src/link/../src/a.go", true}, // the kernel's src/link/.. is the run's directory
		{"write", "src/link/../.github/x", false},
		{"write", "src/inner/../a.go", true},
		{"write", dir + "/src/a.go", true},
		{"write", dir + "/.github/x", false},
		{"write", "/etc/passwd", false},
		{"write", "../" + filepath.Base(dir) + "/src/a.go", true},
		{"edit", "src/a.go", true},
		{"edit", "src/sub/locked.txt", false},
		{"edit", "src/inner/locked.txt", false},
		{"write", "src/sub/locked.txt", true},
		{"read", ".env", false},
		{"read", "a/b/.env", false},
		{"read", "README.md", true},
		{"grep", "src", false}, // no read(…) allow rule offers grep, and read alone is the read tool
	} {
		d := p.CheckPath(c.tool, p.abs(c.path))
		if (d == nil) != c.allow {
			t.Errorf("%s %s: allowed %v, want %v (%v)", c.tool, c.path, d == nil, c.allow, d)
		}
	}
	// read(**) is the run's directory, not what lies beside it.
	q := mustNew(t, Options{Dir: filepath.Join(dir, "src"), Allow: []string{"read(**)"}})
	for path, allow := range map[string]bool{"a.go": true, ".": true, "../docs/x": false, "/etc/passwd": false, "link/workflows": false} {
		if d := q.CheckPath("read", q.abs(path)); (d == nil) != allow {
			t.Errorf("read(**) %s: allowed %v, want %v (%v)", path, d == nil, allow, d)
		}
	}
	// A pattern that names what lies beside the run's directory (../)
	// matches it: a deny rule so written denies it, however the path is
	// spelt, and an allow rule so written allows it.
	r := mustNew(t, Options{Dir: filepath.Join(dir, "src"), Allow: []string{"read,write(../docs/**)"}, Deny: []string{"read(../.github/**)"}})
	for _, c := range []struct {
		tool, path string
		allow      bool
	}{
		{"read", "../.github/workflows/ci.yml", false},
		{"read", dir + "/.github/workflows/ci.yml", false},
		{"read", "link/workflows/ci.yml", false}, // src/link is ../.github
		{"read", "../docs/x", true},
		{"read", "a.go", true},
		{"write", "../docs/x", true},
		{"write", dir + "/docs/y", true},
		{"write", "a.go", false},
		{"write", "../.github/x", false},
	} {
		if d := r.CheckPath(c.tool, r.abs(c.path)); (d == nil) != c.allow {
			t.Errorf("with ../ rules, %s %s: allowed %v, want %v (%v)", c.tool, c.path, d == nil, c.allow, d)
		}
	}
	// A denial through a link says where it leads.
	d := p.CheckPath("write", p.abs("src/link/x"))
	if d == nil || !strings.Contains(d.Reason, "leads to "+filepath.Join(resolveExisting(dir), ".github/x")) {
		t.Errorf("denial through a link: %+v", d)
	}
}

// TestCheckCall: the decision for a call reads the path or the command
// from the call's input.
func TestCheckCall(t *testing.T) {
	dir := t.TempDir()
	p := mustNew(t, Options{Dir: dir, Allow: []string{"write(src/**),read(src/**),bash(go test ./...)"}})
	for _, c := range []struct {
		tool, in string
		allow    bool
	}{
		{"write", `{"path":"src/a","content":"x"}`, true},
		{"write", `{"path":".github/a","content":"x"}`, false},
		{"edit", `{"path":"src/a"}`, true},
		{"ls", `{}`, false},
		{"ls", `{"path":"src"}`, true},
		{"glob", `{"pattern":"**","path":"src/x"}`, true},
		{"bash", `{"command":"go test ./..."}`, true},
		{"bash", `{"command":"go test ./... > .github/x"}`, false},
		{"bash", `{"command":"rm x"}`, false},
		{"bash", `not json`, true}, // the tool refuses it
		{"bash", `{"command":"rm x","Command":"go test ./..."}`, false},
		{"bash", `{"Command":"rm x","command":"go test ./..."}`, true},
		{"bash", `{"command":"go test ./...","command":"rm x"}`, false},
		{"write", `{"path":".github/a","Path":"src/a"}`, false},
		{"mcp__x__y", `{}`, false},
	} {
		if d := p.Check(c.tool, []byte(c.in)); (d == nil) != c.allow {
			t.Errorf("%s %s: allowed %v, want %v (%v)", c.tool, c.in, d == nil, c.allow, d)
		}
	}
}
