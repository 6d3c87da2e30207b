package mcpserve

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
)

// HTTPHandler serves a Server over streamable HTTP at /mcp: each POST
// carries one message; a request is answered as application/json when
// its answer is ready at once, else as an event stream (the call's
// progress notifications, then its answer); a notification is 202. A
// session begins at initialize (Mcp-Session-Id) and ends with DELETE.
// Every request must carry the bearer token, and a request from a browser
// page (an Origin header) must come from a loopback origin.
type HTTPHandler struct {
	s     *Server
	token string
	ctx   context.Context
	stop  context.CancelCauseFunc

	mu       sync.Mutex
	sessions map[string]*httpSession
	wg       sync.WaitGroup
}

type httpSession struct {
	c      *conn
	cancel context.CancelCauseFunc
}

// Why the server ends calls over HTTP.
var (
	errServerClosing = errors.New("the server is shutting down")
	errSessionEnded  = errors.New("the client ended the session (DELETE)")
)

// HTTPHandler returns the handler of s over HTTP, its calls run under
// ctx; token is the bearer token every request must carry.
func (s *Server) HTTPHandler(ctx context.Context, token string) *HTTPHandler {
	ctx, stop := context.WithCancelCause(ctx)
	return &HTTPHandler{s: s, token: token, ctx: ctx, stop: stop, sessions: map[string]*httpSession{}}
}

// Close cancels every call in flight and returns once each has ended
// and its answer has been sent on its stream.
func (h *HTTPHandler) Close() {
	h.stop(errServerClosing)
	h.wg.Wait()
}

// loopbackOrigin tells whether an Origin header (or a Host, as a URL)
// names this machine.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/mcp" {
		http.NotFound(w, r)
		return
	}
	// A web page another site serves may reach a loopback port (DNS
	// rebinding): its requests name that site in Host and Origin.
	if !loopbackOrigin("http://" + r.Host) {
		http.Error(w, "forbidden host: the server answers on a loopback address only", http.StatusForbidden)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
		http.Error(w, "forbidden origin", http.StatusForbidden)
		return
	}
	got := []byte(r.Header.Get("Authorization"))
	if subtle.ConstantTimeCompare(got, []byte("Bearer "+h.token)) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="awl"`)
		http.Error(w, "a bearer token is required", http.StatusUnauthorized)
		return
	}
	if v := r.Header.Get("MCP-Protocol-Version"); v != "" && !slices.Contains(Versions, v) {
		http.Error(w, fmt.Sprintf("unsupported MCP-Protocol-Version %q", v), http.StatusBadRequest)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodDelete:
		h.mu.Lock()
		ss := h.sessions[r.Header.Get("Mcp-Session-Id")]
		delete(h.sessions, r.Header.Get("Mcp-Session-Id"))
		h.mu.Unlock()
		if ss == nil {
			http.Error(w, "no such session", http.StatusNotFound)
			return
		}
		ss.cancel(errSessionEnded)
		w.WriteHeader(http.StatusNoContent)
	default:
		// No stream of the server's own: it sends nothing unasked.
		w.Header().Set("Allow", "POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// post handles one message.
func (h *HTTPHandler) post(w http.ResponseWriter, r *http.Request) {
	max := h.s.MaxMessage
	if max <= 0 {
		max = 16 << 20
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(max)))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("message over %d bytes", max), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	json.Unmarshal(body, &head)
	ss, ok := h.session(w, r, head.Method)
	if !ok {
		return
	}
	isRequest := head.Method != "" && len(head.ID) > 0 && string(head.ID) != "null"
	out := &httpOut{w: w}
	done := ss.c.handle(ss.c.ctx, body, out.send)
	if !isRequest && out.empty() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	select {
	case <-done:
		out.finish()
		return
	default:
	}
	out.stream()
	select {
	case <-done:
	case <-r.Context().Done():
		// The client went away; its call goes on (the protocol says a
		// disconnection is no cancellation) and its answer is dropped.
	}
	out.close()
}

// session finds the session of a request, or begins one at initialize.
func (h *HTTPHandler) session(w http.ResponseWriter, r *http.Request, method string) (*httpSession, bool) {
	if method == "initialize" {
		var b [16]byte
		rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		ctx, cancel := context.WithCancelCause(h.ctx)
		ss := &httpSession{c: &conn{s: h.s, ctx: ctx, calls: map[string]*inFlight{}, wg: &h.wg}, cancel: cancel}
		h.mu.Lock()
		h.sessions[id] = ss
		h.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", id)
		return ss, true
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		http.Error(w, "Mcp-Session-Id is required (initialize first)", http.StatusBadRequest)
		return nil, false
	}
	h.mu.Lock()
	ss := h.sessions[id]
	h.mu.Unlock()
	if ss == nil {
		http.Error(w, "no such session", http.StatusNotFound)
		return nil, false
	}
	return ss, true
}

// httpOut is where the messages of one POST go: held until the handler
// knows whether the answer is ready at once (then one JSON body), else
// an event stream, written and flushed a message at a time.
type httpOut struct {
	w         http.ResponseWriter
	mu        sync.Mutex
	held      [][]byte
	streaming bool
	ended     bool
}

func (o *httpOut) send(m message) {
	b := encode(m)
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.ended:
	case o.streaming:
		o.event(b)
	default:
		o.held = append(o.held, b)
	}
}

func (o *httpOut) empty() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.held) == 0
}

// event writes one message as a server-sent event.
func (o *httpOut) event(b []byte) {
	fmt.Fprintf(o.w, "event: message\ndata: %s\n\n", b)
	if f, ok := o.w.(http.Flusher); ok {
		f.Flush()
	}
}

// finish answers with what was held: one message as JSON, several (a
// call's progress and its answer) as an event stream, none as 202.
func (o *httpOut) finish() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended = true
	switch len(o.held) {
	case 0:
		o.w.WriteHeader(http.StatusAccepted)
	case 1:
		o.w.Header().Set("Content-Type", "application/json")
		o.w.Write(o.held[0])
	default:
		o.w.Header().Set("Content-Type", "text/event-stream")
		for _, b := range o.held {
			o.event(b)
		}
	}
}

// stream begins the event stream with what was held.
func (o *httpOut) stream() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.w.Header().Set("Content-Type", "text/event-stream")
	o.w.Header().Set("Cache-Control", "no-cache")
	o.w.WriteHeader(http.StatusOK)
	for _, b := range o.held {
		o.event(b)
	}
	o.held = nil
	o.streaming = true
}

// close ends the stream: nothing is written after the handler returns.
func (o *httpOut) close() {
	o.mu.Lock()
	o.ended = true
	o.mu.Unlock()
}
