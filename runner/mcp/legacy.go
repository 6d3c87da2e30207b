package mcp

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// codeHandler is the authorization-code flow: go-sdk's handler, and awl's
// own flow for one layout of the 2025-03-26 authorization spec that
// go-sdk refuses.
//
// In 2025-03-26 a server has no protected-resource metadata: its origin
// (the URL without its path) is the "authorization base URL", and its
// metadata is at origin/.well-known/oauth-authorization-server. A server
// whose authorization endpoints live under a path on that origin publishes
// there an issuer with that path (origin/oauth). RFC 8414 section 3.3 says
// the issuer "MUST be identical to the authorization server's issuer
// identifier value into which the well-known URI string was inserted";
// read strictly that is the origin, and go-sdk refuses the document.
//
// awl accepts it only when the issuer is on the server's own origin. The
// check is the defence against mix-up (section 6.2): metadata fetched from
// one authority that claims to be another. A document at the origin's own
// well-known path naming an issuer on that same origin claims nothing
// about another authority (whoever serves the origin's root serves its
// paths too), so the defence loses nothing. An issuer on any other origin
// is refused, and wherever protected-resource metadata names the
// authorization server (2025-06-18 on) go-sdk's strict check stands.
type codeHandler struct {
	sdk      *auth.AuthorizationCodeHandler
	s        *server
	o        *OAuth
	redirect string
	dcr      *oauthex.ClientRegistrationMetadata

	mu sync.Mutex
	ts oauth2.TokenSource // from awl's own flow
}

func (h *codeHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	ts := h.ts
	h.mu.Unlock()
	if ts != nil {
		return ts, nil
	}
	return h.sdk.TokenSource(ctx)
}

func (h *codeHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	hdr := resp.Header.Values("WWW-Authenticate")
	status := resp.StatusCode
	err := h.sdk.Authorize(ctx, req, resp)
	if err == nil || errors.Is(err, ErrLoginNeeded) || ctx.Err() != nil || status != http.StatusUnauthorized {
		return err
	}
	challenges, _ := oauthex.ParseWWWAuthenticate(hdr)
	asm, lerr := h.legacyMeta(ctx, challenges, req.URL)
	if lerr != nil {
		return fmt.Errorf("%w (%v)", err, lerr)
	}
	if asm == nil {
		return err
	}
	return h.legacyAuthorize(ctx, asm, req.URL.String(), challenges)
}

// legacyMeta is the metadata of the 2025-03-26 layout above, or nil when
// the server is not in it: it names protected-resource metadata, or its
// origin has no metadata, or the metadata's issuer is the origin (which
// go-sdk takes). An issuer on another origin is an error.
func (h *codeHandler) legacyMeta(ctx context.Context, challenges []oauthex.Challenge, server *url.URL) (*oauthex.AuthServerMeta, error) {
	for _, ch := range challenges {
		if ch.Params["resource_metadata"] != "" {
			return nil, nil
		}
	}
	c := h.s.plainHTTPClient()
	if _, err := discoverPRM(ctx, nil, server.String(), c); err == nil {
		return nil, nil
	}
	origin := server.Scheme + "://" + server.Host
	m, err := fetchMeta(ctx, c, origin+"/.well-known/oauth-authorization-server")
	if err != nil || m == nil || sameIssuer(m.Issuer, origin) {
		return nil, err
	}
	iu, err := url.Parse(m.Issuer)
	if err != nil || iu.Scheme+"://"+iu.Host != origin || iu.RawQuery != "" || iu.Fragment != "" {
		return nil, fmt.Errorf("the metadata at %s/.well-known/oauth-authorization-server names the issuer %q, not on that origin: refused (RFC 8414 section 3.3)", origin, m.Issuer)
	}
	if !slices.Contains(m.CodeChallengeMethodsSupported, "S256") {
		return nil, fmt.Errorf("the authorization server %s does not list PKCE S256", m.Issuer)
	}
	if m.AuthorizationEndpoint == "" || m.TokenEndpoint == "" {
		return nil, fmt.Errorf("the metadata of %s names no authorization or token endpoint", m.Issuer)
	}
	return m, nil
}

// legacyAuthorize runs the authorization-code flow with asm as go-sdk
// would: a Client ID Metadata Document, the pre-registered client or
// dynamic registration; PKCE S256; the resource parameter; the issuer of
// the authorization response checked (RFC 9207); tokens stored.
func (h *codeHandler) legacyAuthorize(ctx context.Context, asm *oauthex.AuthServerMeta, resource string, challenges []oauthex.Challenge) error {
	c := h.s.plainHTTPClient()
	cfg := &oauth2.Config{
		Endpoint:    oauth2.Endpoint{AuthURL: asm.AuthorizationEndpoint, TokenURL: asm.TokenEndpoint},
		RedirectURL: h.redirect,
	}
	switch {
	case h.o.ClientMetadataURL != "" && asm.ClientIDMetadataDocumentSupported:
		cfg.ClientID = h.o.ClientMetadataURL
	case h.o.ClientID != "":
		cfg.ClientID, cfg.ClientSecret = h.o.ClientID, h.o.ClientSecret
		cfg.Endpoint.AuthStyle = authStyle(asm.TokenEndpointAuthMethodsSupported)
	case asm.RegistrationEndpoint != "":
		reg, err := oauthex.RegisterClient(ctx, asm.RegistrationEndpoint, h.dcr, c)
		if err != nil {
			return fmt.Errorf("client registration: %s", h.s.redact(err.Error()))
		}
		cfg.ClientID, cfg.ClientSecret = reg.ClientID, reg.ClientSecret
		h.s.addSecret(reg.ClientSecret)
		method := reg.TokenEndpointAuthMethod
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
	cfg.Scopes = h.o.Scopes
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = challengeScopes(challenges)
	}
	if slices.Contains(asm.ScopesSupported, "offline_access") && !slices.Contains(cfg.Scopes, "offline_access") {
		cfg.Scopes = append(slices.Clone(cfg.Scopes), "offline_access")
	}
	verifier, state := oauth2.GenerateVerifier(), rand.Text()
	res, err := h.s.fetchCode(ctx, &auth.AuthorizationArgs{URL: cfg.AuthCodeURL(state,
		oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource))})
	if err != nil {
		return err
	}
	switch {
	case res.State != state:
		return errors.New("authorization response: state mismatch")
	case res.Iss != "" && res.Iss != asm.Issuer:
		return fmt.Errorf("authorization response issuer %q is not %q", res.Iss, asm.Issuer)
	case res.Iss == "" && asm.AuthorizationResponseIssParameterSupported:
		return errors.New("authorization response without the iss its server advertises (RFC 9207)")
	}
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, c), res.Code,
		oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		return fmt.Errorf("token request: %s", h.s.redact(err.Error()))
	}
	refresh := context.WithValue(context.Background(), oauth2.HTTPClient, c)
	ts := h.s.storingSource(cfg, cfg.TokenSource(refresh, tok), tok)
	h.mu.Lock()
	h.ts = ts
	h.mu.Unlock()
	return nil
}

// authStyle is how the client authenticates at the token endpoint, from
// the methods the server supports (or the one registration gave).
func authStyle(methods []string) oauth2.AuthStyle {
	switch {
	case slices.Contains(methods, "client_secret_basic"):
		return oauth2.AuthStyleInHeader
	case slices.Contains(methods, "client_secret_post"), slices.Contains(methods, "none"):
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleAutoDetect
}
