package mcp

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	mbig "math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awlrun/awl/runner/mcp/oauth"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/awlrun/awl/internal/testenv"
)

// protectedMCP is an MCP server with one tool, "hello", that answers only
// requests carrying "Bearer "+token(); others get a 401 with challenge.
func protectedMCP(t *testing.T, token func() string, challenge func(base string) string) *httptest.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "hello", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hello, " + req.Extra.Header.Get("Authorization")}}}, nil
	})
	inner := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var h *httptest.Server
	h = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok := token(); tok == "" || r.Header.Get("Authorization") != "Bearer "+tok {
			w.Header().Set("WWW-Authenticate", challenge(h.URL))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(h.Close)
	return h
}

func jsonReply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// xaaFake is SEP-990's three parties: an identity provider that exchanges
// an ID token for an ID-JAG (RFC 8693), the MCP server's authorization
// server that takes the ID-JAG as a JWT bearer assertion (RFC 7523) from
// an authenticated client, and the MCP server.
type xaaFake struct {
	idp, as, mcp *httptest.Server
	mu           sync.Mutex
	exchange     url.Values // the IdP's last token request
	bearer       url.Values // the authorization server's last token request
	basic        [2]string
	issuedType   string // what the IdP says it issued
	access       string
}

const (
	xaaIDToken = "eyJ.id-token-5ecret.sig"
	xaaJAG     = "eyJ.id-jag-5ecret.sig"
)

func newXAAFake(t *testing.T) *xaaFake {
	f := &xaaFake{issuedType: "urn:ietf:params:oauth:token-type:id-jag"}
	f.idp = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			// An IdP need not do PKCE: awl only exchanges a token here.
			jsonReply(w, 200, map[string]any{"issuer": f.idp.URL, "token_endpoint": f.idp.URL + "/token"})
		case "/token":
			r.ParseForm()
			f.mu.Lock()
			f.exchange = r.PostForm
			typ := f.issuedType
			f.mu.Unlock()
			jsonReply(w, 200, map[string]any{"access_token": xaaJAG, "issued_token_type": typ, "token_type": "N_A"})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.idp.Close)
	f.as = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			jsonReply(w, 200, map[string]any{"issuer": f.as.URL, "token_endpoint": f.as.URL + "/token",
				"grant_types_supported": []string{"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "code_challenge_methods_supported": []string{"S256"},
				"token_endpoint_auth_methods_supported": []string{"client_secret_basic"}})
		case "/token":
			r.ParseForm()
			id, secret, _ := r.BasicAuth()
			f.mu.Lock()
			defer f.mu.Unlock()
			f.bearer, f.basic = r.PostForm, [2]string{id, secret}
			if r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || r.PostForm.Get("assertion") != xaaJAG || id != "mcp-client" || secret != "as-5ecret" {
				jsonReply(w, 400, map[string]any{"error": "invalid_grant"})
				return
			}
			f.access = "at-xaa-5ecret"
			jsonReply(w, 200, map[string]any{"access_token": f.access, "token_type": "Bearer", "expires_in": 3600})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.as.Close)
	f.mcp = protectedMCP(t, func() string { f.mu.Lock(); defer f.mu.Unlock(); return f.access }, func(base string) string {
		return `Bearer resource_metadata="` + base + `/.well-known/oauth-protected-resource"`
	})
	// The protected-resource metadata is the MCP server's; add it in
	// front of the protected handler.
	inner := f.mcp.Config.Handler
	f.mcp.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource" {
			jsonReply(w, 200, map[string]any{"resource": f.mcp.URL + "/mcp", "authorization_servers": []string{f.as.URL}})
			return
		}
		inner.ServeHTTP(w, r)
	})
	return f
}

func (f *xaaFake) server() Server {
	return Server{Name: "xaa", File: "ci.json", URL: f.mcp.URL + "/mcp",
		OAuth: &oauth.Config{Grant: oauth.GrantIDJAG, ClientID: "mcp-client", ClientSecret: "as-5ecret",
			IdP: &oauth.IdP{Issuer: f.idp.URL, ClientID: "idp-client", IDToken: xaaIDToken}},
		secrets: []string{"as-5ecret", xaaIDToken}}
}

