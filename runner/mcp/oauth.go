package mcp

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/awlrun/awl/internal/atomicfile"
)

// OAuth is a server's "oauth" object in the config: how awl gets a token
// for an HTTP server that asks for OAuth 2.1 (a 401 with WWW-Authenticate).
// Without it, an HTTP server with no Authorization header still gets the
// authorization-code flow, with dynamic client registration.
type OAuth struct {
	// Grant is "authorization_code" (the default: `awl mcp login` once,
	// then stored tokens) or "client_credentials" (for CI: no person).
	Grant string
	// ClientID and ClientSecret are a pre-registered client. With
	// client_credentials, PrivateKey (PEM, PKCS#8 or SEC 1 or PKCS#1)
	// instead of ClientSecret authenticates with private_key_jwt, signed
	// with SigningAlgorithm (ES256 by default, or RS256).
	ClientID, ClientSecret string
	PrivateKey             string
	SigningAlgorithm       string
	// ClientMetadataURL is an HTTPS URL of a Client ID Metadata Document,
	// used as the client id where the server supports it.
	ClientMetadataURL string
	// Scopes, when set, replace the scopes the server asks for.
	Scopes []string
	// PrivateNetwork lets the URLs the server names (its metadata, its
	// authorization server's, and their redirects) be at private and
	// link-local addresses. Without it only the server's own host may.
	PrivateNetwork bool
	// IdP is the enterprise identity provider of the id_jag grant.
	IdP *IdP
}

// IdP is where the id_jag grant (SEP-990, enterprise-managed
// authorization) exchanges an ID token for an identity assertion
// authorization grant (ID-JAG, by RFC 8693 token exchange), which the MCP
// server's authorization server then takes for an access token (RFC 7523
// JWT bearer).
type IdP struct {
	// Issuer is found by metadata discovery; TokenEndpoint names the
	// token endpoint directly. One of the two.
	Issuer, TokenEndpoint string
	// ClientID and ClientSecret (optional) are awl's client at the IdP.
	ClientID, ClientSecret string
	// IDToken is the ID token the IdP issued for the person or workload
	// (a secret: from ${VAR}).
	IDToken string
}

// The grants of OAuth.Grant.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	GrantIDJAG             = "id_jag"
)

// Login lets the authorization-code flow run: awl prints the URL to Notify,
// runs Browser with it when set, and waits for the redirect on 127.0.0.1.
// Without it (a headless run) a server that needs a new authorization
// fails with a hint to run `awl mcp login`.
type Login struct {
	Browser string
	Notify  io.Writer
	// Fresh ignores stored tokens (awl mcp login).
	Fresh bool
}

// ErrLoginNeeded is why a headless run cannot reach a server that wants an
// OAuth authorization no stored token answers.
var ErrLoginNeeded = errors.New("the server wants OAuth authorization")

// oauthHandler returns the OAuth handler of an HTTP server, or nil when its
// config sends its own Authorization header.
func (s *server) oauthHandler() (oauthHandler, error) {
	for k := range s.cfg.Headers {
		if strings.EqualFold(k, "Authorization") {
			return nil, nil
		}
	}
	o := s.cfg.OAuth
	if o == nil {
		o = &OAuth{}
	}
	if o.Grant == GrantClientCredentials || o.Grant == GrantIDJAG {
		return &ccHandler{s: s, o: o}, nil
	}
	return s.authCodeHandler(o)
}

