package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2/unstable"
)

// testSchema is a schema with a key of every type and class.
var testSchema = Schema{
	{Name: "model", Type: String, Class: Free},
	{Name: "output", Type: String, Class: Free, Enum: []string{"text", "json"}, Default: "text"},
	{Name: "base-url", Type: String, Class: Trusted},
	{Name: "prompt-file", Type: String, Class: Trusted, Path: true},
	{Name: "max-turns", Type: Int, Class: Limit},
	{Name: "max-retries", Type: Int, Class: Min, Default: "4"},
	{Name: "max-cost-usd", Type: Float, Class: Limit},
	{Name: "timeout", Type: Duration, Class: Limit},
	{Name: "tools", Type: List, Class: Allow, Sep: ","},
	{Name: "deny-tools", Type: List, Class: Deny, Sep: ","},
	{Name: "check", Type: List, Class: Trusted},
	{Name: "sandbox", Type: String, Class: Sandbox},
	{Name: "no-tools", Type: Bool, Class: Narrow},
	{Name: "stream", Type: Bool, Class: Free},
}

func parse(t *testing.T, role Role, src string) *File {
	t.Helper()
	f, err := Parse("/p/.awl/config.toml", []byte(src), role, "/p", testSchema)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, src)
	}
	return f
}

// TestParseRefusesBrokenFiles: every way a file can be wrong is exit 2
// with path:line:col and the reason, each problem on its own line.
func TestParseRefusesBrokenFiles(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"model = \n", `/p/.awl/config.toml:1:9: `},
		{"model = \"a\"\nmodel = \"b\"\n", `/p/.awl/config.toml:2:1: `},
		{"[profile\n", `/p/.awl/config.toml:1:`},
		{"max_cost_usd = 1\n", `/p/.awl/config.toml:1:1: unknown key max_cost_usd (did you mean max-cost-usd?)`},
		{"\n\nmax-turn = 3\n", `/p/.awl/config.toml:3:1: unknown key max-turn (did you mean max-turns?)`},
		{"zzzzzzzzzz = 1\n", `/p/.awl/config.toml:1:1: unknown key zzzzzzzzzz`},
		{"max-turns = \"20\"\n", `/p/.awl/config.toml:1:1: max-turns: must be an integer`},
		{"max-turns = -1\n", `/p/.awl/config.toml:1:1: max-turns: must not be negative`},
		{"max-cost-usd = nan\n", `/p/.awl/config.toml:1:1: max-cost-usd: must be a finite number`},
		{"max-cost-usd = inf\n", `/p/.awl/config.toml:1:1: max-cost-usd: must be a finite number`},
		{"max-cost-usd = true\n", `/p/.awl/config.toml:1:1: max-cost-usd: must be a number`},
		{"timeout = 600\n", `/p/.awl/config.toml:1:1: timeout: must be a duration string`},
		{"timeout = \"10 minutes\"\n", `/p/.awl/config.toml:1:1: timeout: "10 minutes" is not a duration`},
		{"timeout = \"-1m\"\n", `/p/.awl/config.toml:1:1: timeout: must not be negative`},
		{"model = \"\"\n", `/p/.awl/config.toml:1:1: model: the value is empty`},
		{"model = \"  \"\n", `/p/.awl/config.toml:1:1: model: the value is empty`},
		{"tools = []\n", `/p/.awl/config.toml:1:1: tools: the list is empty (no-tools = true offers none)`},
		{"tools = [\"read\", \"\"]\n", `/p/.awl/config.toml:1:1: tools: item 2 is empty`},
		{"tools = [\",\"]\n", `/p/.awl/config.toml:1:1: tools: item 1 is empty`},
		{"tools = \"read\"\n", `/p/.awl/config.toml:1:1: tools: must be an array of strings`},
		{"tools = [1]\n", `/p/.awl/config.toml:1:1: tools: item 1 must be a string`},
		{"output = \"xml\"\n", `/p/.awl/config.toml:1:1: output: "xml" is not one of text, json`},
		{"stream = \"yes\"\n", `/p/.awl/config.toml:1:1: stream: must be true or false`},
		{"[profile.r]\nmodl = \"x\"\n", `/p/.awl/config.toml:2:1: unknown key modl (did you mean model?)`},
		{"x = 1\nmdl = \"m\"\n", "/p/.awl/config.toml:1:1: unknown key x\n/p/.awl/config.toml:2:1: unknown key mdl (did you mean model?)"},
		{"[profile.r]\ntrust-project = true\n", `/p/.awl/config.toml:2:1: trust-project cannot be set in a profile`},
		// A server, and so a credential, has no place in a profile.
		{"[profile.r.mcp-servers.gh]\nurl = \"u\"\nheaders = { AUTHORIZATION = \"Bearer abc\" }\n", `/p/.awl/config.toml:1:12: mcp-servers cannot be set in a profile`},
		{"profile = 1\n", `/p/.awl/config.toml:1:1: profile must be tables`},
		{"[profile]\nr = 1\n", `/p/.awl/config.toml:2:1: profile.r must be a table`},
		{"trust-project = \"yes\"\n", `/p/.awl/config.toml:1:1: trust-project must be true or false`},
		{"mcp-servers = 1\n", `/p/.awl/config.toml:1:1: mcp-servers must be tables`},
		{"[mcp-servers.gh]\nurl = \"https://x\"\nheaders = { Authorization = \"Bearer abc\" }\n", `/p/.awl/config.toml:3: mcp-servers.gh.headers.Authorization: a credential written into the file`},
		{"[mcp-servers.gh]\ncommand = \"x\"\n[mcp-servers.gh.env]\nGITHUB_TOKEN = \"ghp_abc\"\n", `/p/.awl/config.toml:4: mcp-servers.gh.env.GITHUB_TOKEN: a credential`},
		{"[mcp-servers.gh]\ncommand = \"x\"\nenv.API_KEY = \"k\"\n", `/p/.awl/config.toml:3: mcp-servers.gh.env.API_KEY: a credential`},
		{"[mcp-servers.gh]\nurl = \"u\"\noauth = { client_secret = \"s3cr3t\" }\n", `/p/.awl/config.toml:3: mcp-servers.gh.oauth.client_secret: a credential`},
		// A default is text the file holds; an assertion is a credential;
		// the casing of a name does not matter.
		{"[mcp-servers.gh]\nurl = \"u\"\nheaders = { AUTHORIZATION = \"Bearer ${GH_TOKEN:-ghp_abc}\" }\n", `/p/.awl/config.toml:3: mcp-servers.gh.headers.AUTHORIZATION: a credential written into the file as a default`},
		{"[mcp-servers.gh]\ncommand = \"x\"\nenv = { Db_Password = \"${A}${B:- abc}\" }\n", `/p/.awl/config.toml:3: mcp-servers.gh.env.Db_Password: a credential written into the file as a default`},
		{"[mcp-servers.gh]\nurl = \"u\"\n[mcp-servers.gh.oauth]\ngrant = \"jwt-bearer\"\nassertion = \"eyJabc\"\n", `/p/.awl/config.toml:5: mcp-servers.gh.oauth.assertion: a credential`},
		// A token written beside a reference is written all the same; a
		// $VAR without braces is not expanded, so it is literal text.
		{"[mcp-servers.gh]\nurl = \"u\"\nheaders = { Authorization = \"Bearer ghp_abcdefghij0123456789${X}\" }\n", `/p/.awl/config.toml:3: mcp-servers.gh.headers.Authorization: a credential written into the file beside a ${VAR}`},
		{"[mcp-servers.gh]\nurl = \"u\"\nheaders = { Authorization = \"Bearer $GITHUB_TOKEN\" }\n", `/p/.awl/config.toml:3: mcp-servers.gh.headers.Authorization: a credential written into the file:`},
		// What is no reference (${VAR-x}, an unclosed ${) is text, and the
		// loader would quote it in its error.
		{"[mcp-servers.gh]\nurl = \"u\"\nheaders = { Authorization = \"Bearer ${GH_TOKEN-abc}\" }\n", `/p/.awl/config.toml:3: mcp-servers.gh.headers.Authorization: a credential written into the file in what is no ${VAR}`},
		{"[mcp-servers.gh]\ncommand = \"x\"\nenv = { API_KEY = \"${abc\" }\n", `/p/.awl/config.toml:3: mcp-servers.gh.env.API_KEY: a credential written into the file in what is no ${VAR}`},
		// A field the MCP loader does not know, at any depth, with the
		// nearest known one.
		{"[mcp-servers.gh]\nurl = \"u\"\nheader = { Authorization = \"Bearer ${T}\" }\n", `/p/.awl/config.toml:3:1: unknown key mcp-servers.gh.header (did you mean headers?)`},
		{"[mcp-servers.gh]\ncomand = \"x\"\n", `/p/.awl/config.toml:2:1: unknown key mcp-servers.gh.comand (did you mean command?)`},
		{"[mcp-servers.gh]\nurl = \"u\"\n[mcp-servers.gh.oauth.idp]\ntokn_endpoint = \"x\"\n", `/p/.awl/config.toml:4:1: unknown key mcp-servers.gh.oauth.idp.tokn_endpoint (did you mean token_endpoint?)`},
		{"model = \"a\xff\"\n", `/p/.awl/config.toml:1:`},
	} {
		_, err := Parse("/p/.awl/config.toml", []byte(tc.src), Project, "/p", testSchema)
		var ce *Error
		if !errors.As(err, &ce) || ce.Code != 2 {
			t.Errorf("%q: error %v, want exit 2", tc.src, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got %q\nwant %q...", tc.src, err.Error(), tc.want)
		}
		if strings.Contains(err.Error(), "abc") || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%q: the error shows the credential: %q", tc.src, err)
		}
	}
}

