package oauth

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// callbackServer answers the OAuth redirect listener: the authorization
// server sends the browser to /callback with the code, or the error, in
// the query. It reads one HTTP/1.1 request a connection and answers it
// with a short text page. It is not net/http's Server, which links its
// whole server side and HTTP/2's (0.8 MB of awl's binary) into every run
// for a page a person sees once, at login.
type callbackServer struct {
	ln net.Listener
	// handle answers a request for /callback with its page, and then
	// takes the result once the page is sent.
	handle func(q url.Values) (page string, deliver func())
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

// callbackTimeout bounds each connection, as the server's
// ReadHeaderTimeout did.
const callbackTimeout = 10 * time.Second

// serveCallback answers ln's connections until close.
func serveCallback(ln net.Listener, handle func(url.Values) (string, func())) *callbackServer {
	c := &callbackServer{ln: ln, handle: handle, conns: map[net.Conn]bool{}}
	c.wg.Add(1)
	go c.accept()
	return c
}

func (c *callbackServer) accept() {
	defer c.wg.Done()
	for {
		nc, err := c.ln.Accept()
		if err != nil {
			return
		}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			nc.Close()
			return
		}
		c.conns[nc] = true
		c.wg.Add(1)
		c.mu.Unlock()
		go c.serve(nc)
	}
}

// serve answers one request on nc. A result is taken only after its page
// is sent and the browser has closed the connection (or a second went
// by): closing first would reset a connection whose reply the browser
// had not read yet.
func (c *callbackServer) serve(nc net.Conn) {
	defer c.wg.Done()
	defer func() {
		c.mu.Lock()
		delete(c.conns, nc)
		c.mu.Unlock()
		nc.Close()
	}()
	nc.SetDeadline(time.Now().Add(callbackTimeout))
	req, err := http.ReadRequest(bufio.NewReader(nc))
	if err != nil {
		return
	}
	status, page, deliver := http.StatusNotFound, "404 page not found\n", func() {}
	if req.URL.Path == "/callback" {
		status = http.StatusOK
		page, deliver = c.handle(req.URL.Query())
	}
	head := "HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n" +
		"Content-Length: " + strconv.Itoa(len(page)) + "\r\nConnection: close\r\n\r\n"
	if req.Method == http.MethodHead {
		page = ""
	}
	if _, err := io.WriteString(nc, head+page); err != nil {
		return
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.CloseWrite()
		nc.SetReadDeadline(time.Now().Add(time.Second))
		io.Copy(io.Discard, nc)
	}
	deliver()
}

// close stops listening and cuts every connection still open, and
// returns once none is served.
func (c *callbackServer) close() {
	c.mu.Lock()
	c.closed = true
	c.ln.Close()
	for nc := range c.conns {
		nc.Close()
	}
	c.mu.Unlock()
	c.wg.Wait()
}
