package provider

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/provider/providertest"
)

// acceptLog is a listener that notes when it accepts each connection.
type acceptLog struct {
	net.Listener
	mu sync.Mutex
	at []time.Time
}

func (l *acceptLog) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.at = append(l.at, time.Now())
		l.mu.Unlock()
	}
	return c, err
}

func (l *acceptLog) accepted() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.at...)
}

// waitAccepted waits up to 5 s for at least n accepts (a dial can
// return before the server's Accept), and returns how many there were.
func (l *acceptLog) waitAccepted(n int) int {
	deadline := time.Now().Add(5 * time.Second)
	for len(l.accepted()) < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return len(l.accepted())
}

// closedPort is an address on 127.0.0.1 where nothing listens: connects
// are refused until a test listens there again.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// warmServer serves a text answer on 127.0.0.1 and logs its connections;
// requests counts the requests it answered.
func warmServer(t *testing.T, name string) (*acceptLog, string, func() int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	al := &acceptLog{Listener: l}
	var mu sync.Mutex
	n := 0
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		resp := providertest.Text(name, "warm")
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(resp.Body)
	})}
	go srv.Serve(al)
	t.Cleanup(func() { srv.Close() })
	return al, "http://" + l.Addr().String(), func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// TestWarmConnectionTakenByFirstRequest: Warm dials at once, and the first
