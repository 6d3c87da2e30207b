package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/tidwall/gjson"
	"golang.org/x/oauth2"
)

// What the OAuth flows (code.go, grant.go) read and send around the
// token request: a 401's challenges (RFC 9110 section 11.6.1), protected
// resource metadata (RFC 9728), authorization server metadata (RFC 8414
// and OpenID Connect Discovery), dynamic client registration (RFC 7591)
// and token exchange (RFC 8693).
//
// Documents are read with gjson, by the exact names of their members:
// these names are case-sensitive, and encoding/json would take "ISSUER"
// for issuer (or the last of the two when both are there).

// maxDoc is the most a metadata or registration response may hold.
const maxDoc = 1 << 20

// authServerMeta is what awl uses of an authorization server's metadata.
type authServerMeta struct {
	Issuer                                     string
	AuthorizationEndpoint                      string
	TokenEndpoint                              string
	RegistrationEndpoint                       string
	ScopesSupported                            []string
	TokenEndpointAuthMethodsSupported          []string
	CodeChallengeMethodsSupported              []string
	ClientIDMetadataDocumentSupported          bool
	AuthorizationResponseIssParameterSupported bool
	DPoPSigningAlgValuesSupported              []string
}

// resourceMeta is what awl uses of protected resource metadata.
type resourceMeta struct {
	Resource             string
	AuthorizationServers []string
	ScopesSupported      []string
}

// challenge is one challenge of a WWW-Authenticate header: its scheme in
// lower case, its parameters by lower-case name.
type challenge struct {
	scheme  string
	token68 string
	params  map[string]string
}

// members reads a JSON object's members by name, checking their types.
// The first error sticks.
type members struct {
	obj gjson.Result
	err error
}

func (m *members) get(name string, want string, ok func(gjson.Result) bool) (gjson.Result, bool) {
	r := m.obj.Get(gjsonKey(name))
	if !r.Exists() || r.Type == gjson.Null {
		return r, false
	}
	if !ok(r) {
		if m.err == nil {
			m.err = fmt.Errorf("%s is not %s", name, want)
		}
		return r, false
	}
	return r, true
}

func (m *members) str(name string) string {
	r, ok := m.get(name, "a string", func(r gjson.Result) bool { return r.Type == gjson.String })
	if !ok {
		return ""
	}
	return r.Str
}

func (m *members) strs(name string) []string {
	r, ok := m.get(name, "an array of strings", func(r gjson.Result) bool {
		if !r.IsArray() {
			return false
		}
		all := true
		r.ForEach(func(_, v gjson.Result) bool {
			all = v.Type == gjson.String
			return all
		})
		return all
	})
	if !ok {
		return nil
	}
	var out []string
	for _, v := range r.Array() {
		out = append(out, v.Str)
	}
	return out
}

func (m *members) flag(name string) bool {
	r, ok := m.get(name, "true or false", func(r gjson.Result) bool { return r.Type == gjson.True || r.Type == gjson.False })
	return ok && r.Type == gjson.True
}

