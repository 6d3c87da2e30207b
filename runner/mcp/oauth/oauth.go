// Package oauth gets the tokens of MCP servers that ask for OAuth 2.1, as
// the MCP authorization spec describes: discovery of the protected
// resource's and the authorization server's metadata, dynamic client
// registration, the authorization-code flow with PKCE and its redirect
// listener, client credentials (a secret or private_key_jwt), the id_jag
// grant of enterprise-managed authorization, and the file the tokens are
// kept in. A Handler is what the HTTP transport of package jsonrpc calls
// an Authorizer; what the flows need of awl's run (a client, the token
// directory, a place for secrets) comes in an Env. It never reaches back
// into the MCP manager.
package oauth

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"golang.org/x/oauth2"
)

// Config is a server's "oauth" object in awl's MCP config: how awl gets a
// token for an HTTP server that asks for OAuth 2.1 (a 401 with
// WWW-Authenticate). Without it, an HTTP server with no Authorization
// header still gets the authorization-code flow, with dynamic client
// registration.
type Config struct {
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
	// Assertion (a secret, from ${VAR}) or AssertionFile (read at each
	// token request, for a token that is replaced as it expires, as a
	// projected service-account token is) is the workload's JWT of the
	// jwt_bearer grant (RFC 7523, SEP-1933): in CI, the job's OIDC token.
	Assertion, AssertionFile string
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

// The grants of Config.Grant.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	GrantIDJAG             = "id_jag"
	GrantJWTBearer         = "jwt_bearer"
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

// Env is what the flows need of the server they authorize and of the run.
type Env struct {
	// Name is the server's name in the config, File the config file that
	// names it, URL its endpoint: for messages and the token file.
	Name, File, URL string
	// LoginCommand is the command that stores the server's tokens, for
	// the error that asks for it; "" is `awl mcp login NAME --mcp-config
	// FILE`.
	LoginCommand string
	// HTTPClient reaches the authorization servers (without the server's
	// configured headers); nil means a client with a 30 s timeout.
	HTTPClient *http.Client
	// TokenDir holds the tokens of the authorization-code flow; "" keeps
	// none.
	TokenDir string
	// Login, when set, lets the authorization-code flow run.
	Login *Login
	// Secret is told every token and client secret the flows come to
	// hold, which must never show in any text.
	Secret func(...string)
	// Redact takes those secrets out of text.
	Redact func(string) string
	// Warnf says what awl cannot do but goes on without (a token file not
	// written).
	Warnf func(format string, args ...any)
}

func (e *Env) client() *http.Client {
	if e.HTTPClient != nil {
		return e.HTTPClient
	}
	return &http.Client{Timeout: 30 * time.Second}
}

func (e *Env) secret(vs ...string) {
	if e.Secret != nil {
		e.Secret(vs...)
	}
}

func (e *Env) redact(s string) string {
	if e.Redact != nil {
		return e.Redact(s)
	}
	return s
}

func (e *Env) warnf(format string, args ...any) {
	if e.Warnf != nil {
		e.Warnf(format, args...)
	}
}

// Handler gets the tokens of one HTTP server (jsonrpc.Authorizer): the
// transport sends what TokenSource gives, and calls Authorize on a 401 or
// 403 (which reads and closes the response) before sending once more.
// Close releases the redirect listener of the authorization-code flow.
type Handler interface {
	TokenSource(context.Context) (oauth2.TokenSource, error)
	Authorize(ctx context.Context, req *http.Request, resp *http.Response) error
	Close()
}

// New returns the handler of the grant o names (nil o: the
// authorization-code flow).
func New(o *Config, env *Env) (Handler, error) {
	if o == nil {
		o = &Config{}
	}
	if o.Grant == GrantClientCredentials || o.Grant == GrantIDJAG || o.Grant == GrantJWTBearer {
		return &ccHandler{env: env, o: o}, nil
	}
	return authCodeHandler(o, env)
}