// The id_jag grant (SEP-990): the ID token is exchanged at the IdP for an
// ID-JAG meant for the MCP server's authorization server and the server
// itself, the ID-JAG for an access token with the client's secret, and
// neither token nor the access token reaches a result or stderr.
func TestIDJAGGrant(t *testing.T) {
	f := newXAAFake(t)
	m, stderr := start(t, []Server{f.server()}, Options{Timeout: 20 * time.Second})
	if err := m.Status()[0].Err; err != nil {
		t.Fatalf("start: %v\n%s", err, stderr)
	}
	res := call(t, toolByName(t, m, "mcp__xaa__hello"), `{}`)
	if res.IsError || res.Content != "hello, Bearer [redacted]" {
		t.Fatalf("result: %+v", res)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	want := map[string]string{
		"grant_type":           "urn:ietf:params:oauth:grant-type:token-exchange",
		"requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
		"subject_token":        xaaIDToken,
		"subject_token_type":   "urn:ietf:params:oauth:token-type:id_token",
		"audience":             f.as.URL,
		"resource":             f.mcp.URL + "/mcp",
		"client_id":            "idp-client",
	}
	for k, v := range want {
		if got := f.exchange.Get(k); got != v {
			t.Errorf("token exchange %s = %q, want %q", k, got, v)
		}
	}
	if f.bearer.Get("client_secret") != "" || f.basic != [2]string{"mcp-client", "as-5ecret"} {
		t.Errorf("JWT bearer client authentication: form %v, basic %q", f.bearer, f.basic)
	}
	for _, s := range []string{xaaIDToken, xaaJAG, "at-xaa-5ecret", "as-5ecret"} {
		if strings.Contains(stderr.String(), s) {
			t.Errorf("stderr holds %q:\n%s", s, stderr)
		}
	}
}

// An IdP that issues something other than an ID-JAG, or whose metadata
// names another issuer, is refused, saying why, and no token request
// reaches the authorization server.
func TestIDJAGRefusals(t *testing.T) {
	t.Run("issued type", func(t *testing.T) {
		f := newXAAFake(t)
		f.issuedType = "urn:ietf:params:oauth:token-type:access_token"
		m, _ := start(t, []Server{f.server()}, Options{Timeout: 20 * time.Second})
		err := m.Status()[0].Err
		if err == nil || !strings.Contains(err.Error(), "not an ID-JAG") || strings.Contains(err.Error(), xaaIDToken) {
			t.Fatalf("err: %v", err)
		}
		if f.bearer != nil {
			t.Errorf("the authorization server was asked: %v", f.bearer)
		}
	})
	t.Run("issuer", func(t *testing.T) {
		f := newXAAFake(t)
		s := f.server()
		s.OAuth.IdP.Issuer = f.idp.URL + "/tenant"
		// The tenant's metadata (path appended) names the IdP's root.
		inner := f.idp.Config.Handler
		f.idp.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/tenant/.well-known/openid-configuration" {
				jsonReply(w, 200, map[string]any{"issuer": f.idp.URL, "token_endpoint": f.idp.URL + "/token"})
				return
			}
			inner.ServeHTTP(w, r)
		})
		m, _ := start(t, []Server{s}, Options{Timeout: 20 * time.Second})
		err := m.Status()[0].Err
		if err == nil || !strings.Contains(err.Error(), "RFC 8414 section 3.3") {
			t.Fatalf("err: %v", err)
		}
		if f.exchange != nil {
			t.Errorf("the IdP was asked: %v", f.exchange)
		}
	})
}

// legacyFake is a 2025-03-26 server: no protected-resource metadata, its
// authorization server at its own origin under /oauth, the metadata at
// the origin's well-known URL naming the issuer issuer(base).
type legacyFake struct {
	srv    *httptest.Server
	mu     sync.Mutex
	access string
	asked  []string // authorization server paths requested
	pkce   []string // code_challenge_methods_supported (default S256)
}

