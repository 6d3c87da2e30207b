package oauth

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseChallenges(t *testing.T) {
	for _, tc := range []struct {
		headers []string
		want    string // challenges as scheme[token68]{k=v,...}; separated by " | "
	}{
		{[]string{`Bearer`}, `bearer{}`},
		{[]string{`Bearer realm="mcp", error="insufficient_scope", scope="files:read files:write"`},
			`bearer{error=insufficient_scope,realm=mcp,scope=files:read files:write}`},
		// A quoted comma and an escaped quote stay in the value; names
		// and schemes are case-insensitive; the first of two wins.
		{[]string{`BEARER Resource_Metadata="https://a.example/x,y", error_description="say \"no\"", realm=a, REALM=b`},
			`bearer{error_description=say "no",realm=a,resource_metadata=https://a.example/x,y}`},
		// Two challenges in one header, a token68 among them.
		{[]string{`Basic abc+/==, Bearer scope=read`}, `basic[abc+/==]{} | bearer{scope=read}`},
		{[]string{`Basic realm="x", Bearer error=invalid_token`}, `basic{realm=x} | bearer{error=invalid_token}`},
		// One challenge per header, and spaces around "=".
		{[]string{`Basic`, `Bearer  scope = "a b" ,`}, `basic{} | bearer{scope=a b}`},
		{[]string{``, ` , `}, ``},
	} {
		cs, err := parseChallenges(tc.headers)
		if err != nil {
			t.Errorf("%q: %v", tc.headers, err)
			continue
		}
		var got []string
		for _, c := range cs {
			var kv []string
			for k, v := range c.params {
				kv = append(kv, k+"="+v)
			}
			slices.Sort(kv)
			s := c.scheme
			if c.token68 != "" {
				s += "[" + c.token68 + "]"
			}
			got = append(got, s+"{"+strings.Join(kv, ",")+"}")
		}
		if g := strings.Join(got, " | "); g != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.headers, g, tc.want)
		}
	}
	for _, bad := range []string{`Bearer realm="unterminated`, `Bearer realm=a b`, `=x`, `Bearer abc== def`} {
		if cs, err := parseChallenges([]string{bad}); err == nil {
			t.Errorf("%q: no error, %+v", bad, cs)
		}
	}
}