// gjsonKey escapes the characters a gjson path gives a meaning to.
func gjsonKey(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		switch c := name[i]; c {
		case '.', '*', '?', '|', '#', '@', '\\', '!', '=', '<', '>', '%':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// object parses a JSON object for members.
func object(b []byte) (*members, error) {
	if !gjson.ValidBytes(b) {
		return nil, errors.New("not JSON")
	}
	r := gjson.ParseBytes(b)
	if !r.IsObject() {
		return nil, errors.New("not a JSON object")
	}
	return &members{obj: r}, nil
}

func parseAuthServerMeta(b []byte) (*authServerMeta, error) {
	m, err := object(b)
	if err != nil {
		return nil, err
	}
	a := &authServerMeta{
		Issuer:                                     m.str("issuer"),
		AuthorizationEndpoint:                      m.str("authorization_endpoint"),
		TokenEndpoint:                              m.str("token_endpoint"),
		RegistrationEndpoint:                       m.str("registration_endpoint"),
		ScopesSupported:                            m.strs("scopes_supported"),
		TokenEndpointAuthMethodsSupported:          m.strs("token_endpoint_auth_methods_supported"),
		CodeChallengeMethodsSupported:              m.strs("code_challenge_methods_supported"),
		ClientIDMetadataDocumentSupported:          m.flag("client_id_metadata_document_supported"),
		AuthorizationResponseIssParameterSupported: m.flag("authorization_response_iss_parameter_supported"),
		DPoPSigningAlgValuesSupported:              m.strs("dpop_signing_alg_values_supported"),
	}
	if m.err != nil {
		return nil, m.err
	}
	for _, u := range []struct{ name, value string }{
		{"authorization_endpoint", a.AuthorizationEndpoint},
		{"token_endpoint", a.TokenEndpoint},
		{"registration_endpoint", a.RegistrationEndpoint},
	} {
		if u.value == "" {
			continue
		}
		if err := httpsOrLoopback(u.value); err != nil {
			return nil, fmt.Errorf("%s %s: %w", u.name, u.value, err)
		}
	}
	return a, nil
}

func parseResourceMeta(b []byte) (*resourceMeta, error) {
	m, err := object(b)
	if err != nil {
		return nil, err
	}
	r := &resourceMeta{
		Resource:             m.str("resource"),
		AuthorizationServers: m.strs("authorization_servers"),
		ScopesSupported:      m.strs("scopes_supported"),
	}
	if m.err != nil {
		return nil, m.err
	}
	for i, u := range r.AuthorizationServers {
		if err := httpsOrLoopback(u); err != nil {
			return nil, fmt.Errorf("authorization_servers[%d] %s: %w", i, u, err)
		}
	}
	return r, nil
}

// statusError is a document URL's answer other than 200.
type statusError struct{ code int }

func (e *statusError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.code, http.StatusText(e.code))
}

// fetchDoc gets one JSON document: a 200 with a JSON object of at most
// maxDoc bytes, as application/json. The URL must be https, or http to a
// loopback address.
func fetchDoc(ctx context.Context, c *http.Client, rawURL string) ([]byte, error) {
	if err := httpsOrLoopback(rawURL); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return nil, &statusError{resp.StatusCode}
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, fmt.Errorf("Content-Type %q, not application/json", resp.Header.Get("Content-Type"))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDoc+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxDoc {
		return nil, fmt.Errorf("over %d bytes", maxDoc)
	}
	return b, nil
}

// authServerMetaAt is the metadata at one URL: nil and no error when the
// URL answers 4xx (no metadata there).
func authServerMetaAt(ctx context.Context, c *http.Client, metaURL string) (*authServerMeta, error) {
	b, err := fetchDoc(ctx, c, metaURL)
	var se *statusError
	if errors.As(err, &se) && se.code >= 400 && se.code < 500 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", metaURL, err)
	}
	m, err := parseAuthServerMeta(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", metaURL, err)
	}
	return m, nil
}

// resourceMetaAt is the protected resource metadata at metaURL, which must
// name resource as its resource (RFC 9728 section 3.3); a document for
// another resource comes with the error.
func resourceMetaAt(ctx context.Context, c *http.Client, metaURL, resource string) (*resourceMeta, error) {
	b, err := fetchDoc(ctx, c, metaURL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", metaURL, err)
	}
	m, err := parseResourceMeta(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", metaURL, err)
	}
	if m.Resource != resource {
		// The document, with the error: the resource publishes metadata,
		// if not for this resource.
		return m, fmt.Errorf("%s names the resource %q, not %q (RFC 9728 section 3.3: not used)", metaURL, m.Resource, resource)
	}
	return m, nil
}

// guarded is c for the URLs a server names (its metadata, and wherever
// those redirect): the dialer refuses private, link-local, multicast,
// unspecified and shared (100.64/10) addresses, so that a server cannot
// point awl at the machines around it; loopback stays, for a server on
// this machine. A redirect may not go from https to http, nor into a
// loopback or non-public address, nor past 10 hops. A host trusted says
// true of (the configured server's own, or any with "private_network")
// may be at any address. A transport that is not an *http.Transport, that
// dials its own way or that goes through a proxy is kept as it is (the
// proxy decides).
func guarded(c *http.Client, trusted func(host string) bool) *http.Client {
	if trusted == nil {
		trusted = func(string) bool { return false }
	}
	g := &http.Client{Timeout: c.Timeout, Jar: c.Jar, Transport: c.Transport}
	base, _ := c.Transport.(*http.Transport)
	own := base != nil && (base.DialContext != nil || base.DialTLSContext != nil)
	if c.Transport == nil {
		// The default transport's dialer is the standard one.
		base, _ = http.DefaultTransport.(*http.Transport)
	}
	if base != nil && !own && !proxied(base) {
		t := base.Clone()
		t.DialContext = guardedDial(trusted)
		g.Transport = t
	}
	g.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if c.CheckRedirect != nil {
			return c.CheckRedirect(req, via)
		}
		if len(via) >= 10 {
			return errors.New("more than 10 redirects")
		}
		if via[len(via)-1].URL.Scheme == "https" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirect from https to %s refused", req.URL.Scheme)
		}
		if trusted(req.URL.Hostname()) {
			return nil
		}
		return redirectTarget(req.Context(), req.URL.Hostname())
	}
	return g
}

