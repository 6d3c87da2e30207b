package mcp

import (
	"github.com/awlrun/awl/runner/mcp/oauth"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func writeConfig(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadConfig(t *testing.T) {
	p := writeConfig(t, "a.json", `{"mcpServers": {
  "gh": {"type": "http", "url": "https://api.example/mcp/${ORG}", "headers": {"Authorization": "Bearer ${TOKEN}"}},
  "fs": {"command": "npx", "args": ["-y", "server-fs", "${DIR:-/srv}", "$HOME", "${EMPTY:-}"], "env": {"K": "${TOKEN}"}, "cwd": "${DIR:-/tmp}"},
  "plain": {"url": "http://127.0.0.1:1/mcp"}
}}`)
	got, err := LoadConfig([]string{p}, env(map[string]string{"ORG": "acme", "TOKEN": "t0ken-value", "EMPTY": ""}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Name != "fs" || got[1].Name != "gh" || got[2].Name != "plain" {
		t.Fatalf("servers: %+v", got)
	}
	fs, gh, plain := got[0], got[1], got[2]
	if fs.Transport() != "stdio" || !reflect.DeepEqual(fs.Args, []string{"-y", "server-fs", "/srv", "$HOME", ""}) || fs.Env["K"] != "t0ken-value" || fs.Cwd != "/tmp" {
		t.Errorf("fs: %+v", fs)
	}
	if gh.Transport() != "http" || gh.URL != "https://api.example/mcp/acme" || gh.Headers["Authorization"] != "Bearer t0ken-value" {
		t.Errorf("gh: %+v", gh)
	}
	if plain.Transport() != "http" {
		t.Errorf("plain: %+v", plain)
	}
	// The token is a secret of both servers that use it.
	if !strings.Contains(strings.Join(gh.secrets, " "), "t0ken-value") || !strings.Contains(strings.Join(fs.secrets, " "), "t0ken-value") {
		t.Errorf("secrets: %q %q", gh.secrets, fs.secrets)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"missing var", "{\"mcpServers\": {\n  \"gh\": {\"command\": \"x\",\n  \"args\": [\"${NOPE}\"]}}}", `:3: server "gh": ${NOPE} is not set`},
		{"empty var", `{"mcpServers": {"gh": {"command": "x", "env": {"A": "${EMPTY}"}}}}`, `${EMPTY} is not set or is empty`},
		{"bad syntax", "{\"mcpServers\": {\n\"a\": {\"command\": \"x\",}}}", ":2: invalid JSON"},
		{"truncated", `{"mcpServers": {`, ":1: invalid JSON"},
		{"no servers", `{"servers": {}}`, `no "mcpServers" object`},
		{"args not array", `{"mcpServers": {"a": {"command": "x", "args": "y"}}}`, `"args" must be an array of strings`},
		{"no command", `{"mcpServers": {"a": {"env": {}}}}`, `needs a "command"`},
		{"sse without url", `{"mcpServers": {"a": {"type": "sse", "command": "x"}}}`, `type "sse" needs a "url"`},
		{"bad url", `{"mcpServers": {"a": {"type": "http", "url": "ftp://x"}}}`, `url must start with http`},
		{"bad name", `{"mcpServers": {"my server": {"command": "x"}}}`, `server "my server": the name must be`},
		{"unterminated", `{"mcpServers": {"a": {"command": "${HOME"}}}`, `unterminated ${`},
		{"bad var name", `{"mcpServers": {"a": {"command": "${1X}"}}}`, `a ${…} that is not a variable reference`},
		{"bad sandbox", `{"mcpServers": {"a": {"command": "x", "sandbox": "workspace-write"}}}`, `server "a": unknown sandbox "workspace-write"`},
		{"empty sandbox", `{"mcpServers": {"a": {"command": "x", "sandbox": ""}}}`, `server "a": unknown sandbox ""`},
		{"sandbox not a string", `{"mcpServers": {"a": {"command": "x", "sandbox": false}}}`, `server "a":`},
		{"sandbox on http", `{"mcpServers": {"a": {"url": "http://x", "sandbox": "off"}}}`, `"sandbox" applies to stdio servers`},
		{"oauth on stdio", `{"mcpServers": {"a": {"command": "x", "oauth": {}}}}`, `"oauth" applies to HTTP servers`},
		{"oauth grant", `{"mcpServers": {"a": {"url": "http://x", "oauth": {"grant": "password"}}}}`, `unknown grant "password"`},
		{"cc without id", `{"mcpServers": {"a": {"url": "http://x", "oauth": {"grant": "client_credentials", "client_secret": "s"}}}}`, `needs a "client_id"`},
		{"cc without secret", `{"mcpServers": {"a": {"url": "http://x", "oauth": {"grant": "client_credentials", "client_id": "c"}}}}`, `needs a "client_secret" or a "private_key"`},
		{"key without cc", `{"mcpServers": {"a": {"url": "http://x", "oauth": {"private_key": "k"}}}}`, `"private_key" is for the client_credentials, id_jag and jwt_bearer grants`},
		{"jwt_bearer without assertion", `{"mcpServers": {"a": {"url": "http://x", "oauth": {"grant": "jwt_bearer", "client_id": "c"}}}}`, `the jwt_bearer grant needs one of "assertion" (as "${VAR}") and "assertion_file"`},
		{"assertion without jwt_bearer", `{"mcpServers": {"a": {"url": "http://x", "oauth": {"grant": "client_credentials", "client_id": "c", "client_secret": "s", "assertion_file": "/t"}}}}`, `"assertion" and "assertion_file" are for the jwt_bearer grant`},
		{"idp with cc", `{"mcpServers": {"a": {"url": "http://x", "oauth": {"grant": "client_credentials", "client_id": "c", "client_secret": "s", "idp": {}}}}}`, `"idp" is for the id_jag grant, not client_credentials`},
		{"id_jag without idp", `{"mcpServers": {"a": {"url": "http://x", "oauth": {"grant": "id_jag", "client_id": "c"}}}}`, `the id_jag grant needs an "idp" object`},
		{"id_jag without id", `{"mcpServers": {"a": {"url": "http://x", "oauth": {"idp": {"issuer": "https://i", "client_id": "i", "id_token": "t"}}}}}`, `the id_jag grant needs a "client_id"`},
		{"idp without issuer", `{"mcpServers": {"a": {"url": "http://x", "oauth": {"client_id": "c", "idp": {"client_id": "i", "id_token": "t"}}}}}`, `idp needs one of "issuer" and "token_endpoint"`},
		{"idp with both", `{"mcpServers": {"a": {"url": "http://x", "oauth": {"client_id": "c", "idp": {"issuer": "https://i", "token_endpoint": "https://i/t", "client_id": "i", "id_token": "t"}}}}}`, `idp needs one of "issuer" and "token_endpoint"`},
		{"idp without client", `{"mcpServers": {"a": {"url": "http://x", "oauth": {"client_id": "c", "idp": {"issuer": "https://i", "id_token": "t"}}}}}`, `idp needs a "client_id"`},
		{"idp token empty", `{"mcpServers": {"a": {"url": "http://x", "oauth": {"client_id": "c", "idp": {"issuer": "https://i", "client_id": "i", "id_token": "${EMPTY:-}"}}}}}`, `idp needs an "id_token"`},
		{"idp token unset", `{"mcpServers": {"a": {"url": "http://x", "oauth": {"client_id": "c", "idp": {"issuer": "https://i", "client_id": "i", "id_token": "${NOPE}"}}}}}`, `${NOPE} is not set`},
		{"bad alg", `{"mcpServers": {"a": {"url": "http://x", "oauth": {"grant": "client_credentials", "client_id": "c", "private_key": "k", "signing_algorithm": "HS256"}}}}`, `signing_algorithm "HS256"`},
		{"http cimd", `{"mcpServers": {"a": {"url": "http://x", "oauth": {"client_metadata_url": "http://x/c.json"}}}}`, `client_metadata_url must be an https:// URL`},
		{"oauth secret unset", `{"mcpServers": {"a": {"url": "http://x", "oauth": {"client_id": "c", "client_secret": "${NOPE}"}}}}`, `${NOPE} is not set`},
		{"roots a string", `{"mcpServers": {"a": {"command": "x", "roots": "/data"}}}`, `server "a": roots must be true (the run's working directory) or a list of directories`},
		{"roots a number list", `{"mcpServers": {"a": {"command": "x", "roots": [1]}}}`, `roots must be true`},
		{"roots empty list", `{"mcpServers": {"a": {"command": "x", "roots": []}}}`, `leave it out to declare none`},
		{"roots empty entry", `{"mcpServers": {"a": {"command": "x", "roots": ["/data", ""]}}}`, `roots: an empty directory name`},
		{"roots unset var", `{"mcpServers": {"a": {"command": "x", "roots": ["${NOPE}"]}}}`, `${NOPE} is not set`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeConfig(t, "c.json", tc.text)
			_, err := LoadConfig([]string{p}, env(map[string]string{"HOME": "/home/u"}))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), p) {
				t.Fatalf("error %v, want %q prefixed with the path", err, tc.want)
			}
		})
	}
}