func newLegacyFake(t *testing.T, issuer func(base string) string, prm bool) *legacyFake {
	f := &legacyFake{}
	mcpSrv := protectedMCP(t, func() string { f.mu.Lock(); defer f.mu.Unlock(); return f.access }, func(base string) string {
		if prm {
			return `Bearer resource_metadata="` + base + `/.well-known/oauth-protected-resource"`
		}
		return `Bearer`
	})
	var codes sync.Map
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := f.srv.URL
		f.mu.Lock()
		f.asked = append(f.asked, r.URL.Path)
		f.mu.Unlock()
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp":
			if !prm {
				http.NotFound(w, r)
				return
			}
			jsonReply(w, 200, map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}})
		case "/.well-known/oauth-authorization-server":
			f.mu.Lock()
			pkce := f.pkce
			f.mu.Unlock()
			if pkce == nil {
				pkce = []string{"S256"}
			}
			jsonReply(w, 200, map[string]any{"issuer": issuer(base), "authorization_endpoint": base + "/oauth/authorize",
				"token_endpoint": base + "/oauth/token", "registration_endpoint": base + "/oauth/register",
				"response_types_supported": []string{"code"}, "code_challenge_methods_supported": pkce,
				"token_endpoint_auth_methods_supported": []string{"none"}})
		case "/oauth/register":
			jsonReply(w, 201, map[string]any{"client_id": "legacy-client", "redirect_uris": []string{"http://127.0.0.1/callback"}})
		case "/oauth/authorize":
			q := r.URL.Query()
			codes.Store("code-1", q.Get("code_challenge"))
			u, _ := url.Parse(q.Get("redirect_uri"))
			v := u.Query()
			v.Set("code", "code-1")
			v.Set("state", q.Get("state"))
			u.RawQuery = v.Encode()
			http.Redirect(w, r, u.String(), http.StatusFound)
		case "/oauth/token":
			r.ParseForm()
			if _, ok := codes.LoadAndDelete(r.PostForm.Get("code")); !ok || r.PostForm.Get("code_verifier") == "" || r.PostForm.Get("client_id") != "legacy-client" {
				jsonReply(w, 400, map[string]any{"error": "invalid_grant"})
				return
			}
			f.mu.Lock()
			f.access = "at-legacy-5ecret"
			f.mu.Unlock()
			jsonReply(w, 200, map[string]any{"access_token": "at-legacy-5ecret", "token_type": "Bearer", "expires_in": 3600})
		default:
			mcpSrv.Config.Handler.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// follower is a Login's Notify that follows each authorization URL awl
// prints, as a person's browser would.
type follower struct{ testenv.Buffer }

var urlRE = regexp.MustCompile(`http://\S+`)

func (f *follower) Write(p []byte) (int, error) {
	f.Buffer.Write(p)
	for _, u := range urlRE.FindAllString(string(p), -1) {
		go func() {
			if resp, err := http.Get(u); err == nil {
				resp.Body.Close()
			}
		}()
	}
	return len(p), nil
}

// A 2025-03-26 server whose metadata, at its origin's well-known URL,
// names an issuer with a path on that origin: awl authorizes with it
// (metadata, registration, PKCE, token) and calls the tool. A strict
// reading of RFC 8414 section 3.3 refuses the issuer.
func TestLegacyMetadataSameOrigin(t *testing.T) {
	f := newLegacyFake(t, func(base string) string { return base + "/oauth" }, false)
	m, stderr := start(t, []Server{{Name: "old", URL: f.srv.URL + "/mcp"}}, Options{Timeout: 20 * time.Second, Login: &oauth.Login{Notify: &follower{}}})
	if err := m.Status()[0].Err; err != nil {
		t.Fatalf("start: %v\n%s", err, stderr)
	}
	if res := call(t, toolByName(t, m, "mcp__old__hello"), `{}`); res.IsError || res.Content != "hello, Bearer [redacted]" {
		t.Fatalf("result: %+v", res)
	}
}

// The issuer check stays where it protects: metadata at the origin naming
// an issuer on another origin is refused, and so is a mismatch where
// protected-resource metadata names the authorization server (2025-06-18
// on). An authorization server that does not list PKCE S256 is not used.
// None reaches the authorization endpoint, nor registers a client.
func TestLegacyMetadataRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		issuer func(string) string
		prm    bool
		pkce   []string
		want   string
	}{
		"other origin": {func(string) string { return "https://elsewhere.example/oauth" }, false, nil, "not on that origin"},
		"with prm":     {func(base string) string { return base + "/oauth" }, true, nil, "does not match"},
		"no pkce":      {func(base string) string { return base }, false, []string{}, "does not list PKCE S256"},
		"plain pkce":   {func(base string) string { return base }, false, []string{"plain"}, "does not list PKCE S256"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newLegacyFake(t, tc.issuer, tc.prm)
			f.pkce = tc.pkce
			m, _ := start(t, []Server{{Name: "old", URL: f.srv.URL + "/mcp"}}, Options{Timeout: 20 * time.Second, Login: &oauth.Login{Notify: &follower{}}})
			err := m.Status()[0].Err
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err: %v", err)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			for _, p := range f.asked {
				if strings.HasPrefix(p, "/oauth/") {
					t.Errorf("asked %s", p)
				}
			}
			t.Log(err)
		})
	}
}

