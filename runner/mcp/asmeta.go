package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Authorization server metadata that go-sdk's discovery does not fetch for
// awl: an identity provider's (which need not do PKCE, since awl only
// exchanges a token there), and the 2025-03-26 layout's, found at the MCP
// server's origin (legacy.go).

// fetchMeta gets one metadata document: nil and no error when the URL
// answers 4xx (no metadata there). The URL and the endpoints awl sends
// credentials to must be https, or http on a loopback address.
func fetchMeta(ctx context.Context, c *http.Client, metadataURL string) (*oauthex.AuthServerMeta, error) {
	if err := httpsOrLoopback(metadataURL); err != nil {
		return nil, fmt.Errorf("metadata URL %s: %w", metadataURL, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metadataURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d", metadataURL, resp.StatusCode)
	}
	var m oauthex.AuthServerMeta
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: not metadata JSON: %v", metadataURL, err)
	}
	for name, u := range map[string]string{"token_endpoint": m.TokenEndpoint, "authorization_endpoint": m.AuthorizationEndpoint, "registration_endpoint": m.RegistrationEndpoint} {
		if u == "" {
			continue
		}
		if err := httpsOrLoopback(u); err != nil {
			return nil, fmt.Errorf("%s: %s %s: %w", metadataURL, name, u, err)
		}
	}
	return &m, nil
}

// httpsOrLoopback refuses a URL that is neither https nor http to a
// loopback address.
func httpsOrLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		h := u.Hostname()
		if h == "localhost" {
			return nil
		}
		if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
			return nil
		}
		return fmt.Errorf("http is allowed only to a loopback address")
	}
	return fmt.Errorf("scheme %q: https only", u.Scheme)
}

// metadataURLs are where an issuer's metadata may be: RFC 8414 §3.1 (the
// well-known string inserted before the issuer's path) for OAuth and for
// OpenID Connect, then OpenID Connect Discovery's path appended.
func metadataURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("issuer %q is not a URL", issuer)
	}
	origin := u.Scheme + "://" + u.Host
	p := strings.TrimSuffix(u.Path, "/")
	urls := []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
	}
	if p != "" {
		urls = append(urls, origin+p+"/.well-known/openid-configuration")
	}
	return urls, nil
}

// issuerMeta discovers the metadata of issuer, which must name that same
// issuer (RFC 8414 §3.3: otherwise "the data contained in the response
// MUST NOT be used"). Nil when no URL has any.
func issuerMeta(ctx context.Context, c *http.Client, issuer string) (*oauthex.AuthServerMeta, error) {
	urls, err := metadataURLs(issuer)
	if err != nil {
		return nil, err
	}
	for _, u := range urls {
		m, err := fetchMeta(ctx, c, u)
		if err != nil {
			return nil, err
		}
		if m == nil {
			continue
		}
		if !sameIssuer(m.Issuer, issuer) {
			return nil, fmt.Errorf("%s names the issuer %q, not %q (RFC 8414 section 3.3: not used)", u, m.Issuer, issuer)
		}
		return m, nil
	}
	return nil, nil
}

// sameIssuer compares issuers as RFC 8414 does, but for a trailing slash.
func sameIssuer(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}