// Client secrets and private keys come from ${VAR} and are secrets: kept
// out of every error about the server.
func TestLoadConfigOAuth(t *testing.T) {
	p := writeConfig(t, "o.json", `{"mcpServers": {"w": {"url": "https://x/mcp", "oauth": {"grant": "client_credentials", "client_id": "ci", "client_secret": "${SECRET}", "scopes": ["a", "b"], "private_network": true}}}}`)
	got, err := LoadConfig([]string{p}, env(map[string]string{"SECRET": "s3cret-value"}))
	if err != nil {
		t.Fatal(err)
	}
	o := got[0].OAuth
	if o == nil || o.Grant != oauth.GrantClientCredentials || o.ClientID != "ci" || o.ClientSecret != "s3cret-value" || !reflect.DeepEqual(o.Scopes, []string{"a", "b"}) || !o.PrivateNetwork {
		t.Fatalf("oauth: %+v", o)
	}
	if !slices.Contains(got[0].secrets, "s3cret-value") {
		t.Errorf("secrets: %q", got[0].secrets)
	}
}

// An "idp" makes the grant id_jag; the ID token and both client secrets
// are secrets.
func TestLoadConfigIDJAG(t *testing.T) {
	p := writeConfig(t, "x.json", `{"mcpServers": {"w": {"url": "https://x/mcp", "oauth": {"client_id": "mcp", "client_secret": "${AS_SECRET}",
		"idp": {"issuer": "https://idp.example", "client_id": "idp-client", "client_secret": "${IDP_SECRET}", "id_token": "${ID_TOKEN}"}}}}}`)
	got, err := LoadConfig([]string{p}, env(map[string]string{"AS_SECRET": "as-5ecret", "IDP_SECRET": "idp-5ecret", "ID_TOKEN": "eyJ.id.token"}))
	if err != nil {
		t.Fatal(err)
	}
	o := got[0].OAuth
	want := oauth.IdP{Issuer: "https://idp.example", ClientID: "idp-client", ClientSecret: "idp-5ecret", IDToken: "eyJ.id.token"}
	if o == nil || o.Grant != oauth.GrantIDJAG || o.ClientID != "mcp" || o.IdP == nil || *o.IdP != want {
		t.Fatalf("oauth: %+v", o)
	}
	for _, s := range []string{"as-5ecret", "idp-5ecret", "eyJ.id.token"} {
		if !slices.Contains(got[0].secrets, s) {
			t.Errorf("secrets %q lack %q", got[0].secrets, s)
		}
	}
}