// ccFake is an MCP server whose authorization server takes the
// client-credentials grant with the authentication methods methods.
func ccFake(t *testing.T, methods []string, check func(r *http.Request) bool) *httptest.Server {
	return grantFake(t, "client_credentials", methods, check)
}

// grantFake is ccFake for the grant type grant.
func grantFake(t *testing.T, grant string, methods []string, check func(r *http.Request) bool) *httptest.Server {
	var mu sync.Mutex
	var access string
	var as *httptest.Server
	as = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			jsonReply(w, 200, map[string]any{"issuer": as.URL, "token_endpoint": as.URL + "/token",
				"grant_types_supported": []string{"client_credentials"}, "code_challenge_methods_supported": []string{"S256"},
				"token_endpoint_auth_methods_supported": methods})
		case "/token":
			r.ParseForm()
			if r.PostForm.Get("grant_type") != grant || !check(r) {
				jsonReply(w, 401, map[string]any{"error": "invalid_client", "error_description": "no"})
				return
			}
			mu.Lock()
			access = "at-cc-5ecret"
			mu.Unlock()
			jsonReply(w, 200, map[string]any{"access_token": "at-cc-5ecret", "token_type": "Bearer", "expires_in": 3600})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(as.Close)
	mcp := protectedMCP(t, func() string { mu.Lock(); defer mu.Unlock(); return access }, func(base string) string {
		return `Bearer resource_metadata="` + base + `/.well-known/oauth-protected-resource"`
	})
	inner := mcp.Config.Handler
	mcp.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource" {
			jsonReply(w, 200, map[string]any{"resource": mcp.URL + "/mcp", "authorization_servers": []string{as.URL}})
			return
		}
		inner.ServeHTTP(w, r)
	})
	return mcp
}

// The client-credentials grant authenticates as the authorization server
// supports: client_secret_basic, client_secret_post, or private_key_jwt
// with an ES256 assertion signed by the configured key, whose iss and sub
// are the client and aud the issuer; the secret and the token never reach
// stderr or a result.
func TestClientCredentialsGrant(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	var aud string
	for name, tc := range map[string]struct {
		methods []string
		o       oauth.Config
		check   func(r *http.Request) bool
	}{
		"basic": {[]string{"client_secret_basic", "client_secret_post"}, oauth.Config{ClientSecret: "cc-5ecret"}, func(r *http.Request) bool {
			id, secret, ok := r.BasicAuth()
			return ok && id == "ci-bot" && secret == "cc-5ecret" && r.PostForm.Get("client_secret") == ""
		}},
		"post": {[]string{"client_secret_post"}, oauth.Config{ClientSecret: "cc-5ecret"}, func(r *http.Request) bool {
			_, _, basic := r.BasicAuth()
			return !basic && r.PostForm.Get("client_id") == "ci-bot" && r.PostForm.Get("client_secret") == "cc-5ecret"
		}},
		"private_key_jwt": {[]string{"private_key_jwt"}, oauth.Config{PrivateKey: pemKey}, func(r *http.Request) bool {
			if r.PostForm.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
				return false
			}
			parts := strings.Split(r.PostForm.Get("client_assertion"), ".")
			if len(parts) != 3 {
				return false
			}
			sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
			sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
			if len(sig) != 64 || !ecdsa.Verify(&key.PublicKey, sum[:], new(mbig.Int).SetBytes(sig[:32]), new(mbig.Int).SetBytes(sig[32:])) {
				return false
			}
			claims, _ := base64.RawURLEncoding.DecodeString(parts[1])
			var c struct{ Iss, Sub, Aud string }
			json.Unmarshal(claims, &c)
			return c.Iss == "ci-bot" && c.Sub == "ci-bot" && c.Aud == aud
		}},
	} {
		t.Run(name, func(t *testing.T) {
			srv := ccFake(t, tc.methods, tc.check)
			// The issuer is the authorization server the PRM names.
			resp, err := http.Get(srv.URL + "/.well-known/oauth-protected-resource")
			if err != nil {
				t.Fatal(err)
			}
			var prm struct {
				AuthorizationServers []string `json:"authorization_servers"`
			}
			json.NewDecoder(resp.Body).Decode(&prm)
			resp.Body.Close()
			aud = prm.AuthorizationServers[0]
			o := tc.o
			o.Grant, o.ClientID = oauth.GrantClientCredentials, "ci-bot"
			m, stderr := start(t, []Server{{Name: "cc", URL: srv.URL + "/mcp", OAuth: &o, secrets: []string{"cc-5ecret", pemKey}}}, Options{Timeout: 20 * time.Second})
			if err := m.Status()[0].Err; err != nil {
				t.Fatalf("start: %v\n%s", err, stderr)
			}
			if res := call(t, toolByName(t, m, "mcp__cc__hello"), `{}`); res.IsError || res.Content != "hello, Bearer [redacted]" {
				t.Fatalf("result: %+v", res)
			}
			if strings.Contains(stderr.String(), "5ecret") {
				t.Errorf("stderr: %s", stderr)
			}
		})
	}
}

