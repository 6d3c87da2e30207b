package provider

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/awlrun/awl/internal/growstack"
)

// Warmer is a Provider that can open its connection before its first
// request: the runner asks it to while it writes the new session's first
// entries, so the connect no longer waits for their fsyncs
// (docs/performance.md). Nothing is sent on the connection until a
// request is.
type Warmer interface {
	Warm()
}

// warmMaxAge is how old a warmed connection may be when the first request
// takes it: an older one is closed and a new one dialled, so a server's
// idle timeout never fails a request.
const warmMaxAge = 5 * time.Second

// warmDialer dials as http.DefaultTransport does, except that the first
// dial to the warmed address takes the connection Warm opened.
type warmDialer struct {
	d net.Dialer
	// proxy is the transport's Proxy, so that Warm dials where the
	// transport will.
	proxy func(*http.Request) (*url.URL, error)

	mu    sync.Mutex
	addr  string        // the address warmed; "" before Warm
	ready chan struct{} // closed once the warm dial has ended
	conn  net.Conn      // set before ready is closed
	err   error         // the warm dial's failure, set before ready is closed
	at    time.Time     // when conn was made
	taken bool          // a dial has had (or refused) the warmed one
}

// newWarmTransport is http.DefaultTransport's configuration with wd's
// dial.
func newWarmTransport(wd *warmDialer) *http.Transport {
	wd.d = net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if wd.proxy == nil {
		wd.proxy = http.ProxyFromEnvironment
	}
	return &http.Transport{
		Proxy:                 wd.proxy,
		DialContext:           wd.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 1 * time.Second,
	}
}

// warm starts a TCP dial to addr in the background, once.
func (wd *warmDialer) warm(addr string) {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.ready != nil || wd.taken {
		return
	}
	wd.addr, wd.ready = addr, make(chan struct{})
	go func() {
		growstack.Grow() // the dial goes deep: one copy of a shallow stack
		c, err := wd.d.DialContext(context.Background(), "tcp", addr)
		wd.mu.Lock()
		wd.err = err
		if err == nil {
			wd.conn, wd.at = c, time.Now()
			// Not taken in time (the run ended before a request):
			// close it rather than hold it to the process's end.
			time.AfterFunc(warmMaxAge, wd.drop)
		}
		close(wd.ready)
		wd.mu.Unlock()
	}()
}

// drop closes the warmed connection if no dial has taken it.
func (wd *warmDialer) drop() {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if !wd.taken {
		wd.taken = true
		wd.conn.Close()
	}
}

// DialContext is the transport's dial. The first dial to the warmed
// address has the warm dial's outcome, as if it had dialled itself a
// little earlier: its connection when young enough (else a dial of its
// own), or its error, which the request's retries then see (dialling again
// at once would double the wait on a host that does not answer).
func (wd *warmDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	wd.mu.Lock()
	ready, mine := wd.ready, !wd.taken && wd.ready != nil && network == "tcp" && addr == wd.addr
	if mine {
		wd.taken = true
	}
	wd.mu.Unlock()
	if mine {
		select {
		case <-ready:
			if wd.err != nil {
				return nil, wd.err
			}
			if time.Since(wd.at) <= warmMaxAge {
				return wd.conn, nil
			}
			wd.conn.Close()
		case <-ctx.Done():
			go func() {
				<-ready
				if wd.conn != nil {
					wd.conn.Close()
				}
			}()
			return nil, ctx.Err()
		}
	}
	return wd.d.DialContext(ctx, network, addr)
}

// Warm opens the connection the first request will use: to the API's
// host, or to the proxy the environment names for it. It does nothing
// for a client given its own HTTPClient.
func (c *client) Warm() {
	if c.warm == nil {
		return
	}
	u, err := url.Parse(c.url)
	if err != nil {
		return
	}
	if p, err := c.warm.proxy(&http.Request{URL: u}); err != nil {
		return
	} else if p != nil {
		u = p
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	c.warm.warm(net.JoinHostPort(u.Hostname(), port))
}