// TestParseTakesABOMAndCRLF: a file a Windows editor saved (a byte order
// mark, CRLF line ends) reads as the same file without them, its
// positions those an editor shows; the sha256 is of the bytes read.
func TestParseTakesABOMAndCRLF(t *testing.T) {
	src := "\ufeffmodel = \"m\"\r\nmax-turns = 3\r\nmax-cost-usd = \"x\"\r\n"
	_, err := Parse("/p/c.toml", []byte(src), User, "/p", testSchema)
	if err == nil || err.Error() != "/p/c.toml:3:1: max-cost-usd: must be a number" {
		t.Fatalf("error %v, want line 3's alone", err)
	}
	good := []byte(src[:strings.LastIndex(src, "max-cost")])
	f, err := Parse("/p/c.toml", good, User, "/p", testSchema)
	if err != nil {
		t.Fatal(err)
	}
	if e := f.top["model"]; e.v != "m" || e.line != 1 || e.col != 1 {
		t.Errorf("model: %+v", e)
	}
	if sum := sha256.Sum256(good); f.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256 %q is not of the bytes read", f.SHA256)
	}
}

// TestErrorsEscapeTheFilesText: a key, a profile's or a server's name is
// the file's text; in an error its control characters and bidirectional
// controls are escaped, so a hostile project file sends no escape
// sequence to a terminal and no line of its own (a "::error::" workflow
// command) to a CI log.
func TestErrorsEscapeTheFilesText(t *testing.T) {
	src := "\"\\u001b[2J\\n::error::owned\\u202e\" = 1\n[profile.\"\\u001b]0;t\\u0007\"]\nmodel = 3\n"
	_, err := Parse("/p/.awl/config.toml", []byte(src), Project, "/p", testSchema)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, bad := range []string{"\x1b", "\a", "\u202e", "\n::error"} {
		if strings.Contains(msg, bad) {
			t.Errorf("the error holds %q: %q", bad, msg)
		}
	}
	if !strings.Contains(msg, `unknown key \x1b[2J\n::error::owned\u202e`) || strings.Count(msg, "\n") != 1 {
		t.Errorf("error %q", msg)
	}
	proj := parse(t, Project, "[profile.\"\\u001b[31mx\"]\nmodel = \"m\"\n")
	_, err = resolve(t, Input{Files: []*File{proj}, Profile: "nope", ProfileFrom: "--profile"})
	if err == nil || !strings.HasSuffix(err.Error(), `the profiles are: \x1b[31mx`) {
		t.Errorf("unknown profile: %q", err)
	}
}

