package oauth

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

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
// MUST NOT be used"), or with sameOrigin any issuer on the issuer's origin
// (the 2025-03-26 layout, code.go). Nil when no URL has any.
func issuerMeta(ctx context.Context, c *http.Client, issuer string, sameOrigin bool) (*authServerMeta, error) {
	urls, err := metadataURLs(issuer)
	if err != nil {
		return nil, err
	}
	for _, u := range urls {
		m, err := authServerMetaAt(ctx, c, u)
		if err != nil {
			return nil, err
		}
		if m == nil {
			continue
		}
		switch {
		case sameIssuer(m.Issuer, issuer):
		case !sameOrigin:
			return nil, fmt.Errorf("%s names the issuer %q, not %q: it does not match (RFC 8414 section 3.3: not used)", u, m.Issuer, issuer)
		case !onOrigin(m.Issuer, issuer):
			return nil, fmt.Errorf("%s names the issuer %q, not on that origin: refused (RFC 8414 section 3.3)", u, m.Issuer)
		}
		return m, nil
	}
	return nil, nil
}

// onOrigin reports whether issuer is an https or loopback URL on origin,
// without a query or fragment.
func onOrigin(issuer, origin string) bool {
	iu, err := url.Parse(issuer)
	return err == nil && iu.Scheme+"://"+iu.Host == strings.TrimSuffix(origin, "/") && iu.RawQuery == "" && iu.Fragment == "" && httpsOrLoopback(issuer) == nil
}

// sameIssuer compares issuers as RFC 8414 does, but for a trailing slash.
func sameIssuer(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}
