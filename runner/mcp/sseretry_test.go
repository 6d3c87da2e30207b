package mcp

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// resumingServer is a streamable HTTP server as protocol 2025-11-25 allows
// one to be: it answers tools/call with an SSE stream that carries only a
// priming event (an id and a retry delay) and then ends, and delivers the
// result on the GET the client reconnects with, which must carry
// Last-Event-ID.
type resumingServer struct {
	mu          sync.Mutex
	pending     json.RawMessage // id of the call to answer on reconnect
	lastEventID []string
}

func (s *resumingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Mcp-Session-Id", "sess-1")
	if r.Method == http.MethodGet {
		// Only the stream the call's response began is resumed on it: the
		// standalone stream, which the client opens after the handshake and
		// may open after the call was sent, must not carry the result, or
		// the call is answered without the resumption this test is about.
		last := r.Header.Get("Last-Event-ID")
		s.mu.Lock()
		s.lastEventID = append(s.lastEventID, last)
		var id json.RawMessage
		if last == "ev-1" {
			id, s.pending = s.pending, nil
		}
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: ev-2\ndata: \n\n")
		if id != nil {
			fmt.Fprintf(w, "event: message\nid: ev-3\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"resumed\"}]}}\n\n", id)
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	}
	if r.Method == http.MethodDelete {
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	json.Unmarshal(body, &req)
	reply := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
	}
	switch req.Method {
	case "initialize":
		reply(`{"protocolVersion":"2025-11-25","serverInfo":{"name":"resuming","version":"1"},"capabilities":{"tools":{}}}`)
	case "tools/list":
		reply(`{"tools":[{"name":"again","inputSchema":{"type":"object"}}]}`)
	case "tools/call":
		s.mu.Lock()
		s.pending = req.ID
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: ev-1\nretry: 100\ndata: \n\n")
		w.(http.Flusher).Flush()
		time.Sleep(20 * time.Millisecond)
	default:
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		reply(`{}`)
	}
}

// A server that ends a call's response stream after a priming event gets a
// GET with Last-Event-ID after the retry delay, and the call its result.
func TestHTTPCallResumesAfterStreamClose(t *testing.T) {
	rs := &resumingServer{}
	h := httptest.NewServer(rs)
	t.Cleanup(h.Close)
	m, stderr := start(t, []Server{{Name: "web", URL: h.URL}}, Options{Timeout: 10 * time.Second})
	if st := m.Status(); st[0].Err != nil {
		t.Fatalf("status: %+v\n%s", st, stderr)
	}
	res := call(t, toolByName(t, m, "mcp__web__again"), `{}`)
	if res.IsError || res.Content != "resumed" {
		t.Fatalf("result: %+v\n%s", res, stderr)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	// The first GET may be the standalone stream, without Last-Event-ID.
	if !slices.Contains(rs.lastEventID, "ev-1") {
		t.Fatalf("GETs sent Last-Event-ID %q, none ev-1", rs.lastEventID)
	}
}