// TestParseReportsEveryProblem: a file with several problems names each,
// in the file's order, so one run shows all there is to fix.
func TestParseReportsEveryProblem(t *testing.T) {
	_, err := Parse("f.toml", []byte("zeta = 1\nmax-turns = \"x\"\n[profile.a]\nmodel = 3\n"), User, "", testSchema)
	want := "f.toml:1:1: unknown key zeta\nf.toml:2:1: max-turns: must be an integer\nf.toml:4:1: model: must be a string"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

// TestParseValues: values come out typed, relative paths are taken from
// the base, "-" stays, MCP credentials named as ${VAR} pass.
func TestParseValues(t *testing.T) {
	f := parse(t, Project, `
model = "m"
max-turns = 0x10
max-cost-usd = 2
timeout = "1m30s"
tools = ["read", "grep"]
prompt-file = "prompts/review.md"
[profile.ci]
prompt-file = "-"
stream = true
[mcp-servers.gh]
url = "https://x"
headers = { Authorization = "Bearer ${GH_TOKEN}", "X-Trace" = "on", Cookie = "session=${S}; theme=dark", "X-Api-Key" = "${K:-}" }
`)
	for k, want := range map[string]Value{
		"model": "m", "max-turns": int64(16), "max-cost-usd": 2.0, "timeout": 90 * time.Second,
		"prompt-file": "/p/prompts/review.md",
	} {
		if got := f.top[k].v; !equal(got, want) {
			t.Errorf("%s = %#v, want %#v", k, got, want)
		}
	}
	if got := f.top["tools"].v.([]string); !slices.Equal(got, []string{"read", "grep"}) {
		t.Errorf("tools = %q", got)
	}
	if e := f.top["timeout"]; e.line != 5 || e.col != 1 {
		t.Errorf("timeout at %d:%d, want 5:1", e.line, e.col)
	}
	if got := f.profiles["ci"]["prompt-file"].v; got != "-" {
		t.Errorf("profile prompt-file = %v, want -", got)
	}
	if len(f.Servers) != 1 || f.Servers[0].Name != "gh" || f.Servers[0].Line != 11 {
		t.Errorf("servers %+v", f.Servers)
	}
}

func equal(a, b Value) bool { return Format(a) == Format(b) }

func resolve(t *testing.T, in Input) (*Result, error) {
	t.Helper()
	if in.Schema == nil {
		in.Schema = testSchema
	}
	in.UserFile = "/home/u/.config/awl/config.toml"
	return Resolve(in)
}

// TestUntrustedProjectNarrows: an untrusted project file narrows what the
// user's file and the defaults allow, key class by key class, and never
// widens.
func TestUntrustedProjectNarrows(t *testing.T) {
	user := parse(t, User, `
max-turns = 10
max-cost-usd = 1.5
tools = ["read", "grep", "bash"]
deny-tools = ["write"]
sandbox = "workspace-write"
no-tools = true
`)
	proj := parse(t, Project, `
model = "m2"
max-turns = 50
max-cost-usd = 0.5
timeout = "5m"
max-retries = 9
tools = ["bash", "edit"]
deny-tools = ["bash"]
no-tools = false
`)
	r, err := resolve(t, Input{Files: []*File{user, proj}})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"model":        "m2",  // free
		"max-turns":    "10",  // the user's is smaller
		"max-cost-usd": "0.5", // the project's is smaller
		"timeout":      "5m0s",
		"max-retries":  "4", // the default is smaller
		"tools":        "bash",
		"deny-tools":   "write,bash",
		"sandbox":      "workspace-write",
		"no-tools":     "true",
	} {
		if got := Format(r.Settings[k].Value); got != want {
			t.Errorf("%s = %q (from %s), want %q", k, got, r.Settings[k].Source, want)
		}
	}
	if s := r.Settings["model"].Source; s.String() != "/p/.awl/config.toml:2" {
		t.Errorf("model's source %q", s)
	}
	// Nothing in common: no tools at all, not every tool.
	proj2 := parse(t, Project, `tools = ["edit"]`)
	r, err = resolve(t, Input{Files: []*File{user, proj2}})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := r.Settings["tools"].Value.([]string); !ok || len(v) != 0 {
		t.Errorf("tools = %#v, want an empty list", r.Settings["tools"].Value)
	}
	// A stricter sandbox, a limit where there was none.
	proj3 := parse(t, Project, "sandbox = \"read-only\"\nmax-turns = 0\n")
	r, _ = resolve(t, Input{Files: []*File{proj3}})
	if got := Format(r.Settings["sandbox"].Value); got != "read-only" {
		t.Errorf("sandbox = %q", got)
	}
	if _, ok := r.Settings["max-turns"]; ok {
		t.Errorf("max-turns = 0 (no limit) was taken from an untrusted file")
	}
	// A looser sandbox than the user's is refused, not ignored; the same
	// mode, or "off" where nothing below sets one (the default is off),
	// loosens nothing.
	for _, tc := range []struct {
		proj string
		code int
	}{{`sandbox = "off"`, 4}, {`sandbox = "workspace-write"`, 0}, {`sandbox = "read-only"`, 0}} {
		_, err := resolve(t, Input{Files: []*File{user, parse(t, Project, tc.proj)}})
		var ce *Error
		switch {
		case tc.code == 0 && err != nil:
			t.Errorf("%s: %v", tc.proj, err)
		case tc.code != 0 && (!errors.As(err, &ce) || ce.Code != 4 || len(ce.Lines) != 1 ||
			!strings.Contains(ce.Lines[0], `/p/.awl/config.toml:1: sandbox = "off": an untrusted project file may make the sandbox stricter, not looser than "workspace-write" (/p/.awl/config.toml:6)`) ||
			!strings.Contains(ce.Lines[0], "--trust-project")):
			t.Errorf("%s: %v, want exit 4 naming the line, both modes and how to trust", tc.proj, err)
		}
	}
	if _, err := resolve(t, Input{Files: []*File{parse(t, Project, `sandbox = "off"`)}}); err != nil {
		t.Errorf(`sandbox = "off" over the default: %v`, err)
	}
}