// authCodeHandler is the authorization-code flow (oauthcode.go), with
// awl's token store and redirect listener.
func (s *server) authCodeHandler(o *OAuth) (oauthHandler, error) {
	if u := o.ClientMetadataURL; u != "" {
		if pu, err := url.Parse(u); err != nil || pu.Scheme != "https" || strings.Trim(pu.Path, "/") == "" {
			return nil, fmt.Errorf("client_metadata_url %q: not an https URL with a path", u)
		}
	}
	redirect := "http://127.0.0.1/callback"
	login := s.m.opts.Login
	if login != nil {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("oauth redirect listener: %w", err)
		}
		s.redirectMu.Lock()
		s.redirect = ln
		s.redirectMu.Unlock()
		redirect = "http://" + ln.Addr().String() + "/callback"
	}
	h := &codeHandler{s: s, o: o, redirect: redirect, dcr: &clientMeta{
		ClientName:              "awl",
		RedirectURIs:            []string{redirect},
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: "none",
		// A loopback redirect is a native application's (RFC 8252).
		ApplicationType: "native",
	}}
	if login == nil || !login.Fresh {
		if st, err := s.loadTokens(); err == nil && st != nil {
			c := st.config()
			ctx := context.WithValue(context.Background(), oauth2.HTTPClient, s.plainHTTPClient())
			h.ts = s.storingSource(c, c.TokenSource(ctx, st.Token), st.Token)
			s.addSecret(st.Token.AccessToken, st.Token.RefreshToken)
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
func (s *server) fetchCode(ctx context.Context, authURL string) (*codeResult, error) {
	login := s.m.opts.Login
	s.redirectMu.Lock()
	ln := s.redirect
	s.redirectMu.Unlock()
	if login == nil || ln == nil {
		return nil, fmt.Errorf("%w: run `awl mcp login %s --mcp-config %s` once (it stores tokens that later runs use and refresh), or configure client credentials", ErrLoginNeeded, s.cfg.Name, s.cfg.File)
	}
	if login.Notify != nil {
		fmt.Fprintf(login.Notify, "awl: to authorize mcp server %s, open this URL in a browser:\n%s\n", s.cfg.Name, authURL)
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
		s.reopenRedirect()
		return r.res, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("no authorization arrived: %w", context.Cause(ctx))
	}
}

// reopenRedirect listens again on the redirect address after srv.Close
// closed the listener, unless the server was closed meanwhile.
func (s *server) reopenRedirect() {
	s.redirectMu.Lock()
	defer s.redirectMu.Unlock()
	if s.redirectClosed || s.redirect == nil {
		return
	}
	addr := s.redirect.Addr().String()
	for range 50 {
		if ln, err := net.Listen("tcp", addr); err == nil {
			s.redirect = ln
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// plainHTTPClient is the client for the authorization server: the
// configured transport, without the server's headers.
func (s *server) plainHTTPClient() *http.Client {
	if c := s.m.opts.HTTPClient; c != nil {
		return c
	}
	return &http.Client{Timeout: 30 * time.Second}
}

// addSecret keeps token values out of every error and message.
func (s *server) addSecret(vs ...string) {
	s.secretMu.Lock()
	defer s.secretMu.Unlock()
	for _, v := range vs {
		if v != "" && !slices.Contains(s.tokens, v) {
			s.tokens = append(s.tokens, v)
		}
	}
}

// storedTokens is what the token file holds: the token and what refreshing
// it takes.
type storedTokens struct {
	Server       string        `json:"server"`
	URL          string        `json:"url"`
	ClientID     string        `json:"client_id"`
	ClientSecret string        `json:"client_secret,omitempty"`
	AuthURL      string        `json:"auth_url"`
	TokenURL     string        `json:"token_url"`
	AuthStyle    int           `json:"auth_style"`
	Scopes       []string      `json:"scopes,omitempty"`
	Token        *oauth2.Token `json:"token"`
}

func (st *storedTokens) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID: st.ClientID, ClientSecret: st.ClientSecret, Scopes: st.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: st.AuthURL, TokenURL: st.TokenURL, AuthStyle: oauth2.AuthStyle(st.AuthStyle)},
	}
}

// TokenFile is where the tokens of the server named name at url are kept
// under dir.
func TokenFile(dir, name, url string) string {
	sum := sha256.Sum256([]byte(url))
	return filepath.Join(dir, name+"-"+hex.EncodeToString(sum[:6])+".json")
}

func (s *server) tokenFile() string {
	if s.m.opts.TokenDir == "" {
		return ""
	}
	return TokenFile(s.m.opts.TokenDir, s.cfg.Name, s.cfg.URL)
}

func (s *server) loadTokens() (*storedTokens, error) {
	p := s.tokenFile()
	if p == "" {
		return nil, nil
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st storedTokens
	if err := json.Unmarshal(b, &st); err != nil || st.Token == nil || st.URL != s.cfg.URL {
		return nil, fmt.Errorf("%s: not a token file of this server", p)
	}
	return &st, nil
}

// saveTokens writes the file at 0600 (its directory 0700), replacing it
// whole.
func (s *server) saveTokens(c *oauth2.Config, tok *oauth2.Token) error {
	p := s.tokenFile()
	if p == "" {
		return nil
	}
	st := storedTokens{Server: s.cfg.Name, URL: s.cfg.URL, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
		AuthURL: c.Endpoint.AuthURL, TokenURL: c.Endpoint.TokenURL, AuthStyle: int(c.Endpoint.AuthStyle), Scopes: c.Scopes, Token: tok}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(p, b, 0o600)
}

// storingSource stores each new token of ts (a refresh gives one).
func (s *server) storingSource(c *oauth2.Config, ts oauth2.TokenSource, first *oauth2.Token) oauth2.TokenSource {
	st := &storingSource{s: s, c: c, ts: ts}
	if first != nil {
		s.addSecret(first.AccessToken, first.RefreshToken)
		st.last = first.AccessToken
		if err := s.saveTokens(c, first); err != nil {
			s.m.warnf("mcp server %s: tokens not stored: %v", s.cfg.Name, err)
		}
	}
	return st
}

type storingSource struct {
	s    *server
	c    *oauth2.Config
	ts   oauth2.TokenSource
	mu   sync.Mutex
	last string
}

func (t *storingSource) Token() (*oauth2.Token, error) {
	tok, err := t.ts.Token()
	if err != nil {
		return nil, errors.New(t.s.redact(err.Error()))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if tok.AccessToken != t.last {
		t.last = tok.AccessToken
		t.s.addSecret(tok.AccessToken, tok.RefreshToken)
		if err := t.s.saveTokens(t.c, tok); err != nil {
			t.s.m.warnf("mcp server %s: refreshed tokens not stored: %v", t.s.cfg.Name, err)
		}
	}
	return tok, nil
}

// ccHandler gets tokens with the client-credentials grant, or with the
// id_jag grant (an ID-JAG from the IdP as a JWT bearer assertion): no
// person, no stored tokens; the client authenticates with client_secret
// (basic or post, as the server supports) or private_key_jwt.
type ccHandler struct {
	s *server
	o *OAuth
	tokens
}

func (h *ccHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	defer io.Copy(io.Discard, resp.Body)
	challenges, _ := parseChallenges(resp.Header.Values("WWW-Authenticate"))
	c := guarded(h.s.plainHTTPClient(), trustHosts(req.URL, h.o.PrivateNetwork))
	prm, err := discoverPRM(ctx, challenges, req.URL.String(), c)
	if err != nil {
		return err
	}
	asm, err := issuerMeta(ctx, c, prm.AuthorizationServers[0], false)
	if err != nil {
		return fmt.Errorf("authorization server metadata: %w", err)
	}
	if asm == nil {
		base := strings.TrimSuffix(prm.AuthorizationServers[0], "/")
		asm = &authServerMeta{Issuer: base, TokenEndpoint: base + "/token"}
	}
	scopes := h.o.Scopes
	if len(scopes) == 0 {
		scopes = challengeScopes(challenges)
	}
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {prm.Resource}}
	if h.o.Grant == GrantIDJAG {
		jag, err := h.idJAG(ctx, asm.Issuer, prm.Resource, scopes)
		if err != nil {
			return err
		}
		form = url.Values{"grant_type": {grantJWTBearer}, "assertion": {jag}}
	}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	treq, err := http.NewRequestWithContext(ctx, http.MethodPost, asm.TokenEndpoint, nil)
	if err != nil {
		return err
	}
	switch {
	case h.o.PrivateKey != "":
		jwt, err := clientAssertion(h.o, strings.TrimSuffix(asm.Issuer, "/"))
		if err != nil {
			return fmt.Errorf("private_key_jwt: %w", err)
		}
		h.s.addSecret(jwt)
		form.Set("client_id", h.o.ClientID)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", jwt)
	case h.o.ClientSecret == "":
		// A public client (possible with id_jag): the id alone.
		form.Set("client_id", h.o.ClientID)
	case slices.Contains(asm.TokenEndpointAuthMethodsSupported, "client_secret_post") && !slices.Contains(asm.TokenEndpointAuthMethodsSupported, "client_secret_basic"):
		form.Set("client_id", h.o.ClientID)
		form.Set("client_secret", h.o.ClientSecret)
	default:
		treq.SetBasicAuth(url.QueryEscape(h.o.ClientID), url.QueryEscape(h.o.ClientSecret))
	}
	body := form.Encode()
	treq.Body = io.NopCloser(strings.NewReader(body))
	treq.ContentLength = int64(len(body))
	treq.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	treq.Header.Set("Accept", "application/json")
	tresp, err := h.s.plainHTTPClient().Do(treq)
	if err != nil {
		return fmt.Errorf("token request: %w", err)
	}
	defer tresp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(tresp.Body, 1<<20))
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	json.Unmarshal(b, &tok)
	if tresp.StatusCode != http.StatusOK || tok.AccessToken == "" {
		return fmt.Errorf("token request: HTTP %d: %s %s", tresp.StatusCode, tok.Error, h.s.redact(tok.Description))
	}
	h.s.addSecret(tok.AccessToken)
	t := &oauth2.Token{AccessToken: tok.AccessToken, TokenType: "Bearer"}
	if tok.ExpiresIn > 0 {
		t.Expiry = time.Now().Add(time.Duration(tok.ExpiresIn) * time.Second)
	}
	h.set(oauth2.StaticTokenSource(t))
	return nil
}

const grantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// idJAG exchanges the configured ID token at the IdP's token endpoint for
// an ID-JAG (RFC 8693; SEP-990) whose audience is the MCP server's
// authorization server (its issuer) and whose resource is the server.
func (h *ccHandler) idJAG(ctx context.Context, issuer, resource string, scopes []string) (string, error) {
	idp := h.o.IdP
	c := h.s.plainHTTPClient()
	endpoint := idp.TokenEndpoint
	if endpoint == "" {
		meta, err := issuerMeta(ctx, c, idp.Issuer, false)
		if err != nil {
			return "", fmt.Errorf("identity provider metadata: %w", err)
		}
		if meta == nil || meta.TokenEndpoint == "" {
			return "", fmt.Errorf("identity provider %s: no metadata names a token endpoint", idp.Issuer)
		}
		endpoint = meta.TokenEndpoint
	}
	tok, err := exchangeToken(ctx, c, endpoint, idp.ClientID, idp.ClientSecret, tokenTypeIDJAG, issuer, resource, scopes, idp.IDToken, tokenTypeIDToken)
	if err != nil {
		return "", fmt.Errorf("token exchange at the identity provider: %s", h.s.redact(err.Error()))
	}
	if typ, _ := tok.Extra("issued_token_type").(string); typ != tokenTypeIDJAG {
		return "", fmt.Errorf("token exchange at the identity provider: issued %q, not an ID-JAG (%s)", typ, tokenTypeIDJAG)
	}
	h.s.addSecret(tok.AccessToken)
	return tok.AccessToken, nil
}

// discoverPRM finds the protected resource metadata (RFC 9728): the URL
// the challenge names, else the well-known URLs of the resource's path and
// of its root.
func discoverPRM(ctx context.Context, cs []challenge, resource string, c *http.Client) (*resourceMeta, error) {
	var urls []string
	if u := bearerOrAnyParam(cs, "resource_metadata"); u != "" {
		urls = append(urls, u)
	}
	u, err := url.Parse(resource)
	if err != nil {
		return nil, err
	}
	origin := u.Scheme + "://" + u.Host
	if p := strings.TrimSuffix(u.Path, "/"); p != "" {
		urls = append(urls, origin+"/.well-known/oauth-protected-resource"+p)
	}
	urls = append(urls, origin+"/.well-known/oauth-protected-resource")
	var last error
	for _, m := range urls {
		prm, err := resourceMetaAt(ctx, c, m, resource)
		if err == nil && prm != nil && len(prm.AuthorizationServers) > 0 {
			return prm, nil
		}
		if err == nil {
			err = fmt.Errorf("%s names no authorization server", m)
		}
		last = err
	}
	return nil, fmt.Errorf("protected resource metadata: %w", last)
}

func challengeScopes(cs []challenge) []string {
	return strings.Fields(bearerOrAnyParam(cs, "scope"))
}

// clientAssertion is the private_key_jwt assertion (RFC 7523): iss and sub
// the client id, aud the issuer, valid for five minutes.
func clientAssertion(o *OAuth, aud string) (string, error) {
	block, _ := pem.Decode([]byte(o.PrivateKey))
	if block == nil {
		return "", errors.New("the private key is not PEM")
	}
	var key any
	var err error
	if key, err = x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
		if key, err = x509.ParseECPrivateKey(block.Bytes); err != nil {
			if key, err = x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
				return "", errors.New("the private key is not PKCS#8, SEC 1 or PKCS#1")
			}
		}
	}
	alg := o.SigningAlgorithm
	if alg == "" {
		alg = "ES256"
		if _, ok := key.(*rsa.PrivateKey); ok {
			alg = "RS256"
		}
	}
	jti := make([]byte, 16)
	rand.Read(jti)
	now := time.Now()
	hdr, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{"iss": o.ClientID, "sub": o.ClientID, "aud": aud, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": hex.EncodeToString(jti)})
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(hdr) + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(input))
	var sig []byte
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if alg != "ES256" {
			return "", fmt.Errorf("an EC key signs ES256, not %s", alg)
		}
		r, s, err := ecdsa.Sign(rand.Reader, k, sum[:])
		if err != nil {
			return "", err
		}
		sig = make([]byte, 64)
		r.FillBytes(sig[:32])
		s.FillBytes(sig[32:])
	case *rsa.PrivateKey:
		if alg != "RS256" {
			return "", fmt.Errorf("an RSA key signs RS256, not %s", alg)
		}
		sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
		if err != nil {
			return "", err
		}
	default:
		return "", errors.New("the private key is neither EC nor RSA")
	}
	return input + "." + enc.EncodeToString(sig), nil
}