// guardedDial dials a trusted host's addresses as they are, and any
// other host's only when they are public (dialPublic).
func guardedDial(trusted func(host string) bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	plain := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	public := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: dialPublic}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, _, err := net.SplitHostPort(addr); err == nil && trusted(host) {
			return plain.DialContext(ctx, network, addr)
		}
		return public.DialContext(ctx, network, addr)
	}
}

// trustHosts is what guarded trusts for the server at serverURL: its own
// host, or every host with private.
func trustHosts(serverURL *url.URL, private bool) func(string) bool {
	own := strings.ToLower(serverURL.Hostname())
	return func(host string) bool {
		return private || strings.ToLower(strings.Trim(host, "[]")) == own
	}
}

// proxied reports whether t sends requests through a proxy.
func proxied(t *http.Transport) bool {
	if t.Proxy == nil {
		return false
	}
	u, err := t.Proxy(&http.Request{URL: &url.URL{Scheme: "https", Host: "example.com"}})
	return err == nil && u != nil
}

// dialPublic is the dialer's check of each address it connects to.
func dialPublic(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("dial %s: not an IP address", address)
	}
	if nonPublic(ip) {
		return fmt.Errorf("dial %s: a non-public address, refused for a URL the server named", address)
	}
	return nil
}

// sharedSpace is 100.64.0.0/10, the shared address space of carrier-grade
// NAT (RFC 6598). A function: a prefix held in a package variable costs
// every start of awl an initialiser.
func sharedSpace() netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{100, 64, 0, 0}), 10)
}

// nonPublic reports a private, link-local, multicast, unspecified or
// shared address (not loopback).
func nonPublic(ip netip.Addr) bool {
	ip = ip.Unmap()
	return !ip.IsValid() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsMulticast() || ip.IsUnspecified() || sharedSpace().Contains(ip)
}

// redirectTarget refuses a redirect into a loopback or non-public address
// (what the host resolves to, for a name).
func redirectTarget(ctx context.Context, host string) error {
	check := func(ip netip.Addr) error {
		if ip.Unmap().IsLoopback() || nonPublic(ip) {
			return fmt.Errorf("redirect to %s (%s) refused", host, ip)
		}
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return check(ip)
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("redirect to %s: %w", host, err)
	}
	for _, ip := range ips {
		if err := check(ip); err != nil {
			return err
		}
	}
	return nil
}

// parseChallenges reads WWW-Authenticate headers: challenges separated by
// commas, each a scheme and then a token68 or auth-params (name=token or
// name="quoted string").
func parseChallenges(headers []string) ([]challenge, error) {
	var out []challenge
	for _, h := range headers {
		i := skip(h, 0, ", \t")
		for i < len(h) {
			scheme, j := token(h, i)
			if scheme == "" {
				return nil, fmt.Errorf("%q: no auth scheme at %q", h, h[i:])
			}
			c := challenge{scheme: strings.ToLower(scheme), params: map[string]string{}}
			i = skip(h, j, " \t")
			if i < len(h) && h[i] != ',' && !isParam(h, i) {
				if c.token68, i = token68(h, i); c.token68 == "" {
					return nil, fmt.Errorf("%q: unexpected %q", h, h[i:])
				}
				if i = skip(h, i, " \t"); i < len(h) && h[i] != ',' {
					return nil, fmt.Errorf("%q: unexpected %q", h, h[i:])
				}
			}
			for {
				j := skip(h, i, ", \t")
				if j == len(h) || !isParam(h, j) {
					i = j
					break
				}
				name, value, k, err := param(h, j)
				if err != nil {
					return nil, fmt.Errorf("%q: %v", h, err)
				}
				name = strings.ToLower(name)
				if _, dup := c.params[name]; !dup {
					c.params[name] = value
				}
				if i = skip(h, k, " \t"); i < len(h) && h[i] != ',' {
					return nil, fmt.Errorf("%q: no comma before %q", h, h[i:])
				}
			}
			out = append(out, c)
		}
	}
	return out, nil
}

func skip(s string, i int, set string) int {
	for i < len(s) && strings.IndexByte(set, s[i]) >= 0 {
		i++
	}
	return i
}

// isTchar is RFC 9110's tchar.
func isTchar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func token(s string, i int) (string, int) {
	j := i
	for j < len(s) && isTchar(s[j]) {
		j++
	}
	return s[i:j], j
}

func token68(s string, i int) (string, int) {
	j := i
	for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9' || strings.IndexByte("-._~+/", s[j]) >= 0) {
		j++
	}
	if j == i {
		return "", i
	}
	for j < len(s) && s[j] == '=' {
		j++
	}
	return s[i:j], j
}