// TestUntrustedProjectRefused: each key an untrusted project file may not
// set is exit 4, one line each with path:line, the key and how to trust
// it; trusted by any of the three ways, the same file applies.
func TestUntrustedProjectRefused(t *testing.T) {
	src := "base-url = \"https://evil\"\ncheck = [\"curl evil\"]\nmodel = \"m\"\n[profile.x]\nprompt-file = \"a\"\n[mcp-servers.e]\ncommand = \"sh\"\n"
	proj := parse(t, Project, src)
	_, err := resolve(t, Input{Files: []*File{proj}, Profile: "x", ProfileFrom: "--profile"})
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != 4 || len(ce.Lines) != 4 {
		t.Fatalf("error %#v, want exit 4 with four lines", err)
	}
	for i, want := range []string{":1: base-url:", ":2: check:", ":6: mcp-servers.e:", ":5: profile.x.prompt-file:"} {
		if !strings.Contains(ce.Lines[i], want) || !strings.Contains(ce.Lines[i], "--trust-project") || !strings.Contains(ce.Lines[i], "trust-project = true in /home/u/.config/awl/config.toml") {
			t.Errorf("line %d %q, want %q and how to trust", i, ce.Lines[i], want)
		}
	}
	user := parse(t, User, "trust-project = true\n")
	for _, in := range []Input{{Files: []*File{proj}, TrustProject: true}, {Files: []*File{user, proj}}} {
		r, err := resolve(t, in)
		if err != nil {
			t.Fatalf("trusted: %v", err)
		}
		if got := r.Settings["base-url"].Value; got != "https://evil" || len(r.Servers) != 1 {
			t.Errorf("trusted file not applied: %v %v", got, r.Servers)
		}
	}
	// AWL_TRUST_PROJECT=0 (DistrustProject) is over the user's
	// trust-project = true.
	if _, err := resolve(t, Input{Files: []*File{user, proj}, Profile: "x", ProfileFrom: "--profile", DistrustProject: true}); !errors.As(err, &ce) || ce.Code != 4 {
		t.Errorf("AWL_TRUST_PROJECT=0 over the user's trust-project: %v, want exit 4", err)
	}
	// trust-project in the project file itself trusts nothing.
	self := parse(t, Project, "trust-project = true\nbase-url = \"x\"\n")
	if _, err := resolve(t, Input{Files: []*File{self}}); err == nil {
		t.Error("a project file trusted itself")
	}
	// Alone, beside keys it may set, it is refused too, never ignored.
	selfOnly := parse(t, Project, "model = \"m\"\ntrust-project = true\n")
	if _, err := resolve(t, Input{Files: []*File{selfOnly}}); !errors.As(err, &ce) || ce.Code != 4 || len(ce.Lines) != 1 || !strings.Contains(ce.Lines[0], ":2: trust-project:") {
		t.Errorf("trust-project in the project file: %v, want exit 4 naming :2: trust-project", err)
	}
	// The same keys in a named file are the workflow's own.
	named := parse(t, Named, src)
	if _, err := resolve(t, Input{Files: []*File{named}}); err != nil {
		t.Errorf("named file: %v", err)
	}
}