// Members are matched by their exact names, and a member of the wrong
// type is an error, not an empty value.
func TestMetadataMembers(t *testing.T) {
	// encoding/json would take the last of the names that match
	// regardless of case.
	m, err := parseAuthServerMeta([]byte(`{"issuer":"https://as.example","ISSUER":"https://evil.example","token_endpoint":"https://as.example/token",
		"Token_Endpoint":"https://evil.example/t","code_challenge_methods_supported":["S256"],"client_id_metadata_document_supported":true}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &authServerMeta{Issuer: "https://as.example", TokenEndpoint: "https://as.example/token", CodeChallengeMethodsSupported: []string{"S256"}, ClientIDMetadataDocumentSupported: true}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got %+v", m)
	}
	for doc, want := range map[string]string{
		`{"issuer":1}`: "issuer is not a string",
		`{"issuer":"https://as.example","scopes_supported":["a",2]}`: "scopes_supported is not an array of strings",
		`{"client_id_metadata_document_supported":"yes"}`:            "not true or false",
		`{"token_endpoint":"http://as.example/token"}`:               "loopback",
		`{"authorization_endpoint":"javascript:alert(1)"}`:           "https only",
		`["issuer"]`: "not a JSON object",
		`{"issuer":`: "not JSON",
		`{"resource":"https://r.example","authorization_servers":["data:text/html"]}`: "https only",
	} {
		_, err1 := parseAuthServerMeta([]byte(doc))
		_, err2 := parseResourceMeta([]byte(doc))
		if (err1 == nil || !strings.Contains(err1.Error(), want)) && (err2 == nil || !strings.Contains(err2.Error(), want)) {
			t.Errorf("%s: %v / %v, want %q", doc, err1, err2, want)
		}
	}
}

// A document is JSON, as application/json, of at most 1 MiB, or it is
// refused; a 4xx is no metadata there.
func TestFetchDoc(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/html":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `{"issuer":"x"}`)
		case "/big":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"issuer":"%s"}`, strings.Repeat("a", maxDoc))
		case "/gone":
			http.NotFound(w, r)
		case "/down":
			w.WriteHeader(http.StatusBadGateway)
		default:
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			fmt.Fprintf(w, `{"issuer":%q,"code_challenge_methods_supported":["S256"]}`, "http://"+r.Host)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c := guarded(srv.Client(), nil)
	if m, err := authServerMetaAt(ctx, c, srv.URL+"/ok"); err != nil || m == nil || m.Issuer != srv.URL {
		t.Errorf("ok: %+v, %v", m, err)
	}
	if m, err := authServerMetaAt(ctx, c, srv.URL+"/gone"); m != nil || err != nil {
		t.Errorf("gone: %+v, %v", m, err)
	}
	for path, want := range map[string]string{"/html": `Content-Type "text/html"`, "/big": "over 1048576 bytes", "/down": "HTTP 502 Bad Gateway"} {
		if _, err := authServerMetaAt(ctx, c, srv.URL+path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
}

// A URL a server names cannot point awl at the machines around it: the
// dialer refuses private, link-local and shared addresses (before any
// packet leaves), and a redirect may not go to them, nor to loopback, nor
// from https to http.
func TestGuardedClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := guarded(&http.Client{}, nil)
	// The address of clouds' instance metadata, end to end: refused
	// before a packet leaves.
	if _, err := fetchDoc(ctx, c, "https://169.254.169.254/latest/meta-data"); err == nil || !strings.Contains(err.Error(), "non-public address") {
		t.Errorf("instance metadata: %v", err)
	}
	for _, a := range []string{"10.1.2.3:443", "192.168.0.1:443", "172.16.0.1:443", "100.64.0.1:443", "[fd00::1]:443", "[fe80::1]:443", "0.0.0.0:443", "[::]:443", "224.0.0.1:443", "[::ffff:10.0.0.1]:443", "example.com:443"} {
		if err := dialPublic("tcp", a, nil); err == nil {
			t.Errorf("%s: dialed", a)
		}
	}
	for _, a := range []string{"127.0.0.1:8080", "[::1]:443", "93.184.216.34:443", "[2606:2800:220:1::]:443"} {
		if err := dialPublic("tcp", a, nil); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
	var redirectTo string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/doc" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{}`)
			return
		}
		http.Redirect(w, r, redirectTo, http.StatusFound)
	}))
	defer srv.Close()
	for _, to := range []string{"http://169.254.169.254/latest/meta-data", "http://10.0.0.1/", srv.URL + "/again"} {
		redirectTo = to
		if _, err := fetchDoc(ctx, guarded(srv.Client(), nil), srv.URL+"/start"); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("redirect to %s: %v", to, err)
		}
	}
	// The configured server's own host is trusted (its redirects may go
	// to it, and it may be at any address), and with private_network
	// every host is; no other host is.
	u, _ := url.Parse(srv.URL + "/mcp")
	redirectTo = srv.URL + "/doc"
	if _, err := fetchDoc(ctx, guarded(srv.Client(), trustHosts(u, false)), srv.URL+"/start"); err != nil {
		t.Errorf("redirect to the server's own host: %v", err)
	}
	other, _ := url.Parse("https://mcp.example/mcp")
	if _, err := fetchDoc(ctx, guarded(srv.Client(), trustHosts(other, false)), srv.URL+"/start"); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("redirect to loopback for mcp.example: %v", err)
	}
	for host, want := range map[string]bool{"127.0.0.1": true, "MCP.example": false, "10.0.0.1": false} {
		if got := trustHosts(u, false)(host); got != want {
			t.Errorf("trust %s for %s: %v", host, u, got)
		}
		if !trustHosts(other, true)(host) {
			t.Errorf("private_network: %s not trusted", host)
		}
	}
	if !trustHosts(other, false)("mcp.EXAMPLE") || !trustHosts(&url.URL{Host: "[::1]:8080"}, false)("::1") {
		t.Error("a server's own host, in another case or as an IPv6 literal, is not trusted")
	}
	// A client that dials its own way (here, the tests') keeps its
	// transport; the redirect checks stay.
	own := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{}).DialContext}}
	if g := guarded(own, nil); g.Transport != own.Transport || g.CheckRedirect == nil {
		t.Errorf("own dialer: %+v", g)
	}
}

