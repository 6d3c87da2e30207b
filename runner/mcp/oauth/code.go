package oauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// codeHandler is the authorization-code flow of the MCP authorization
// spec: the protected resource metadata (RFC 9728) names the
// authorization server, whose metadata (RFC 8414) names its endpoints;
// the client is a Client ID Metadata Document, the pre-registered client
// or a dynamic registration (RFC 7591); PKCE S256, the resource parameter
// (RFC 8707) and the issuer of the response (RFC 9207) guard the code;
// a 403 with insufficient_scope authorizes again with the scopes granted
// so far and the new ones (step-up).
//
// A server without protected resource metadata is in the 2025-03-26
// layout: its origin (the URL without its path) is the authorization
// server, with metadata at origin/.well-known/oauth-authorization-server
// or, with none, the endpoints /authorize, /token and /register. A server
// whose endpoints live under a path on that origin publishes there an
// issuer with that path (origin/oauth). RFC 8414 section 3.3 says the
// issuer "MUST be identical to the authorization server's issuer
// identifier value into which the well-known URI string was inserted";
// read strictly that is the origin. awl accepts it only when the issuer
// is on the server's own origin, and only in this layout. The check is
// the defence against mix-up (section 6.2): metadata fetched from one
// authority that claims to be another. A document at the origin's own
// well-known path naming an issuer on that same origin claims nothing
// about another authority (whoever serves the origin's root serves its
// paths too), so the defence loses nothing. An issuer on any other origin
// is refused, and wherever protected resource metadata names the
// authorization server the strict check stands.
type codeHandler struct {
	env         *Env
	o           *Config
	redirect    redirect
	redirectURL string
	dcr         *clientMeta

	tokens
	mu      sync.Mutex
	granted map[string][]string // scopes granted so far, by issuer
	dpop    *dpopKey            // the key the tokens are bound to; nil for bearer tokens
}

// Proof is the DPoP proof of a request to the MCP server with the access
// token (RFC 9449 section 7); "" for bearer tokens.
func (h *codeHandler) Proof(method string, u *url.URL, accessToken string) (string, error) {
	h.mu.Lock()
	key := h.dpop
	h.mu.Unlock()
	if key == nil {
		return "", nil
	}
	return key.proof(method, u, accessToken)
}

// Nonce keeps the DPoP nonce a 401 of the MCP server asks for, and reports
// whether the request should go again with it.
func (h *codeHandler) Nonce(resp *http.Response) bool {
	h.mu.Lock()
	key := h.dpop
	h.mu.Unlock()
	return key != nil && key.noteNonce(resp, nil)
}

// Close closes the redirect listener for good.
func (h *codeHandler) Close() { h.redirect.close() }

func (h *codeHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	defer io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	challenges, err := parseChallenges(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return fmt.Errorf("the server's WWW-Authenticate: %v", err)
	}
	if resp.StatusCode == http.StatusForbidden && bearerParam(challenges, "error") != "insufficient_scope" {
		// Not a question of scope: sent again, the request fails with
		// the server's answer.
		return nil
	}
	c := guarded(h.env.client(), trustHosts(req.URL, h.o.PrivateNetwork))
	prm, published, legacy, err := resourceMetaOf(ctx, c, challenges, req.URL)
	if err != nil {
		return fmt.Errorf("protected resource metadata: %w", err)
	}
	if published && len(prm.AuthorizationServers) == 0 {
		return errors.New("protected resource metadata: no authorization server named")
	}
	issuer := prm.AuthorizationServers[0]
	asm, err := issuerMeta(ctx, c, issuer, legacy)
	if err != nil {
		return fmt.Errorf("authorization server metadata: %w", err)
	}
	switch {
	case asm == nil:
		// 2025-03-26, without metadata: the default endpoints.
		base := strings.TrimSuffix(issuer, "/")
		asm = &authServerMeta{Issuer: issuer, AuthorizationEndpoint: base + "/authorize", TokenEndpoint: base + "/token", RegistrationEndpoint: base + "/register"}
	case !slices.Contains(asm.CodeChallengeMethodsSupported, "S256"):
		return fmt.Errorf("the authorization server %s does not list PKCE S256", asm.Issuer)
	case asm.AuthorizationEndpoint == "" || asm.TokenEndpoint == "":
		return fmt.Errorf("the metadata of %s names no authorization or token endpoint", asm.Issuer)
	}
	return h.authorize(ctx, asm, prm, challenges)
}