// TestProfiles: a profile sets over every file's top level, the user's
// profile under the project's; an unknown profile lists the names there
// are.
func TestProfiles(t *testing.T) {
	user := parse(t, User, "model = \"u\"\n[profile.review]\nmodel = \"ur\"\nmax-turns = 3\n[profile.lint]\n")
	proj := parse(t, Project, "model = \"p\"\n[profile.review]\nmax-turns = 2\n")
	r, err := resolve(t, Input{Files: []*File{user, proj}, Profile: "review", ProfileFrom: "--profile"})
	if err != nil {
		t.Fatal(err)
	}
	if m := r.Settings["model"]; m.Value != "ur" || m.Source.Line != 3 {
		t.Errorf("model = %v from %s, want the user's profile's", m.Value, m.Source)
	}
	if m := r.Settings["max-turns"]; Format(m.Value) != "2" {
		t.Errorf("max-turns = %v, want the project profile's smaller 2", m.Value)
	}
	_, err = resolve(t, Input{Files: []*File{user, proj}, Profile: "fix", ProfileFrom: "AWL_PROFILE"})
	if err == nil || err.Error() != "AWL_PROFILE fix: no configuration file defines [profile.fix]; the profiles are: lint, review" {
		t.Errorf("unknown profile: %v", err)
	}
	if _, err := resolve(t, Input{Profile: "fix", ProfileFrom: "--profile"}); err == nil || !strings.Contains(err.Error(), "no configuration file was read") {
		t.Errorf("profile without files: %v", err)
	}
	// Files with no profile at all: said in words that fit one file or two.
	plain := parse(t, User, "model = \"u\"\n")
	if _, err := resolve(t, Input{Files: []*File{plain}, Profile: "fix", ProfileFrom: "--profile"}); err == nil || !strings.HasSuffix(err.Error(), "(/p/.awl/config.toml defines no profile)") {
		t.Errorf("one file, no profile: %v", err)
	}
	if _, err := resolve(t, Input{Files: []*File{plain, plain}, Profile: "fix", ProfileFrom: "--profile"}); err == nil || !strings.HasSuffix(err.Error(), "(/p/.awl/config.toml and /p/.awl/config.toml define no profile)") {
		t.Errorf("two files, no profile: %v", err)
	}
	// A profile with an empty name could never be asked for (--profile ""
	// is an empty value), and would list as "the profiles are: ".
	if _, err := Parse("/p/.awl/config.toml", []byte("[profile.\"\"]\nmodel = \"m\"\n"), Project, "/p", testSchema); err == nil || !strings.Contains(err.Error(), "/p/.awl/config.toml:1:10: a profile's name is empty") {
		t.Errorf("an empty profile name: %v", err)
	}
}