func TestRegisterClient(t *testing.T) {
	var reply func(w http.ResponseWriter)
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 4096)
		n, _ := r.Body.Read(b)
		got = string(b[:n])
		w.Header().Set("Content-Type", "application/json")
		reply(w)
	}))
	defer srv.Close()
	meta := &clientMeta{ClientName: "awl", RedirectURIs: []string{"http://127.0.0.1:1/callback"}, GrantTypes: []string{"authorization_code"},
		ResponseTypes: []string{"code"}, TokenEndpointAuthMethod: "none", ApplicationType: "native"}
	reply = func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"client_id":"c1","client_secret":"s3cret","token_endpoint_auth_method":"client_secret_basic","Client_ID":"evil"}`)
	}
	reg, err := registerClient(context.Background(), srv.Client(), srv.URL, meta)
	if err != nil || *reg != (registration{ClientID: "c1", ClientSecret: "s3cret", AuthMethod: "client_secret_basic"}) {
		t.Fatalf("%+v, %v", reg, err)
	}
	if want := `{"client_name":"awl","redirect_uris":["http://127.0.0.1:1/callback"],"grant_types":["authorization_code"],"response_types":["code"],"token_endpoint_auth_method":"none","application_type":"native"}`; got != want {
		t.Errorf("sent %s", got)
	}
	for body, want := range map[string]string{
		`{"client_secret":"x"}`: "names no client_id",
		`{"client_id":7}`:       "client_id is not a string",
		`{"error":"invalid_redirect_uri","error_description":"loopback"}`: "HTTP 400 Bad Request: invalid_redirect_uri loopback",
	} {
		status := http.StatusCreated
		if strings.Contains(body, "error") {
			status = http.StatusBadRequest
		}
		reply = func(w http.ResponseWriter) { w.WriteHeader(status); fmt.Fprint(w, body) }
		if _, err := registerClient(context.Background(), srv.Client(), srv.URL, meta); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

// Whatever a server sends as WWW-Authenticate, parsing ends, without a
// panic, and what it returns has a scheme of token characters.
func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{`Bearer realm="a\"b", scope="x y"`, `Basic abc==, Bearer error=insufficient_scope`, `Bearer resource_metadata="`,
		`a=b`, `, ,`, `Bearer x=`, `Bearer x="\`, "Bearer\tx\t=\ty"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		cs, err := parseChallenges([]string{h})
		if err != nil {
			return
		}
		for _, c := range cs {
			if c.scheme == "" || strings.ContainsFunc(c.scheme, func(r rune) bool { return r > 127 || !isTchar(byte(r)) }) {
				t.Fatalf("%q: scheme %q", h, c.scheme)
			}
		}
	})
}

// Protected resource metadata is looked for where RFC 9728 puts it, the
// server's query after its path; a document for another resource is not
// used, and it tells that the server is not in the 2025-03-26 layout.
func TestResourceMetaOf(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.RequestURI() {
		case "/.well-known/oauth-protected-resource/mcp?tenant=a":
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":["https://as.example"],"scopes_supported":["read"]}`, srv.URL+"/mcp?tenant=a")
		case "/.well-known/oauth-protected-resource":
			fmt.Fprintf(w, `{"resource":"https://elsewhere.example","authorization_servers":["https://as.example"]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := guarded(srv.Client(), nil)
	u, _ := url.Parse(srv.URL + "/mcp?tenant=a")
	prm, published, legacy, err := resourceMetaOf(context.Background(), c, nil, u)
	if err != nil || !published || legacy || prm.AuthorizationServers[0] != "https://as.example" || prm.Resource != u.String() {
		t.Errorf("with the query: %+v %v %v %v", prm, published, legacy, err)
	}
	// Only a document for another resource: that is the error, not a
	// guess at the origin's endpoints.
	u, _ = url.Parse(srv.URL + "/other")
	prm, _, _, err = resourceMetaOf(context.Background(), c, nil, u)
	if prm != nil || err == nil || !strings.Contains(err.Error(), `names the resource "https://elsewhere.example", not "`+srv.URL+`" (RFC 9728`) {
		t.Errorf("a document for another resource: %+v %v", prm, err)
	}
	// No document at all: the origin stands in, in the 2025-03-26 layout.
	empty := httptest.NewServer(http.NotFoundHandler())
	defer empty.Close()
	u, _ = url.Parse(empty.URL + "/mcp")
	prm, published, legacy, err = resourceMetaOf(context.Background(), guarded(empty.Client(), nil), nil, u)
	if err != nil || published || !legacy || prm.AuthorizationServers[0] != empty.URL {
		t.Errorf("no document: %+v %v %v %v", prm, published, legacy, err)
	}
}
