package mcpserve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Serve1 serves h on ln over HTTP/1.1 until ctx is done, with a server of
// its own: net/http's Server links its HTTP/2 server and more, 540 KB of
// awl's binary and an initialiser at every start of every run, for a
// loopback endpoint that one MCP client at a time speaks to. Requests are
// read with net/http's ReadRequest; an answer the handler never flushes
// goes out whole with its Content-Length, one it flushes (an event stream)
// chunked. Connections are kept alive between requests.
func Serve1(ctx context.Context, ln net.Listener, h http.Handler) error {
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	var wg sync.WaitGroup
	go func() {
		<-ctx.Done()
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			wg.Wait()
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		mu.Lock()
		conns[c] = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			serveConn(ctx, c, h)
			c.Close()
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
		}()
	}
}

// idleTimeout is how long a connection may wait for its next request.
const idleTimeout = 5 * time.Minute

// serveConn serves the requests of one connection, one after another.
func serveConn(ctx context.Context, c net.Conn, h http.Handler) {
	br := bufio.NewReader(c)
	for {
		c.SetReadDeadline(time.Now().Add(idleTimeout))
		req, err := http.ReadRequest(br)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			}
			return
		}
		c.SetReadDeadline(time.Time{})
		if req.Header.Get("Expect") == "100-continue" {
			io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n")
		}
		rctx, cancel := context.WithCancel(ctx)
		req = req.WithContext(rctx)
		req.RemoteAddr = c.RemoteAddr().String()
		w := &response{bw: bufio.NewWriter(c), header: http.Header{}}
		h.ServeHTTP(w, req)
		cancel()
		err = w.finish()
		// What the handler left of the body is read, so that the next
		// request starts where it should.
		_, derr := io.Copy(io.Discard, io.LimitReader(req.Body, 1<<20))
		req.Body.Close()
		if err != nil || derr != nil || req.Close || w.header.Get("Connection") == "close" {
			return
		}
	}
}

// response is an http.ResponseWriter of one request.
type response struct {
	bw        *bufio.Writer
	header    http.Header
	status    int
	body      []byte
	streaming bool
	err       error
}

func (w *response) Header() http.Header { return w.header }

func (w *response) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *response) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if !w.streaming {
		w.body = append(w.body, b...)
		return len(b), nil
	}
	if len(b) > 0 && w.err == nil {
		_, w.err = fmt.Fprintf(w.bw, "%x\r\n%s\r\n", len(b), b)
	}
	return len(b), w.err
}

// Flush begins the chunked answer, if it has not begun, and sends what
// is written so far.
func (w *response) Flush() {
	w.WriteHeader(http.StatusOK)
	if !w.streaming {
		w.header.Del("Content-Length")
		w.header.Set("Transfer-Encoding", "chunked")
		w.writeHead()
		w.streaming = true
		held := w.body
		w.body = nil
		w.Write(held)
	}
	if w.err == nil {
		w.err = w.bw.Flush()
	}
}

// writeHead writes the status line and the header.
func (w *response) writeHead() {
	if w.err != nil {
		return
	}
	fmt.Fprintf(w.bw, "HTTP/1.1 %d %s\r\n", w.status, http.StatusText(w.status))
	if w.header.Get("Date") == "" {
		w.header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	}
	w.err = w.header.Write(w.bw)
	if w.err == nil {
		_, w.err = io.WriteString(w.bw, "\r\n")
	}
}

// finish ends the answer: the last chunk of a stream, or the whole body
// with its length.
func (w *response) finish() error {
	if w.streaming {
		if w.err == nil {
			_, w.err = io.WriteString(w.bw, "0\r\n\r\n")
		}
	} else {
		w.WriteHeader(http.StatusOK)
		if w.status != http.StatusNoContent && w.status != http.StatusNotModified {
			w.header.Set("Content-Length", strconv.Itoa(len(w.body)))
		}
		w.writeHead()
		if w.err == nil {
			_, w.err = w.bw.Write(w.body)
		}
	}
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	return w.err
}
