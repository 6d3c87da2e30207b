package oauth

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
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// ccHandler gets tokens with the client-credentials grant, or with the
// id_jag grant (an ID-JAG from the IdP as a JWT bearer assertion): no
// person, no stored tokens; the client authenticates with client_secret
// (basic or post, as the server supports) or private_key_jwt.
type ccHandler struct {
	env *Env
	o   *Config
	tokens
}

// Close does nothing: the grant holds no listener.
func (h *ccHandler) Close() {}

func (h *ccHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	defer io.Copy(io.Discard, resp.Body)
	challenges, _ := parseChallenges(resp.Header.Values("WWW-Authenticate"))
	c := guarded(h.env.client(), trustHosts(req.URL, h.o.PrivateNetwork))
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
	if h.o.Grant == GrantJWTBearer {
		jwt, err := h.assertion()
		if err != nil {
			return err
		}
		form = url.Values{"grant_type": {grantJWTBearer}, "assertion": {jwt}, "resource": {prm.Resource}}
	}
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
		h.env.secret(jwt)
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
	tresp, err := h.env.client().Do(treq)
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
		return fmt.Errorf("token request: HTTP %d: %s %s", tresp.StatusCode, tok.Error, h.env.redact(tok.Description))
	}
	h.env.secret(tok.AccessToken)
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
	c := h.env.client()
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
		return "", fmt.Errorf("token exchange at the identity provider: %s", h.env.redact(err.Error()))
	}
	if typ, _ := tok.Extra("issued_token_type").(string); typ != tokenTypeIDJAG {
		return "", fmt.Errorf("token exchange at the identity provider: issued %q, not an ID-JAG (%s)", typ, tokenTypeIDJAG)
	}
	h.env.secret(tok.AccessToken)
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
func clientAssertion(o *Config, aud string) (string, error) {
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
		if sig, err = signES256(k, input); err != nil {
			return "", err
		}
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

// assertion is the workload's JWT of the jwt_bearer grant: the configured
// value, or the file's content now (trimmed).
func (h *ccHandler) assertion() (string, error) {
	jwt := h.o.Assertion
	if h.o.AssertionFile != "" {
		b, err := os.ReadFile(h.o.AssertionFile)
		if err != nil {
			return "", fmt.Errorf("jwt_bearer assertion: %v", err)
		}
		jwt = strings.TrimSpace(string(b))
	}
	if jwt == "" {
		return "", errors.New("jwt_bearer assertion: empty")
	}
	h.env.secret(jwt)
	return jwt, nil
}