// resourceMetaOf is the server's protected resource metadata, from the URL
// its challenge names, else the well-known URL of its path, else the one
// of its origin (for the origin as the resource). When none answers with
// any document, the origin stands in as the authorization server, and
// legacy says whether the server is in the 2025-03-26 layout (it names no
// metadata either). A document for another resource is not used (RFC
// 9728 section 3.3), and when no document is for this one that is the
// error: the reason the server cannot be authorized, where guessing the
// origin's endpoints would only fail further on, at a /register the MCP
// server does not have.
func resourceMetaOf(ctx context.Context, c *http.Client, cs []challenge, server *url.URL) (prm *resourceMeta, published, legacy bool, err error) {
	origin := server.Scheme + "://" + server.Host
	type try struct{ url, resource string }
	var tries []try
	named := bearerOrAnyParam(cs, "resource_metadata")
	if named != "" {
		tries = append(tries, try{named, server.String()})
	}
	atPath := origin + "/.well-known/oauth-protected-resource/" + strings.TrimLeft(server.EscapedPath(), "/")
	if server.RawQuery != "" {
		// RFC 9728 section 3.1: a query stays after the path.
		atPath += "?" + server.RawQuery
	}
	tries = append(tries, try{atPath, server.String()},
		try{origin + "/.well-known/oauth-protected-resource", origin})
	var mismatch error
	for _, t := range tries {
		m, err := resourceMetaAt(ctx, c, t.url, t.resource)
		if err == nil {
			return m, true, false, nil
		}
		if m != nil && mismatch == nil {
			mismatch = err
		}
	}
	if mismatch != nil {
		return nil, false, false, mismatch
	}
	return &resourceMeta{AuthorizationServers: []string{origin}, Resource: server.String()}, false, named == "", nil
}

// bearerOrAnyParam is a parameter of any challenge, a Bearer one first.
func bearerOrAnyParam(cs []challenge, name string) string {
	if v := bearerParam(cs, name); v != "" {
		return v
	}
	for _, c := range cs {
		if v := c.params[name]; v != "" {
			return v
		}
	}
	return ""
}

