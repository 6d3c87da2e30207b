// Package providertest is a fake model provider: an HTTP server on
// 127.0.0.1 that answers each request with a canned response, in order, and
// records every request it receives. Every test in awl that needs a model
// uses it, from unit tests (New, Enqueue) to testscript scripts (NewDir).
package providertest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Response is one canned answer.
type Response struct {
	// Status is the HTTP status; 0 means 200.
	Status int
	// Header is sent as is. Without a Content-Type, a 2xx answer whose
	// body starts with '{' or '[' is application/json, any other 2xx
	// answer text/event-stream, and an error status application/json.
	Header http.Header
	// Body is written after the headers.
	Body []byte
	// ChunkSize writes Body in chunks of this many bytes, flushing after
	// each; 0 writes it whole.
	ChunkSize int
	// Delay waits this long before sending the headers.
	Delay time.Duration
	// Stall hangs the response after StallAfter bytes of Body until the
	// client goes away (or the server closes), as a stalled stream does.
	// A positive StallAfter also stalls without Stall; 0 and -1 without
	// Stall mean no stall.
	Stall      bool
	StallAfter int
}

// Request is one request the server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Server is a fake provider. Its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL to give a provider (Options.BaseURL).
	URL string

	srv     *httptest.Server
	dir     string // directory mode when not ""
	closing chan struct{}
	once    sync.Once

	mu       sync.Mutex
	queue    []Response
	requests []Request
	respond  func(n int, req Request) Response
}

// RespondWith answers every request that finds the queue empty with
// f(n, req), n being the request's 1-based number: for long scripted runs
// whose answers depend on what was asked.
func (s *Server) RespondWith(f func(n int, req Request) Response) {
	s.mu.Lock()
	s.respond = f
	s.mu.Unlock()
}

// New starts a server that answers from the queue filled by Enqueue.
// When the queue is empty it answers 400 with a message naming the request,
// so a test that forgot a response fails at once instead of retrying.
func New() *Server {
	return start("")
}

// NewDir starts a server for testscript scripts. Request N (1-based) is
// answered from dir/provider/N.sse (200, text/event-stream) or N.json (200,
// application/json), with an optional N.status (a number) and N.headers
// (lines "Name: value") and N.delay (milliseconds before the headers).
// Before answering, the request body is written to
// dir/requests/N.json and its URL path to dir/requests/N.path. Files are
// read when the request arrives, so a script may write them as it goes.
func NewDir(dir string) *Server {
	return start(dir)
}

func start(dir string) *Server {
	s := &Server{dir: dir, closing: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Enqueue adds responses to answer the next requests, in order.
func (s *Server) Enqueue(rs ...Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, rs...)
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	copy(out, s.requests)
	return out
}

// Close releases stalled responses and shuts the server down.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closing)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	n := len(s.requests)
	var resp Response
	var ok bool
	if s.dir == "" && len(s.queue) > 0 {
		resp, ok = s.queue[0], true
		s.queue = s.queue[1:]
	}
	respond := s.respond
	s.mu.Unlock()
	if !ok && respond != nil && s.dir == "" {
		resp, ok = respond(n, req), true
	}

	if s.dir != "" {
		var err error
		resp, ok, err = s.fromDir(n, req)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("fake provider: request %d: %v", n, err))
			return
		}
	}
	if !ok {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("fake provider: no response queued for request %d", n))
		return
	}
	s.write(w, r.Context(), resp)
}

// writeError answers with an OpenAI/Anthropic-shaped JSON error.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":%s}}`, strconv.Quote(msg))
}

func (s *Server) write(w http.ResponseWriter, ctx context.Context, resp Response) {
	if resp.Delay > 0 {
		t := time.NewTimer(resp.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		case <-s.closing:
			return
		}
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", contentType(status, resp.Body))
	}
	w.WriteHeader(status)
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	body := resp.Body
	stall := resp.Stall || resp.StallAfter > 0
	if stall {
		body = body[:min(max(resp.StallAfter, 0), len(body))]
	}
	chunk := resp.ChunkSize
	if chunk <= 0 {
		chunk = len(body)
	}
	for len(body) > 0 {
		k := min(chunk, len(body))
		if _, err := w.Write(body[:k]); err != nil {
			return
		}
		flush()
		body = body[k:]
	}
	flush()
	if stall {
		select {
		case <-ctx.Done():
		case <-s.closing:
		}
	}
}

// contentType guesses the type of a response without one: JSON for an
// error status or a body that starts like a JSON document, else SSE.
func contentType(status int, body []byte) string {
	b := bytes.TrimSpace(body)
	if status/100 != 2 || (len(b) > 0 && (b[0] == '{' || b[0] == '[')) {
		return "application/json"
	}
	return "text/event-stream"
}

// fromDir records request n and loads its answer from the directory.
func (s *Server) fromDir(n int, req Request) (Response, bool, error) {
	reqDir := filepath.Join(s.dir, "requests")
	if err := os.MkdirAll(reqDir, 0o755); err != nil {
		return Response{}, false, err
	}
	base := filepath.Join(reqDir, strconv.Itoa(n))
	if err := os.WriteFile(base+".json", req.Body, 0o644); err != nil {
		return Response{}, false, err
	}
	if err := os.WriteFile(base+".path", []byte(req.Path+"\n"), 0o644); err != nil {
		return Response{}, false, err
	}
	p := filepath.Join(s.dir, "provider", strconv.Itoa(n))
	var resp Response
	if b, err := os.ReadFile(p + ".sse"); err == nil {
		resp.Body = b
		resp.Header = http.Header{"Content-Type": {"text/event-stream"}}
	} else if b, err := os.ReadFile(p + ".json"); err == nil {
		resp.Body = b
		resp.Header = http.Header{"Content-Type": {"application/json"}}
	} else {
		return Response{}, false, nil
	}
	if b, err := os.ReadFile(p + ".status"); err == nil {
		st, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return Response{}, false, fmt.Errorf("bad status file: %w", err)
		}
		resp.Status = st
	}
	if b, err := os.ReadFile(p + ".delay"); err == nil {
		ms, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return Response{}, false, fmt.Errorf("bad delay file: %w", err)
		}
		resp.Delay = time.Duration(ms) * time.Millisecond
	}
	if b, err := os.ReadFile(p + ".headers"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			name, value, ok := strings.Cut(sc.Text(), ":")
			if !ok || strings.TrimSpace(name) == "" {
				continue
			}
			resp.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
		}
	}
	return resp, true, nil
}