// "roots" is an opt-in per server: true is the run's working directory,
// a list names directories (with ${VAR}); false or nothing declares none.
func TestLoadConfigRoots(t *testing.T) {
	p := writeConfig(t, "r.json", `{"mcpServers": {
		"none": {"command": "x"},
		"off": {"command": "x", "roots": false},
		"work": {"command": "x", "roots": true},
		"dirs": {"url": "http://x/mcp", "roots": ["${DATA}/in", "out"]}}}`)
	got, err := LoadConfig([]string{p}, env(map[string]string{"DATA": "/data"}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"none": nil, "off": nil, "work": {"."}, "dirs": {"/data/in", "out"}}
	for _, s := range got {
		if !reflect.DeepEqual(s.Roots, want[s.Name]) {
			t.Errorf("%s: roots %q, want %q", s.Name, s.Roots, want[s.Name])
		}
	}
}

func TestLoadConfigSeveralFiles(t *testing.T) {
	a := writeConfig(t, "a.json", `{"mcpServers": {"x": {"command": "a"}}}`)
	b := writeConfig(t, "b.json", `{"mcpServers": {"y": {"command": "b"}}}`)
	got, err := LoadConfig([]string{b, a}, env(nil))
	if err != nil || len(got) != 2 || got[0].Name != "x" || got[0].File != a {
		t.Fatalf("%+v %v", got, err)
	}
	c := writeConfig(t, "c.json", `{"mcpServers": {"x": {"command": "c"}}}`)
	if _, err := LoadConfig([]string{a, c}, env(nil)); err == nil || !strings.Contains(err.Error(), `server "x" is also defined in `+a) {
		t.Fatalf("duplicate: %v", err)
	}
	if _, err := LoadConfig([]string{filepath.Join(t.TempDir(), "none.json")}, env(nil)); err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestToolName(t *testing.T) {
	for in, want := range map[string]string{
		"echo":           "mcp__s__echo",
		"get-tiny.image": "mcp__s__get-tiny_image",
		"ünï code":       "mcp__s___n__code",
	} {
		if got := toolName("s", in); got != want {
			t.Errorf("toolName(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("x", 100)
	a, b := toolName("s", long), toolName("s", long+"y")
	if len(a) != 64 || len(b) != 64 || a == b {
		t.Errorf("long names: %q %q", a, b)
	}
}

// "type": "sse" (the 2024-11-05 transport, as other clients' configs name
// it) is an HTTP server: the fallback reaches it through its URL.
func TestLoadConfigSSEType(t *testing.T) {
	p := writeConfig(t, "mcp.json", `{"mcpServers": {"old": {"type": "sse", "url": "https://old.example/sse"}}}`)
	got, err := LoadConfig([]string{p}, env(nil))
	if err != nil || len(got) != 1 || got[0].Transport() != "http" || got[0].URL != "https://old.example/sse" {
		t.Fatalf("%+v %v", got, err)
	}
}

// TestBadReferenceNotQuoted: a ${ that is no reference is named by its
// line, never quoted: it may be the credential it was meant to name.
func TestBadReferenceNotQuoted(t *testing.T) {
	for _, v := range []string{"Bearer ${GH_TOKEN-ghp_SECRET}", "Bearer ghp_SECRET ${", "${ghp SECRET}"} {
		doc := `{"mcpServers": {"a": {"url": "http://x", "headers": {"Authorization": "` + v + `"}}}}`
		_, err := ParseConfig("/c/.mcp.json", []byte(doc), func(string) string { return "" })
		if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.HasPrefix(err.Error(), "/c/.mcp.json:1: server \"a\": ") {
			t.Errorf("%q: %v", v, err)
		}
	}
}