// isParam reports whether an auth-param (name = value) starts at i.
func isParam(s string, i int) bool {
	name, j := token(s, i)
	if name == "" {
		return false
	}
	if j = skip(s, j, " \t"); j == len(s) || s[j] != '=' {
		return false
	}
	j = skip(s, j+1, " \t")
	return j < len(s) && (s[j] == '"' || isTchar(s[j]))
}

func param(s string, i int) (name, value string, next int, err error) {
	name, i = token(s, i)
	i = skip(s, i, " \t")
	i = skip(s, i+1, " \t") // the '=' isParam saw
	if s[i] != '"' {
		value, i = token(s, i)
		return name, value, i, nil
	}
	var b strings.Builder
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '"':
			return name, b.String(), i + 1, nil
		default:
			b.WriteByte(s[i])
		}
	}
	return "", "", 0, fmt.Errorf("parameter %s: unterminated quoted string", name)
}

// bearerParam is a parameter of the first Bearer challenge that has it.
func bearerParam(cs []challenge, name string) string {
	for _, c := range cs {
		if v := c.params[name]; c.scheme == "bearer" && v != "" {
			return v
		}
	}
	return ""
}

// clientMeta is what awl registers (RFC 7591 section 2).
type clientMeta struct {
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	ApplicationType         string   `json:"application_type"`
}

// registration is what registration gave: the client's id, secret and
// token endpoint authentication method.
type registration struct {
	ClientID, ClientSecret, AuthMethod string
}

// registerClient registers meta at endpoint (RFC 7591 section 3).
func registerClient(ctx context.Context, c *http.Client, endpoint string, meta *clientMeta) (*registration, error) {
	body, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDoc+1))
	if err != nil {
		return nil, err
	}
	m, perr := object(b)
	if len(b) > maxDoc {
		m, perr = nil, fmt.Errorf("over %d bytes", maxDoc)
	}
	switch {
	case resp.StatusCode == http.StatusCreated || resp.StatusCode == http.StatusOK:
		if perr != nil {
			return nil, fmt.Errorf("%s: HTTP %d %s: %v", endpoint, resp.StatusCode, http.StatusText(resp.StatusCode), perr)
		}
		r := &registration{ClientID: m.str("client_id"), ClientSecret: m.str("client_secret"), AuthMethod: m.str("token_endpoint_auth_method")}
		if m.err != nil {
			return nil, fmt.Errorf("%s: %v", endpoint, m.err)
		}
		if r.ClientID == "" {
			return nil, fmt.Errorf("%s: the response names no client_id", endpoint)
		}
		return r, nil
	case perr == nil && m.str("error") != "":
		return nil, fmt.Errorf("%s: HTTP %d %s: %s %s", endpoint, resp.StatusCode, http.StatusText(resp.StatusCode), m.str("error"), m.str("error_description"))
	}
	return nil, fmt.Errorf("%s: HTTP %d %s", endpoint, resp.StatusCode, http.StatusText(resp.StatusCode))
}

// The token types and grant of RFC 8693 and SEP-990.
const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeIDJAG     = "urn:ietf:params:oauth:token-type:id-jag"
	tokenTypeIDToken   = "urn:ietf:params:oauth:token-type:id_token"
)

// exchangeToken asks endpoint for a token of type want for subject (an ID
// token) with audience, resource and scopes (RFC 8693 section 2.1), the
// client authenticating with its id and secret in the form.
func exchangeToken(ctx context.Context, c *http.Client, endpoint, clientID, clientSecret, want, audience, resource string, scopes []string, subject, subjectType string) (*oauth2.Token, error) {
	cfg := &oauth2.Config{ClientID: clientID, ClientSecret: clientSecret,
		Endpoint: oauth2.Endpoint{TokenURL: endpoint, AuthStyle: oauth2.AuthStyleInParams}}
	opts := []oauth2.AuthCodeOption{
		oauth2.SetAuthURLParam("grant_type", grantTokenExchange),
		oauth2.SetAuthURLParam("requested_token_type", want),
		oauth2.SetAuthURLParam("audience", audience),
		oauth2.SetAuthURLParam("resource", resource),
		oauth2.SetAuthURLParam("subject_token", subject),
		oauth2.SetAuthURLParam("subject_token_type", subjectType),
	}
	if len(scopes) > 0 {
		opts = append(opts, oauth2.SetAuthURLParam("scope", strings.Join(scopes, " ")))
	}
	// Exchange sends an empty code, which RFC 6749 section 3.2 has the
	// server ignore.
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, c), "", opts...)
	if err != nil {
		return nil, err
	}
	if typ, _ := tok.Extra("issued_token_type").(string); typ == "" {
		return nil, errors.New("the response names no issued_token_type")
	}
	return tok, nil
}
