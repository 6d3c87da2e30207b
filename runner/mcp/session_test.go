package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// restartingServer is an HTTP MCP server that can restart: every session
// it issued before is forgotten, and a request naming one is answered as
// the TypeScript SDK's server answers it, 404 with a JSON-RPC error body.
type restartingServer struct {
	mu       sync.Mutex
	inner    http.Handler
	sessions map[string]bool
	lost     int // requests answered 404
}

func newRestartingServer() *restartingServer {
	r := &restartingServer{}
	r.restart()
	return r
}

func (r *restartingServer) restart() {
	srv := sdk.NewServer(&sdk.Implementation{Name: "s", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "work", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "worked"}}}, nil
	})
	r.mu.Lock()
	r.inner = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	r.sessions = map[string]bool{}
	r.mu.Unlock()
}

// sessionWriter notes the session id the inner server issues.
type sessionWriter struct {
	http.ResponseWriter
	r *restartingServer
}

func (w sessionWriter) WriteHeader(code int) {
	w.note()
	w.ResponseWriter.WriteHeader(code)
}

func (w sessionWriter) Write(p []byte) (int, error) {
	w.note()
	return w.ResponseWriter.Write(p)
}

func (w sessionWriter) note() {
	if sid := w.Header().Get("Mcp-Session-Id"); sid != "" {
		w.r.mu.Lock()
		w.r.sessions[sid] = true
		w.r.mu.Unlock()
	}
}

func (w sessionWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *restartingServer) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	inner := r.inner
	sid := req.Header.Get("Mcp-Session-Id")
	known := sid == "" || r.sessions[sid]
	if !known {
		r.lost++
	}
	r.mu.Unlock()
	if !known {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`))
		return
	}
	inner.ServeHTTP(sessionWriter{w, r}, req)
}

// A server that restarted answers the old session 404 with a JSON-RPC
// error body: awl starts a new session and sends the call again on it,
// every time (the server is there: no restart of awl's is spent).
func TestSessionLostReinitializes(t *testing.T) {
	rs := newRestartingServer()
	h := httptest.NewServer(rs)
	t.Cleanup(h.Close)
	m, stderr := start(t, []Server{{Name: "web", URL: h.URL}}, Options{Timeout: 10 * time.Second})
	if err := m.Status()[0].Err; err != nil {
		t.Fatalf("start: %v\n%s", err, stderr)
	}
	tl := toolByName(t, m, "mcp__web__work")
	if res := call(t, tl, `{}`); res.IsError || res.Content != "worked" {
		t.Fatalf("first call: %+v", res)
	}
	for i := range 3 {
		rs.restart()
		if res := call(t, tl, `{}`); res.IsError || res.Content != "worked" {
			t.Fatalf("call after restart %d: %+v\n%s", i+1, res, stderr)
		}
	}
	rs.mu.Lock()
	lost := rs.lost
	rs.mu.Unlock()
	if lost < 3 {
		t.Errorf("the old session was sent %d times: the test did not test", lost)
	}
	if n := strings.Count(stderr.String(), "no longer knew awl's session; a new one was started"); n != 3 {
		t.Errorf("stderr says %d renewals:\n%s", n, stderr)
	}
}

// A server that speaks only the 2024-11-05 HTTP+SSE transport (the SDK's
// SSE handler), given as "url": the POST of initialize is refused, the GET
// of the URL brings the "endpoint" event, and awl speaks the old transport
// from there, as the spec advises a client that supports both.
func TestHTTPSSEFallback(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "old", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "work", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "worked"}}}, nil
	})
	h := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(h.Close)
	m, stderr := start(t, []Server{{Name: "old", URL: h.URL}}, Options{Timeout: 10 * time.Second})
	if err := m.Status()[0].Err; err != nil {
		t.Fatalf("start: %v\n%s", err, stderr)
	}
	tl := toolByName(t, m, "mcp__old__work")
	for range 2 {
		if res := call(t, tl, `{}`); res.IsError || res.Content != "worked" {
			t.Fatalf("call: %+v\n%s", res, stderr)
		}
	}
}

// A URL that is neither kind of MCP endpoint says what was tried.
func TestHTTPNeitherTransport(t *testing.T) {
	h := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(h.Close)
	m, _ := start(t, []Server{{Name: "none", URL: h.URL + "/mcp"}}, Options{Timeout: 10 * time.Second})
	err := m.Status()[0].Err
	if err == nil || !strings.Contains(err.Error(), "HTTP 404 Not Found") || !strings.Contains(err.Error(), "no 2024-11-05 event stream either") {
		t.Fatalf("start: %v", err)
	}
}