// authorize runs the flow with the authorization server of asm for the
// resource of prm.
func (h *codeHandler) authorize(ctx context.Context, asm *authServerMeta, prm *resourceMeta, challenges []challenge) error {
	c := h.env.client()
	cfg := &oauth2.Config{
		Endpoint:    oauth2.Endpoint{AuthURL: asm.AuthorizationEndpoint, TokenURL: asm.TokenEndpoint},
		RedirectURL: h.redirectURL,
	}
	switch {
	case h.o.ClientMetadataURL != "" && asm.ClientIDMetadataDocumentSupported:
		cfg.ClientID = h.o.ClientMetadataURL
	case h.o.ClientID != "":
		cfg.ClientID, cfg.ClientSecret = h.o.ClientID, h.o.ClientSecret
		cfg.Endpoint.AuthStyle = authStyle(asm.TokenEndpointAuthMethodsSupported)
	case asm.RegistrationEndpoint != "":
		reg, err := registerClient(ctx, c, asm.RegistrationEndpoint, h.dcr)
		if err != nil {
			return fmt.Errorf("client registration: %s", h.env.redact(err.Error()))
		}
		cfg.ClientID, cfg.ClientSecret = reg.ClientID, reg.ClientSecret
		h.env.secret(reg.ClientSecret)
		method := reg.AuthMethod
		if method == "" {
			// The server kept what awl asked for (RFC 7591 section 3.2.1).
			method = h.dcr.TokenEndpointAuthMethod
		}
		cfg.Endpoint.AuthStyle = authStyle([]string{method})
	default:
		return fmt.Errorf("authorization server %s: no client registration awl can use (configure a client_id)", asm.Issuer)
	}
	if cfg.ClientSecret == "" {
		// A public client sends its id in the form.
		cfg.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	}
	cfg.Scopes = h.scopes(asm, prm, challenges)
	var key *dpopKey
	if slices.Contains(asm.DPoPSigningAlgValuesSupported, "ES256") {
		var err error
		if key, err = newDPoPKey(); err != nil {
			return fmt.Errorf("DPoP key: %w", err)
		}
		h.env.secret(key.pem())
		c = dpopClient(c, key)
	}
	verifier, state := oauth2.GenerateVerifier(), rand.Text()
	res, err := h.fetchCode(ctx, cfg.AuthCodeURL(state,
		oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", prm.Resource)))
	if err != nil {
		return err
	}
	switch {
	case res.State != state:
		return errors.New("authorization response: state mismatch")
	case res.Iss != "" && res.Iss != asm.Issuer:
		// RFC 9207 section 2.4: simple string comparison, no
		// normalization (not even of a trailing slash).
		return fmt.Errorf("authorization response issuer %q is not %q (RFC 9207: compared exactly)", res.Iss, asm.Issuer)
	case res.Iss == "" && asm.AuthorizationResponseIssParameterSupported:
		return errors.New("authorization response without the iss its server advertises (RFC 9207)")
	}
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, c), res.Code,
		oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", prm.Resource))
	if err != nil {
		return fmt.Errorf("token request: %s", h.env.redact(err.Error()))
	}
	granted := cfg.Scopes
	if s, ok := tok.Extra("scope").(string); ok {
		granted = strings.Fields(s)
	}
	refresh := context.WithValue(context.Background(), oauth2.HTTPClient, c)
	ts := h.env.storingSource(cfg, cfg.TokenSource(refresh, tok), tok, key)
	h.set(ts)
	h.mu.Lock()
	h.dpop = key
	if h.granted == nil {
		h.granted = map[string][]string{}
	}
	h.granted[asm.Issuer] = granted
	h.mu.Unlock()
	return nil
}

// scopes are what awl asks for: the configured scopes, else the
// challenge's, else those the resource supports; offline_access where the
// server supports it (for a refresh token); and every scope granted
// before, so that a step-up loses none.
func (h *codeHandler) scopes(asm *authServerMeta, prm *resourceMeta, challenges []challenge) []string {
	scopes := slices.Clone(h.o.Scopes)
	if len(scopes) == 0 {
		scopes = strings.Fields(bearerParam(challenges, "scope"))
	}
	if len(scopes) == 0 {
		scopes = slices.Clone(prm.ScopesSupported)
	}
	if slices.Contains(asm.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(scopes, "offline_access")
	}
	h.mu.Lock()
	before := h.granted[asm.Issuer]
	h.mu.Unlock()
	out := slices.Clone(before)
	for _, s := range scopes {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// authStyle is how the client authenticates at the token endpoint, from
// the methods the server supports (or the one registration gave):
// client_secret_post first, as OAuth 2.1 prefers.
func authStyle(methods []string) oauth2.AuthStyle {
	switch {
	case slices.Contains(methods, "client_secret_post"):
		return oauth2.AuthStyleInParams
	case slices.Contains(methods, "client_secret_basic"):
		return oauth2.AuthStyleInHeader
	case slices.Contains(methods, "none"):
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleAutoDetect
}

// authCodeHandler is the authorization-code flow (code.go), with awl's
// token store and redirect listener.
func authCodeHandler(o *Config, env *Env) (Handler, error) {
	if u := o.ClientMetadataURL; u != "" {
		if pu, err := url.Parse(u); err != nil || pu.Scheme != "https" || strings.Trim(pu.Path, "/") == "" {
			return nil, fmt.Errorf("client_metadata_url %q: not an https URL with a path", u)
		}
	}
	redirect := "http://127.0.0.1/callback"
	h := &codeHandler{env: env, o: o}
	if env.Login != nil {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("oauth redirect listener: %w", err)
		}
		h.redirect.ln = ln
		redirect = "http://" + ln.Addr().String() + "/callback"
	}
	h.redirectURL = redirect
	h.dcr = &clientMeta{
		ClientName:              "awl",
		RedirectURIs:            []string{redirect},
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: "none",
		// A loopback redirect is a native application's (RFC 8252).
		ApplicationType: "native",
	}
	if env.Login == nil || !env.Login.Fresh {
		if st, err := env.loadTokens(); err == nil && st != nil {
			c := st.config()
			client := env.client()
			if st.DPoPKey != "" {
				key, err := parseDPoPKey(st.DPoPKey)
				if err != nil {
					return h, nil // tokens bound to a key that is lost: authorize again
				}
				env.secret(st.DPoPKey)
				h.dpop = key
				client = dpopClient(client, key)
			}
			ctx := context.WithValue(context.Background(), oauth2.HTTPClient, client)
			h.ts = env.storingSource(c, c.TokenSource(ctx, st.Token), st.Token, h.dpop)
			env.secret(st.Token.AccessToken, st.Token.RefreshToken)
		}
	}
	return h, nil
}

// codeResult is what the redirect brought.
type codeResult struct {
	Code, State, Iss string
}

// fetchCode gets an authorization code: the URL goes to the person, the
// code comes back to the redirect listener.
func (h *codeHandler) fetchCode(ctx context.Context, authURL string) (*codeResult, error) {
	login := h.env.Login
	h.redirect.mu.Lock()
	ln := h.redirect.ln
	h.redirect.mu.Unlock()
	if login == nil || ln == nil {
		cmd := h.env.LoginCommand
		if cmd == "" {
			cmd = fmt.Sprintf("awl mcp login %s --mcp-config %s", h.env.Name, h.env.File)
		}
		return nil, fmt.Errorf("%w: run `%s` once (it stores tokens that later runs use and refresh), or configure client credentials", ErrLoginNeeded, cmd)
	}
	if login.Notify != nil {
		fmt.Fprintf(login.Notify, "awl: to authorize mcp server %s, open this URL in a browser:\n%s\n", h.env.Name, authURL)
	}
	type result struct {
		res *codeResult
		err error
	}
	got := make(chan result, 1)
	send := func(r result) func() {
		return func() {
			select {
			case got <- r:
			default:
			}
		}
	}
	srv := serveCallback(ln, func(q url.Values) (string, func()) {
		if e := q.Get("error"); e != "" {
			return "Authorization failed; you may close this page.\n",
				send(result{err: fmt.Errorf("the authorization server answered %s: %s", e, q.Get("error_description"))})
		}
		return "awl is authorized; you may close this page.\n",
			send(result{res: &codeResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}})
	})
	defer srv.close()
	if login.Browser != "" {
		cmd := exec.CommandContext(ctx, login.Browser, authURL)
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		if err := cmd.Start(); err == nil {
			go cmd.Wait()
		} else if login.Notify != nil {
			fmt.Fprintf(login.Notify, "awl: $BROWSER did not start (%v); open the URL yourself\n", err)
		}
	}
	select {
	case r := <-got:
		// The page was sent before the result: closing now cuts no reply.
		// It closes the listener; a later authorization (step-up) serves
		// it again.
		srv.close()
		h.redirect.reopen()
		return r.res, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("no authorization arrived: %w", context.Cause(ctx))
	}
}

// redirect is the OAuth redirect listener (with Env.Login); once closed,
// it is not opened again.
type redirect struct {
	mu     sync.Mutex
	ln     net.Listener
	closed bool
}

// reopen listens again on the redirect address after the callback server
// closed the listener, unless the handler was closed meanwhile.
func (r *redirect) reopen() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.ln == nil {
		return
	}
	addr := r.ln.Addr().String()
	for range 50 {
		if ln, err := net.Listen("tcp", addr); err == nil {
			r.ln = ln
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *redirect) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.ln != nil {
		r.ln.Close()
	}
}
