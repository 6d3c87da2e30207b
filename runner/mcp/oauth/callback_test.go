package oauth

import (
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var urlRE = regexp.MustCompile(`http://\S+`)

// opener is a Login's Notify that opens each URL awl prints, as a browser
// would, and keeps what it was answered.
type opener struct {
	mu    sync.Mutex
	pages []string
}

func (o *opener) Write(p []byte) (int, error) {
	for _, u := range urlRE.FindAllString(string(p), -1) {
		go func() {
			// A browser asks for the icon too, first here.
			o.get(u[:strings.Index(u, "/callback")] + "/favicon.ico")
			o.get(u)
		}()
	}
	return len(p), nil
}

func (o *opener) get(u string) {
	page := "error"
	if resp, err := http.Get(u); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page = resp.Status + " " + resp.Header.Get("Content-Type") + ": " + string(b)
	}
	o.mu.Lock()
	o.pages = append(o.pages, page)
	o.mu.Unlock()
}

func (o *opener) page(t *testing.T, n int) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		o.mu.Lock()
		if len(o.pages) > n {
			p := o.pages[n]
			o.mu.Unlock()
			return p
		}
		o.mu.Unlock()
	}
	t.Fatalf("no page %d", n)
	return ""
}

// TestFetchCodeCallback: the redirect listener takes the code, or the
// authorization server's error, from /callback, after the browser got
// its page; it answers anything else 404; and it listens again for a
// second authorization (step-up).
func TestFetchCodeCallback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &opener{}
	s := &codeHandler{env: &Env{Name: "web", Login: &Login{Notify: o}}, redirect: redirect{ln: ln}}
	defer s.Close()
	base := "http://" + ln.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := s.fetchCode(ctx, base+"/callback?code=c0de&state=st&iss=https%3A%2F%2Fas.example")
	if err != nil || res.Code != "c0de" || res.State != "st" || res.Iss != "https://as.example" {
		t.Fatalf("code: %+v, %v", res, err)
	}
	if p := o.page(t, 0); p != "404 Not Found text/plain; charset=utf-8: 404 page not found\n" {
		t.Errorf("another path: %q", p)
	}
	if p := o.page(t, 1); p != "200 OK text/plain; charset=utf-8: awl is authorized; you may close this page.\n" {
		t.Errorf("page: %q", p)
	}

	// Listening again, after the first authorization closed it.
	_, err = s.fetchCode(ctx, base+"/callback?error=access_denied&error_description=no+thanks")
	if err == nil || err.Error() != "the authorization server answered access_denied: no thanks" {
		t.Fatalf("error: %v", err)
	}
	if p := o.page(t, 3); !strings.HasPrefix(p, "200 OK") || !strings.HasSuffix(p, ": Authorization failed; you may close this page.\n") {
		t.Errorf("page: %q", p)
	}
}