// TestEnvOverFiles: an AWL_ variable sets over the files; an empty one
// counts as unset; a bad one is exit 2 naming it.
func TestEnvOverFiles(t *testing.T) {
	proj := parse(t, Project, "model = \"p\"\nmax-turns = 5\n")
	env := map[string]string{"AWL_MODEL": "e", "AWL_MAX_TURNS": "", "AWL_TOOLS": "read, grep", "AWL_CHECK": "make a\n\nmake b", "AWL_STREAM": "1"}
	r, err := resolve(t, Input{Files: []*File{proj}, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"model": "e", "max-turns": "5", "tools": "read,grep", "check": "make a,make b", "stream": "true"} {
		if got := Format(r.Settings[k].Value); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if s := r.Settings["model"].Source.String(); s != "env AWL_MODEL" {
		t.Errorf("source %q", s)
	}
	env = map[string]string{"AWL_MAX_TURNS": "many", "AWL_TIMEOUT": "-1s", "AWL_OUTPUT": "xml"}
	_, err = resolve(t, Input{Getenv: func(k string) string { return env[k] }})
	if err == nil || !strings.Contains(err.Error(), `AWL_MAX_TURNS: "many" is not an integer`) || !strings.Contains(err.Error(), "AWL_TIMEOUT: must not be negative") || !strings.Contains(err.Error(), `AWL_OUTPUT: "xml" is not one of`) {
		t.Errorf("bad variables: %v", err)
	}
}

// TestHostileFiles: a file of ten thousand keys, each unknown, is refused
// with the first twenty problems in the file's order, path:line:col and
// the nearest key each, and a count of the rest; two thousand valid
// profiles are read; a variable of commas alone is no list, never "all
// tools"; an empty one counts as unset.
func TestHostileFiles(t *testing.T) {
	var b strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&b, "max_turns_%d = 1\n", i)
	}
	_, err := Parse("/p/c.toml", []byte(b.String()), User, "/p", testSchema)
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != 2 || len(ce.Lines) != 21 {
		t.Fatalf("10k unknown keys: %v", err)
	}
	if !strings.HasPrefix(ce.Lines[0], "/p/c.toml:1:1: unknown key max_turns_0") || !strings.HasPrefix(ce.Lines[19], "/p/c.toml:20:1: unknown key max_turns_19") || ce.Lines[20] != "/p/c.toml: and 9980 more problems" {
		t.Errorf("first %q, twentieth %q, last %q", ce.Lines[0], ce.Lines[19], ce.Lines[20])
	}
	b.Reset()
	// go-toml checks each table against the ones before it: 2,000
	// profiles, not more, keep the test quick under -race.
	for i := range 2000 {
		fmt.Fprintf(&b, "[profile.p%d]\nmax-turns = %d\n", i, i+1)
	}
	f, err := Parse("/p/c.toml", []byte(b.String()), User, "/p", testSchema)
	if err != nil || len(f.Profiles()) != 2000 {
		t.Fatalf("2k profiles: %v", err)
	}
	r, err := resolve(t, Input{Files: []*File{f}, Profile: "p1999", ProfileFrom: "--profile"})
	if err != nil || r.Settings["max-turns"].Value != int64(2000) {
		t.Errorf("profile p1999: %v %v", r, err)
	}
	for _, v := range []string{" , ", ",", " "} {
		env := map[string]string{"AWL_TOOLS": v}
		// The hint names the variable that offers no tools, not a file's key.
		if _, err := resolve(t, Input{Getenv: func(k string) string { return env[k] }}); err == nil || err.Error() != "AWL_TOOLS: the list is empty (AWL_NO_TOOLS=1 offers none)" {
			t.Errorf("AWL_TOOLS=%q: %v", v, err)
		}
	}
	env := map[string]string{"AWL_TOOLS": "", "AWL_MAX_TURNS": ""}
	user, _ := Parse("/u/c.toml", []byte("tools = [\"read\"]\nmax-turns = 3\n"), User, "/u", testSchema)
	r, err = resolve(t, Input{Files: []*File{user}, Getenv: func(k string) string { return env[k] }})
	if err != nil || r.Settings["tools"].Source.Kind != "file" || r.Settings["max-turns"].Value != int64(3) {
		t.Errorf("empty variables: %+v %v", r, err)
	}
}

// countFS counts what Look, Find and Read do.
type countFS struct {
	ops []string
}

func (c *countFS) fs() FS {
	return FS{
		Stat:  func(p string) (fs.FileInfo, error) { c.ops = append(c.ops, "stat "+p); return os.Stat(p) },
		Lstat: func(p string) (fs.FileInfo, error) { c.ops = append(c.ops, "lstat "+p); return os.Lstat(p) },
		Read:  func(p string) ([]byte, error) { c.ops = append(c.ops, "open "+p); return OS.Read(p) },
	}
}