// A server whose protected resource metadata is for another resource is
// reported so: awl does not guess the origin's endpoints and report a
// /register the MCP server never had.
func TestResourceMismatchReported(t *testing.T) {
	var h *httptest.Server
	registered := false
	h = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource":
			jsonReply(w, http.StatusOK, map[string]any{"resource": "https://other.example/mcp", "authorization_servers": []string{h.URL}})
		case "/register":
			registered = true
			http.NotFound(w, r)
		default:
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+h.URL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(h.Close)
	m, stderr := start(t, []Server{{Name: "web", File: "ci.json", URL: h.URL + "/mcp"}}, Options{Timeout: 10 * time.Second, Login: &oauth.Login{Notify: io.Discard}})
	err := m.Status()[0].Err
	if err == nil || !strings.Contains(err.Error(), `names the resource "https://other.example/mcp", not "`+h.URL+`/mcp" (RFC 9728 section 3.3: not used)`) || registered {
		t.Fatalf("start: %v (registered %v)\n%s", err, registered, stderr)
	}
}

// The jwt_bearer grant (RFC 7523, SEP-1933) sends the workload's JWT, read
// from its file at the token request, as the assertion, with the id of a
// public client and the resource; neither the JWT nor the token shows in
// the result. A file that is not there is the error.
func TestJWTBearerGrant(t *testing.T) {
	f := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(f, []byte("eyJ.workload.jwt-5ecret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var mcpURL string
	srv := grantFake(t, "urn:ietf:params:oauth:grant-type:jwt-bearer", []string{"none"}, func(r *http.Request) bool {
		return r.PostForm.Get("assertion") == "eyJ.workload.jwt-5ecret" && r.PostForm.Get("client_id") == "wl" && r.PostForm.Get("resource") == mcpURL
	})
	mcpURL = srv.URL + "/mcp"
	cfg := &oauth.Config{Grant: oauth.GrantJWTBearer, ClientID: "wl", AssertionFile: f}
	m, stderr := start(t, []Server{{Name: "wl", URL: mcpURL, OAuth: cfg}}, Options{Timeout: 10 * time.Second})
	if err := m.Status()[0].Err; err != nil {
		t.Fatalf("start: %v\n%s", err, stderr)
	}
	res := call(t, toolByName(t, m, "mcp__wl__hello"), `{}`)
	if res.IsError || res.Content != "hello, Bearer [redacted]" {
		t.Fatalf("call: %+v", res)
	}
	missing := *cfg
	missing.AssertionFile = f + ".gone"
	m, _ = start(t, []Server{{Name: "wl", URL: mcpURL, OAuth: &missing}}, Options{Timeout: 10 * time.Second})
	if err := m.Status()[0].Err; err == nil || !strings.Contains(err.Error(), "jwt_bearer assertion: open "+f+".gone") {
		t.Fatalf("a missing file: %v", err)
	}
}
