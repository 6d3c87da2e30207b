package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner/mcp/oauth"
)

// oauthFake is an MCP server behind OAuth 2.1 and its authorization server
// on one 127.0.0.1 origin: protected-resource and authorization-server
// metadata, dynamic registration, an authorization endpoint that grants at
// once (the person said yes), and a token endpoint that checks PKCE and
// refreshes. Its access tokens expire at once, so each run refreshes.
type oauthFake struct {
	srv *httptest.Server
	mu  sync.Mutex
	// codes are the codes handed out, with their PKCE challenge.
	codes     map[string]string
	access    string // the one access token the MCP endpoint takes
	refresh   string
	issued    []string // every token issued
	refreshes int
	n         int
}

func newOAuthFake(t *testing.T) *oauthFake {
	f := &oauthFake{codes: map[string]string{}}
	mcpSrv := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	// The tool echoes the Authorization header it was called with: a
	// server may print what it was given, and the token must still not
	// reach the model.
	sdk.AddTool(mcpSrv, &sdk.Tool{Name: "whoami", Description: "Says who called."}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "called with " + req.Extra.Header.Get("Authorization")}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcpSrv }, nil)
	mux := http.NewServeMux()
	base := func() string { return f.srv.URL }
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		ok := f.access != "" && r.Header.Get("Authorization") == "Bearer "+f.access
		f.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base()+`/.well-known/oauth-protected-resource/mcp", scope="tools"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"resource": base() + "/mcp", "authorization_servers": []string{base()}, "scopes_supported": []string{"tools"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"issuer": base(), "authorization_endpoint": base() + "/authorize", "token_endpoint": base() + "/token",
			"registration_endpoint": base() + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported": []string{"authorization_code", "refresh_token"}, "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var md map[string]any
		json.NewDecoder(r.Body).Decode(&md)
		md["client_id"] = "client-1"
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(md)
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		redirect, err := url.Parse(q.Get("redirect_uri"))
		if err != nil || redirect.Hostname() != "127.0.0.1" || q.Get("client_id") != "client-1" || q.Get("code_challenge_method") != "S256" || q.Get("resource") != base()+"/mcp" {
			http.Error(w, "bad authorization request: "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.n++
		code := fmt.Sprintf("code-%d", f.n)
		f.codes[code] = q.Get("code_challenge")
		f.mu.Unlock()
		v := redirect.Query()
		v.Set("code", code)
		v.Set("state", q.Get("state"))
		redirect.RawQuery = v.Encode()
		http.Redirect(w, r, redirect.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		f.mu.Lock()
		defer f.mu.Unlock()
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			challenge, ok := f.codes[r.Form.Get("code")]
			sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
			if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != challenge {
				http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
				return
			}
			delete(f.codes, r.Form.Get("code"))
		case "refresh_token":
			if f.refresh == "" || r.Form.Get("refresh_token") != f.refresh {
				http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
				return
			}
			f.refreshes++
		default:
			http.Error(w, `{"error":"unsupported_grant_type"}`, http.StatusBadRequest)
			return
		}
		f.n++
		f.access = fmt.Sprintf("at-%d-c0ffee5ecret", f.n)
		f.refresh = fmt.Sprintf("rt-%d-5ecretbeef", f.n)
		f.issued = append(f.issued, f.access, f.refresh)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": f.access, "token_type": "Bearer", "expires_in": 1, "refresh_token": f.refresh, "scope": "tools"})
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func (f *oauthFake) tokens() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.issued...)
}

// TestMCPLoginRefreshLogout: `awl mcp login` runs the authorization-code
// flow (the URL printed and given to $BROWSER, the redirect caught on
// 127.0.0.1) and stores the tokens at 0600; a later headless `awl run`
// uses them, refreshes the expired access token and stores the new pair;
// `awl mcp logout` removes them, after which a headless run is told to
// log in. No token ever reaches stdout, stderr, the session or the model,
// not even when the server echoes it in a tool result.
func TestMCPLoginRefreshLogout(t *testing.T) {
	f := newOAuthFake(t)
	dir, cfg, home, sessions := f.runEnv(t)
	t.Chdir(dir)
	stdout, stderr := f.login(t, dir, "web", "--mcp-config", cfg, "--timeout", "2m")
	tokenFile := oauth.TokenFile(filepath.Join(home, ".local", "state", "awl", "mcp-tokens"), "web", f.srv.URL+"/mcp")
	if !strings.Contains(stderr, "logged in to mcp server web; tokens stored in "+tokenFile) {
		t.Errorf("login stderr:\n%s", stderr)
	}
	stored := func() (string, fs.FileMode) {
		t.Helper()
		st, err := os.Stat(tokenFile)
		if err != nil {
			t.Fatalf("no token file: %v", err)
		}
		b, _ := os.ReadFile(tokenFile)
		return string(b), st.Mode().Perm()
	}
	// Its tokens expire at once, so the login's own requests refresh
	// them: what is stored is the last pair issued.
	body, mode := stored()
	issued := f.tokens()
	first := issued[len(issued)-2:]
	f.mu.Lock()
	loginRefreshes := f.refreshes
	f.mu.Unlock()
	if mode != 0o600 || !strings.Contains(body, first[0]) || !strings.Contains(body, first[1]) {
		t.Errorf("token file mode %v, issued %q:\n%s", mode, first, body)
	}
	if st, _ := os.Stat(filepath.Dir(tokenFile)); st == nil || st.Mode().Perm() != 0o700 {
		t.Errorf("token directory mode: %v", st)
	}

	// A headless run (no $BROWSER, as in CI) uses the stored tokens: the
	// access token has expired, so it refreshes, and stores the new pair.
	t.Setenv("BROWSER", "")
	model := providertest.New()
	t.Cleanup(model.Close)
	model.Enqueue(providertest.ToolCall("openai-chat", "call_1", "mcp__web__whoami", `{}`), providertest.Text("openai-chat", "done"))
	t.Setenv("OPENAI_BASE_URL", model.URL)
	var runOut, runErr bytes.Buffer
	code := Main(context.Background(), []string{"run", "--no-stdin", "-o", "ndjson", "--provider", "openai-chat", "--model", "m", "--mcp-config", cfg, "--mcp-strict", "go"}, strings.NewReader(""), &runOut, &runErr)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, runErr.String())
	}
	f.mu.Lock()
	refreshes := f.refreshes
	f.mu.Unlock()
	all := f.tokens()
	if refreshes <= loginRefreshes {
		t.Fatalf("the run did not refresh the expired token: %d refreshes, %d of them at login", refreshes, loginRefreshes)
	}
	body, mode = stored()
	if latest := all[len(all)-2:]; mode != 0o600 || !strings.Contains(body, latest[0]) || !strings.Contains(body, latest[1]) || strings.Contains(body, first[1]) {
		t.Errorf("the refreshed tokens are not what is stored (mode %v)", mode)
	}
	reqs := model.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "called with Bearer [redacted]") {
		t.Errorf("the tool result the model got: %d requests", len(reqs))
	}
	var sessionText strings.Builder
	filepath.WalkDir(sessions, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			sessionText.Write(b)
		}
		return nil
	})
	if sessionText.Len() == 0 {
		t.Fatal("no session written")
	}
	places := map[string]string{"login stdout": stdout, "login stderr": stderr, "events": runOut.String(), "run stderr": runErr.String(), "session": sessionText.String()}
	for i, r := range reqs {
		places[fmt.Sprintf("model request %d", i+1)] = string(r.Body)
	}
	for _, tok := range all {
		for where, text := range places {
			if strings.Contains(text, tok) {
				t.Errorf("token %s in the %s", tok, where)
			}
		}
	}

	// logout removes the file; a second says there is nothing to remove.
	var outErr bytes.Buffer
	if code := Main(context.Background(), []string{"mcp", "logout", "web", "--mcp-config", cfg}, strings.NewReader(""), &outErr, &outErr); code != 0 || !strings.Contains(outErr.String(), "removed the tokens of mcp server web") {
		t.Fatalf("logout: exit %d: %s", code, outErr.String())
	}
	if _, err := os.Stat(tokenFile); !os.IsNotExist(err) {
		t.Errorf("token file after logout: %v", err)
	}
	outErr.Reset()
	if code := Main(context.Background(), []string{"mcp", "logout", "web", "--mcp-config", cfg}, strings.NewReader(""), &outErr, &outErr); code != 0 || !strings.Contains(outErr.String(), "no tokens stored for mcp server web") {
		t.Errorf("second logout: exit %d: %s", code, outErr.String())
	}
	// Without tokens and without a person, the run says how to log in.
	runErr.Reset()
	code = Main(context.Background(), []string{"run", "--no-stdin", "-o", "json", "--provider", "openai-chat", "--model", "m", "--mcp-config", cfg, "--mcp-strict", "go"}, strings.NewReader(""), &runOut, &runErr)
	if code != 4 || !strings.Contains(runErr.String(), "awl mcp login web --mcp-config "+cfg) {
		t.Errorf("headless run after logout: exit %d\n%s", code, runErr.String())
	}
}

// runEnv is a run's surroundings for tests of the OAuth fake: a
// temporary directory holding mcp.json (one HTTP server "web" at the
// fake), a HOME under it whose state directory holds the tokens, and a
// session directory, set in the environment.
func (f *oauthFake) runEnv(t *testing.T) (dir, cfg, home, sessions string) {
	t.Helper()
	dir = t.TempDir()
	cfg = filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"web":{"type":"http","url":"`+f.srv.URL+`/mcp"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	home = filepath.Join(dir, "home")
	sessions = filepath.Join(dir, "sessions")
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("AWL_SESSION_DIR", sessions)
	return dir, cfg, home, sessions
}

// login runs `awl mcp login SERVER ARGS…` in dir through the whole
// authorization-code flow: $BROWSER is a script that leaves the URL for
// the test to open, as a person's browser would, and the test follows it
// to awl's redirect listener. It fails the test unless login exits 0, and
// returns what login printed.
func (f *oauthFake) login(t *testing.T, dir string, args ...string) (stdout, stderr string) {
	t.Helper()
	browser := filepath.Join(dir, "browser")
	urlFile := filepath.Join(dir, "browser.url")
	os.Remove(urlFile)
	os.WriteFile(browser, []byte("#!/bin/sh\nprintf '%s' \"$1\" > "+urlFile+".tmp && mv "+urlFile+".tmp "+urlFile+"\n"), 0o755)
	t.Setenv("BROWSER", browser)
	var out bytes.Buffer
	var errOut testenv.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(context.Background(), append([]string{"mcp", "login"}, args...), strings.NewReader(""), &out, &errOut)
	}()
	var authURL string
	for deadline := time.Now().Add(2 * time.Minute); authURL == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(urlFile); err == nil {
			authURL = string(b)
		}
		select {
		case code := <-done:
			t.Fatalf("login ended (exit %d) before $BROWSER got a URL; stderr:\n%s", code, errOut.String())
		default:
		}
	}
	if authURL == "" {
		t.Fatalf("$BROWSER never got the URL; stderr:\n%s", errOut.String())
	}
	if !strings.Contains(errOut.String(), "open this URL in a browser:\n"+authURL+"\n") {
		t.Errorf("the URL is not printed for a person without a browser:\n%s", errOut.String())
	}
	resp, err := http.Get(authURL) // follows the redirect to awl's listener
	if err != nil {
		t.Fatal(err)
	}
	page := new(bytes.Buffer)
	page.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(page.String(), "awl is authorized") {
		t.Fatalf("the redirect listener answered %d: %s", resp.StatusCode, page)
	}
	if code := <-done; code != 0 {
		t.Fatalf("login: exit %d\n%s", code, errOut.String())
	}
	return out.String(), errOut.String()
}

// TestMCPLoginFromConfigFiles: `awl mcp login` and `logout` find a server
// where `awl run` does, in the [mcp-servers.NAME] tables of the
// configuration files as well as in --mcp-config, with the same trust
// rule; a headless run that needs a login names the command that finds
// the server in its file.
func TestMCPLoginFromConfigFiles(t *testing.T) {
	f := newOAuthFake(t)
	dir, cfg, home, _ := f.runEnv(t)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("AWL_CONFIG", "")
	t.Setenv("AWL_TRUST_PROJECT", "")
	t.Chdir(dir)
	server := "url = \"" + f.srv.URL + "/mcp\"\n"
	userFile := filepath.Join(home, ".config", "awl", "config.toml")
	os.MkdirAll(filepath.Dir(userFile), 0o755)
	if err := os.WriteFile(userFile, []byte("[mcp-servers.web]\n"+server), 0o644); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(dir, "repo")
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	os.MkdirAll(filepath.Join(repo, ".awl"), 0o755)
	projFile := filepath.Join(repo, ".awl", "config.toml")
	if err := os.WriteFile(projFile, []byte("model = \"m\"\n\n[mcp-servers.proj]\n"+server), 0o644); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(home, ".local", "state", "awl", "mcp-tokens")
	exists := func(name string) bool {
		_, err := os.Stat(oauth.TokenFile(tokens, name, f.srv.URL+"/mcp"))
		return err == nil
	}
	mcpCmd := func(args ...string) (int, string) {
		var out bytes.Buffer
		code := Main(context.Background(), append([]string{"mcp"}, args...), strings.NewReader(""), &out, &out)
		return code, out.String()
	}

	// The user's file alone: no flag names it.
	if _, stderr := f.login(t, dir, "web"); !exists("web") || !strings.Contains(stderr, "logged in to mcp server web") {
		t.Fatalf("login from the user's file stored nothing:\n%s", stderr)
	}
	// The project's file is not trusted: its servers are refused, as a
	// run refuses them, naming path:line and how to trust it.
	code, out := mcpCmd("login", "proj", "-C", repo, "--timeout", "10s")
	if code != 4 || !strings.Contains(out, projFile+":3:") || !strings.Contains(out, "mcp-servers.proj") || !strings.Contains(out, "--trust-project") {
		t.Errorf("login to an untrusted project file's server: exit %d\n%s", code, out)
	}
	if exists("proj") {
		t.Error("tokens stored for an untrusted project file's server")
	}
	if _, stderr := f.login(t, dir, "proj", "-C", repo, "--trust-project"); !exists("proj") {
		t.Errorf("login with --trust-project stored nothing:\n%s", stderr)
	}
	// --no-config reads no file: nothing to find.
	if code, out := mcpCmd("logout", "web", "--no-config"); code != 2 || !strings.Contains(out, `no mcp server "web": no --mcp-config given and no configuration file read`) {
		t.Errorf("logout --no-config: exit %d\n%s", code, out)
	}
	// A name in both --mcp-config and a file is refused, as a run does.
	if code, out := mcpCmd("logout", "web", "--mcp-config", cfg); code != 2 || !strings.Contains(out, userFile+":1: mcp-servers.web: server \"web\" is also defined in "+cfg) {
		t.Errorf("a server in both: exit %d\n%s", code, out)
	}
	// A name no source has says where it looked.
	if code, out := mcpCmd("logout", "nope", "-C", repo, "--trust-project"); code != 2 || !strings.Contains(out, `no mcp server "nope" in `+userFile+", "+projFile) {
		t.Errorf("an unknown server: exit %d\n%s", code, out)
	}
	if code, out := mcpCmd("logout", "web"); code != 0 || exists("web") {
		t.Fatalf("logout from the user's file: exit %d\n%s", code, out)
	}
	// Headless, with no tokens, the run names the login that finds the
	// server: by its file, never as an --mcp-config.
	t.Setenv("BROWSER", "")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1")
	var runOut, runErr bytes.Buffer
	code = Main(context.Background(), []string{"run", "--no-stdin", "-o", "json", "--provider", "openai-chat", "--model", "m", "--mcp-strict", "go"}, strings.NewReader(""), &runOut, &runErr)
	if want := "awl mcp login web --config " + userFile; code != 4 || !strings.Contains(runErr.String(), want) {
		t.Errorf("headless run after logout: exit %d, want the hint %q:\n%s", code, want, runErr.String())
	}
}