// TestLookStatsEachName: with no file anywhere, Look stats each name it
// looks for in the user's directory and in each directory up to the
// repository's root, once each, and lists no directory (a listing grows
// with the directory's entries), and Find neither stats nor opens anything; the nearest project file wins; a
// named file stands alone; a FIFO is refused, not opened; a directory awl
// may search but not list still yields its file, by a stat of each name.
func TestLookStatsEachName(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "repo", "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "repo", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A hostile file above the repository's root is never looked at.
	os.MkdirAll(filepath.Join(root, ".awl"), 0o755)
	os.WriteFile(filepath.Join(root, ".awl", "config.toml"), []byte("base-url = \"https://attacker.example\"\n"), 0o644)
	var c countFS
	user := filepath.Join(root, "home", "awl", "config.toml")
	find := func(fsys FS, named string) ([]Loc, error) {
		t.Helper()
		tree, err := Look(fsys, deep, user)
		if err != nil {
			t.Fatal(err)
		}
		return Find(fsys, tree, named)
	}
	locs, err := find(c.fs(), "")
	if err != nil || len(locs) != 0 {
		t.Fatalf("Find: %v %v", locs, err)
	}
	want := []string{"stat " + user, "stat " + filepath.Join(filepath.Dir(user), "skills")}
	for _, d := range []string{deep, filepath.Dir(deep), filepath.Join(root, "repo")} {
		for _, n := range []string{".awl", ".git", ".agents", ".claude"} {
			want = append(want, "stat "+filepath.Join(d, n))
		}
	}
	if !slices.Equal(c.ops, want) {
		t.Errorf("did %q\nwant %q", c.ops, want)
	}
	for _, d := range []string{filepath.Join(root, "repo"), filepath.Join(root, "repo", "a")} {
		if err := os.MkdirAll(filepath.Join(d, ".awl"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, ".awl", "config.toml"), []byte("model = \"x\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nearest := filepath.Join(root, "repo", "a", ".awl", "config.toml")
	c.ops = nil
	locs, err = find(c.fs(), "")
	if err != nil || len(locs) != 1 || locs[0].Path != nearest || locs[0].Base != filepath.Join(root, "repo", "a") {
		t.Errorf("nearest: %+v %v", locs, err)
	}
	// A name found is asked whose link it is, if it is one: one lstat more.
	want = slices.Clone(want)
	for _, d := range []string{filepath.Join(root, "repo", "a", ".awl"), filepath.Join(root, "repo", ".awl")} {
		want = slices.Insert(want, slices.Index(want, "stat "+d)+1, "lstat "+d)
	}
	if want := append(want, "stat "+nearest); !slices.Equal(c.ops, want) {
		t.Errorf("with two project files, did %q\nwant %q", c.ops, want)
	}
	locs, err = find(OS, "named.toml")
	if err != nil || len(locs) != 1 || locs[0].Role != Named {
		t.Errorf("named: %+v %v", locs, err)
	}
	// A directory that may be searched, not listed: its file is found by
	// the stats of each name.
	mid := filepath.Join(root, "repo", "a")
	if err := os.Chmod(mid, 0o311); err != nil {
		t.Fatal(err)
	}
	c.ops = nil
	locs, err = find(c.fs(), "")
	os.Chmod(mid, 0o755)
	if err != nil || len(locs) != 1 || locs[0].Path != nearest {
		t.Errorf("unlistable: %+v %v", locs, err)
	}
	if os.Geteuid() != 0 && !slices.Contains(c.ops, "stat "+filepath.Join(mid, ".git")) {
		t.Errorf("unlistable: no stat of each name: %q", c.ops)
	}
	// A .awl that is a symbolic link to a directory is followed, as a
	// stat of .awl/config.toml follows it.
	elsewhere := filepath.Join(root, "elsewhere")
	os.MkdirAll(elsewhere, 0o755)
	os.WriteFile(filepath.Join(elsewhere, "config.toml"), []byte("model = \"y\"\n"), 0o644)
	if err := os.Symlink(elsewhere, filepath.Join(deep, ".awl")); err != nil {
		t.Fatal(err)
	}
	if locs, err := find(OS, ""); err != nil || len(locs) != 1 || locs[0].Path != filepath.Join(deep, ".awl", "config.toml") {
		t.Errorf("symlinked .awl: %+v %v", locs, err)
	}
	os.Remove(filepath.Join(deep, ".awl"))
	fifo := filepath.Join(root, "repo", "a", "b", ".awl")
	os.Mkdir(fifo, 0o755)
	if err := mkfifo(filepath.Join(fifo, "config.toml")); err != nil {
		t.Skip("no FIFO here:", err)
	}
	if _, err := find(OS, ""); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("FIFO: %v", err)
	}
}

// TestReadRefusesLargeFiles: a file over MaxSize is refused, not read in
// full.
func TestReadRefusesLargeFiles(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte("# "+strings.Repeat("x", MaxSize)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(OS, Loc{Path: p, Role: User}, testSchema); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("large file: %v", err)
	}
}

// FuzzParse: for any bytes, Parse and Resolve never panic, and fail only
// with an *Error whose every line names the file.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"model = \"m\"\n", "max-turns = 3\n[profile.a]\ntools = [\"x\"]\n", "[mcp-servers.a]\nheaders = { Authorization = \"x\" }\n",
		"a.b.c = 1\n", "[[profile]]\n", "tools = [[1]]\n", "timeout = \"1h\"\nsandbox = \"read-only\"\n", "x = {a = {b = 1}}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, role := range []Role{User, Project} {
			file, err := Parse("f.toml", data, role, "/b", testSchema)
			if err != nil {
				var ce *Error
				if !errors.As(err, &ce) || len(ce.Lines) == 0 {
					t.Fatalf("error %T %v", err, err)
				}
				for _, l := range ce.Lines {
					if !strings.HasPrefix(l, "f.toml") {
						t.Fatalf("line %q does not name the file", l)
					}
				}
				continue
			}
			for _, p := range append(file.Profiles(), "") {
				if _, err := resolve(t, Input{Files: []*File{file}, Profile: p, ProfileFrom: "--profile"}); err != nil {
					var ce *Error
					if !errors.As(err, &ce) {
						t.Fatalf("Resolve: %T %v", err, err)
					}
				}
			}
		}
	})
}