// request goes on that connection instead of dialling its own.
func TestWarmConnectionTakenByFirstRequest(t *testing.T) {
	al, url, requests := warmServer(t, NameAnthropic)
	p, err := New(NameAnthropic, Options{APIKey: "k", BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	p.(Warmer).Warm()
	al.waitAccepted(1)
	if len(al.accepted()) != 1 {
		t.Fatalf("Warm made %d connections before any request, want 1", len(al.accepted()))
	}
	sent := time.Now()
	msg, err := p.Stream(context.Background(), hello, nil)
	if err != nil || msg.Text() != "warm" {
		t.Fatalf("Stream: %q, %v", msg.Text(), err)
	}
	if got := al.accepted(); len(got) != 1 || !got[0].Before(sent) {
		t.Errorf("connections accepted at %v; want only the one Warm made before the request at %v", got, sent)
	}
	if requests() != 1 {
		t.Errorf("%d requests answered, want 1", requests())
	}
	// A second Warm does nothing: the warmed connection is spent.
	p.(Warmer).Warm()
	if _, err := p.Stream(context.Background(), hello, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(al.accepted()); n != 1 {
		t.Errorf("%d connections after a second request on the kept-alive one, want 1", n)
	}
}

// TestWarmStaleConnectionNotUsed: a warmed connection older than
// warmMaxAge is closed and the request dials afresh, so a server's idle
// timeout never fails it.
func TestWarmStaleConnectionNotUsed(t *testing.T) {
	al, url, _ := warmServer(t, NameAnthropic)
	wd := &warmDialer{}
	tr := newWarmTransport(wd)
	defer tr.CloseIdleConnections()
	addr := url[len("http://"):]
	wd.warm(addr)
	<-wd.ready
	wd.mu.Lock()
	wd.at = wd.at.Add(-2 * warmMaxAge)
	warmed := wd.conn
	wd.mu.Unlock()
	c, err := wd.DialContext(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c == warmed {
		t.Fatal("the stale warmed connection was handed out")
	}
	if _, err := warmed.Write([]byte("x")); err == nil {
		t.Error("the stale warmed connection was left open")
	}
	al.waitAccepted(2)
	if n := len(al.accepted()); n != 2 {
		t.Errorf("%d connections, want 2 (the warmed one and a fresh one)", n)
	}
}

// TestWarmFailedDialIsTheRequests: a warm dial that fails (nothing
// listens) gives the first dial its error, as its own dial would have,
// without a second wait; the next dial (a retry) dials afresh.
func TestWarmFailedDialIsTheRequests(t *testing.T) {
	addr := closedPort(t)
	wd := &warmDialer{}
	newWarmTransport(wd)
	wd.warm(addr)
	<-wd.ready
	if wd.conn != nil || wd.err == nil {
		t.Fatal("a dial to a closed port succeeded")
	}
	l2, err := net.Listen("tcp", addr)
	if err != nil {
		testenv.Require(t, fmt.Sprintf("port %s taken again meanwhile: %v", addr, err))
	}
	defer l2.Close()
	if _, err := wd.DialContext(context.Background(), "tcp", addr); err != wd.err {
		t.Fatalf("first dial: %v, want the warm dial's error %v", err, wd.err)
	}
	c, err := wd.DialContext(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatalf("second dial: %v", err)
	}
	c.Close()
}

// TestWarmRefusedRequestRetried: against a port that refuses the warm
// dial and the first attempt, the request's retry dials again and gets
// its answer once the server is up.
func TestWarmRefusedRequestRetried(t *testing.T) {
	addr := closedPort(t)
	var slept int
	p, err := New(NameAnthropic, Options{APIKey: "k", BaseURL: "http://" + addr, MaxRetries: 2,
		Sleep: func(ctx context.Context, d time.Duration) error {
			if slept++; slept == 1 {
				l2, err := net.Listen("tcp", addr)
				if err != nil {
					testenv.Require(t, fmt.Sprintf("port %s taken again meanwhile: %v", addr, err))
				}
				srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/event-stream")
					w.Write(providertest.Text(NameAnthropic, "up").Body)
				})}
				go srv.Serve(l2)
				t.Cleanup(func() { srv.Close() })
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	p.(Warmer).Warm()
	msg, err := p.Stream(context.Background(), hello, nil)
	if err != nil || msg.Text() != "up" {
		t.Fatalf("Stream: %q, %v", msg.Text(), err)
	}
	if slept != 1 {
		t.Errorf("%d retries, want 1", slept)
	}
}

// TestWarmOtherAddressDialsItsOwn: the warmed connection is for its
// address only, and a dial cancelled while the warm dial runs returns at
// once with its context's error.
func TestWarmOtherAddressDialsItsOwn(t *testing.T) {
	a1, url1, _ := warmServer(t, NameAnthropic)
	a2, url2, _ := warmServer(t, NameAnthropic)
	wd := &warmDialer{}
	newWarmTransport(wd)
	wd.warm(url1[len("http://"):])
	c, err := wd.DialContext(context.Background(), "tcp", url2[len("http://"):])
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	<-wd.ready
	if n1, n2 := a1.waitAccepted(1), a2.waitAccepted(1); n1 != 1 || n2 != 1 {
		t.Errorf("accepted %d and %d, want 1 and 1", n1, n2)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wd2 := &warmDialer{ready: make(chan struct{}), addr: "127.0.0.1:1"}
	if _, err := wd2.DialContext(ctx, "tcp", "127.0.0.1:1"); err != context.Canceled {
		t.Errorf("cancelled dial: %v, want context.Canceled", err)
	}
	close(wd2.ready)
}

// TestWarmGoesToTheProxy: with a proxy for the API's URL, the connection
// Warm opens is to the proxy, which is where the transport dials; and the
// request then takes it.
func TestWarmGoesToTheProxy(t *testing.T) {
	al, proxyURL, requests := warmServer(t, NameAnthropic)
	pu, err := url.Parse(proxyURL)
	if err != nil {
		t.Fatal(err)
	}
	wd := &warmDialer{proxy: http.ProxyURL(pu)}
	p, err := New(NameAnthropic, Options{APIKey: "k", BaseURL: "http://api.example.invalid",
		HTTPClient: &http.Client{Transport: newWarmTransport(wd)}})
	if err != nil {
		t.Fatal(err)
	}
	c := p.(*client)
	c.warm = wd
	c.Warm()
	<-wd.ready
	al.waitAccepted(1) // the dial is done; the Accept may come after
	if len(al.accepted()) != 1 {
		t.Fatalf("the proxy accepted %d connections on Warm, want 1", len(al.accepted()))
	}
	// The plain-HTTP proxy is sent the request itself, on that connection.
	if _, err := p.Stream(context.Background(), hello, nil); err != nil {
		t.Fatal(err)
	}
	if len(al.accepted()) != 1 || requests() != 1 {
		t.Errorf("%d connections and %d requests at the proxy, want 1 and 1", len(al.accepted()), requests())
	}
}

// TestWarmNotWithAGivenClient: a client given in Options is the caller's
// to configure: Warm does nothing.
func TestWarmNotWithAGivenClient(t *testing.T) {
	al, url, _ := warmServer(t, NameAnthropic)
	p, err := New(NameAnthropic, Options{APIKey: "k", BaseURL: url, HTTPClient: &http.Client{}})
	if err != nil {
		t.Fatal(err)
	}
	p.(Warmer).Warm()
	time.Sleep(50 * time.Millisecond)
	if n := len(al.accepted()); n != 0 {
		t.Errorf("%d connections after Warm with a given client, want 0", n)
	}
}

// TestWarmTransportSpeaksHTTP2: the client's own transport (a dial of its
// own in place of http.DefaultTransport's) still negotiates HTTP/2 over
// TLS, as the default one does with the real APIs, and the warmed TCP
// connection carries the TLS handshake.
func TestWarmTransportSpeaksHTTP2(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Proto", r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	wd := &warmDialer{}
	tr := newWarmTransport(wd)
	tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	defer tr.CloseIdleConnections()
	wd.warm(srv.Listener.Addr().String())
	<-wd.ready
	warmed := wd.conn
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Proto != "HTTP/2.0" || resp.Header.Get("X-Proto") != "HTTP/2.0" {
		t.Errorf("spoke %s (server saw %s), want HTTP/2.0", resp.Proto, resp.Header.Get("X-Proto"))
	}
	wd.mu.Lock()
	taken := wd.taken
	wd.mu.Unlock()
	if resp.TLS == nil || !taken || warmed == nil {
		t.Errorf("TLS %v, warmed connection taken %v", resp.TLS != nil, taken)
	}
}
