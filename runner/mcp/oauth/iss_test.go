package oauth

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// follower is a Login's Notify that opens each URL awl prints and follows
// its redirects, as a browser would.
type follower struct{}

func (follower) Write(p []byte) (int, error) {
	for _, u := range urlRE.FindAllString(string(p), -1) {
		go func() {
			if resp, err := http.Get(u); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	return len(p), nil
}

// An authorization response's iss is compared with the issuer exactly
// (RFC 9207 section 2.4): a trailing slash more is another issuer.
func TestIssuerComparedExactly(t *testing.T) {
	for _, c := range []struct {
		name, iss string
		ok        bool
	}{
		{"identical", "", true},
		{"trailing slash", "/", false},
		{"upper-case host", "UPPER", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var as *httptest.Server
			as = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/authorize":
					q := r.URL.Query()
					iss := as.URL + c.iss
					if c.iss == "UPPER" {
						iss = strings.Replace(as.URL, "127.0.0.1", "127.0.0.1.", 1)
					}
					http.Redirect(w, r, q.Get("redirect_uri")+"?code=c0de&state="+url.QueryEscape(q.Get("state"))+"&iss="+url.QueryEscape(iss), http.StatusFound)
				case "/token":
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"access_token":"at-1","token_type":"Bearer"}`)
				default:
					http.NotFound(w, r)
				}
			}))
			defer as.Close()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			h := &codeHandler{env: &Env{Name: "web", Login: &Login{Notify: follower{}}}, o: &Config{ClientID: "client"},
				redirect: redirect{ln: ln}, redirectURL: "http://" + ln.Addr().String() + "/callback"}
			defer h.Close()
			asm := &authServerMeta{Issuer: as.URL, AuthorizationEndpoint: as.URL + "/authorize", TokenEndpoint: as.URL + "/token",
				CodeChallengeMethodsSupported: []string{"S256"}, AuthorizationResponseIssParameterSupported: true}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err = h.authorize(ctx, asm, &resourceMeta{Resource: "http://mcp.example/mcp"}, nil)
			switch {
			case c.ok && err != nil:
				t.Fatalf("refused: %v", err)
			case !c.ok && (err == nil || !strings.Contains(err.Error(), "RFC 9207")):
				t.Fatalf("accepted, or refused for another reason: %v", err)
			}
			ts, _ := h.TokenSource(ctx)
			if got := ts != nil; got != c.ok {
				t.Errorf("a token source: %v", got)
			}
		})
	}
}