// TestRuleLists: a list key with Split (tools and deny-tools, whose items
// are tool rules) splits a variable and each item of a file's array with
// it, so bash(echo a,b) stays one rule, and an untrusted project file
// narrows rule by rule.
func TestRuleLists(t *testing.T) {
	split := func(s string) []string { // as runner/policy's Split
		var out []string
		depth, start := 0, 0
		for i := 0; i <= len(s); i++ {
			switch {
			case i == len(s) || s[i] == ',' && depth == 0:
				if e := strings.TrimSpace(s[start:i]); e != "" {
					out = append(out, e)
				}
				start = i + 1
			case s[i] == '(':
				depth++
			case s[i] == ')':
				depth--
			}
		}
		return out
	}
	schema := Schema{{Name: "tools", Type: List, Class: Allow, Split: split}, {Name: "deny-tools", Type: List, Class: Deny, Split: split}}
	env := map[string]string{"AWL_DENY_TOOLS": "bash(echo a,b), read(**/.env)"}
	user, err := Parse("/u/config.toml", []byte(`tools = ["bash(git diff *),read", "write(src/**)"]`), User, "/u", schema)
	if err != nil {
		t.Fatal(err)
	}
	proj, err := Parse("/p/.awl/config.toml", []byte(`tools = ["read, bash(rm *)"]`), Project, "/p", schema)
	if err != nil {
		t.Fatal(err)
	}
	r, err := resolve(t, Input{Schema: schema, Files: []*File{user}, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Settings["tools"].Value.([]string); !slices.Equal(got, []string{"bash(git diff *)", "read", "write(src/**)"}) {
		t.Errorf("tools = %q", got)
	}
	if got := r.Settings["deny-tools"].Value.([]string); !slices.Equal(got, []string{"bash(echo a,b)", "read(**/.env)"}) {
		t.Errorf("deny-tools = %q", got)
	}
	r, err = resolve(t, Input{Schema: schema, Files: []*File{user, proj}})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Settings["tools"].Value.([]string); !slices.Equal(got, []string{"read"}) {
		t.Errorf("narrowed tools = %q, want the rule both lists hold", got)
	}
	if _, err := Parse("/p/c.toml", []byte(`tools = [" , "]`), User, "/p", schema); err == nil || !strings.Contains(err.Error(), "item 1 is empty") {
		t.Errorf("an item of commas: %v", err)
	}
}

// TestPositionsAreTheParsers: the line and column of every key, found by
// a binary search of the line starts, are what the TOML parser's own
// Shape says, in files of every shape a key takes.
func TestPositionsAreTheParsers(t *testing.T) {
	for _, doc := range []string{
		"a = 1\nb = 2\n",
		"a = 1\r\nb.c = 2\r\n[t]\r\n  d = 3",
		"\"é\" = 1\n'x y' = 2\n[p.\"q r\"]\nk = { a = 1, b = { c = 2 } }\n",
		"# c\n\n[[arr]]\nx = 1\n[[arr]]\ny = 2\nz = \"\"\"\nmulti\nline\"\"\"\nw = 3",
		"\"ü\".\"ä\" = 1\n\t key\t=\t2\n",
	} {
		data := []byte(doc)
		want := map[string]position{}
		var p unstable.Parser
		p.Reset(data)
		var prefix []string
		record := func(prefix []string, it unstable.Iterator) []string {
			path := slices.Clone(prefix)
			for it.Next() {
				n := it.Node()
				path = append(path, string(n.Data))
				if k := strings.Join(path, "\x00"); want[k] == (position{}) {
					s := p.Shape(n.Raw)
					want[k] = position{s.Start.Line, s.Start.Column}
				}
			}
			return path
		}
		var kv func(prefix []string, e *unstable.Node)
		kv = func(prefix []string, e *unstable.Node) {
			path := record(prefix, e.Key())
			if v := e.Value(); v.Kind == unstable.InlineTable {
				for it := v.Children(); it.Next(); {
					if n := it.Node(); n.Kind == unstable.KeyValue {
						kv(path, n)
					}
				}
			}
		}
		for p.NextExpression() {
			switch e := p.Expression(); e.Kind {
			case unstable.Table, unstable.ArrayTable:
				prefix = record(nil, e.Key())
			case unstable.KeyValue:
				kv(prefix, e)
			}
		}
		if got := positions(data); !maps.Equal(got, want) || len(want) == 0 {
			t.Errorf("%q:\n got %v\nwant %v", doc, got, want)
		}
	}
}
