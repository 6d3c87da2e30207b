package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// pipeServer is a scripted stdio server on in-memory pipes: it reads
// awl's lines and answers with what respond returns (lines, or nothing).
type pipeServer struct {
	mu  sync.Mutex
	got []message
	toC *io.PipeWriter
}

func newPipeClient(t *testing.T, respond func(m message) []string, handle Handler) (*Client, *pipeServer) {
	t.Helper()
	srvR, cliW := io.Pipe()
	cliR, srvW := io.Pipe()
	ps := &pipeServer{toC: srvW}
	go func() {
		dec := json.NewDecoder(srvR)
		for {
			var m message
			if err := dec.Decode(&m); err != nil {
				srvW.Close()
				return
			}
			ps.mu.Lock()
			ps.got = append(ps.got, m)
			ps.mu.Unlock()
			for _, line := range respond(m) {
				io.WriteString(srvW, line+"\n")
			}
		}
	}()
	if handle == nil {
		handle = func(context.Context, string, json.RawMessage) (any, error) {
			return nil, &Error{Code: CodeMethodNotFound, Message: "no"}
		}
	}
	c := NewClient(&stdioTransport{r: cliR, w: cliW}, handle)
	t.Cleanup(func() { c.Close(); cliW.Close(); srvW.Close() })
	return c, ps
}

func (p *pipeServer) messages() []message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]message(nil), p.got...)
}

// A server's odd but legal answers: a batch, an id it never got, noise, a
// notification, its own request before the answer, and an error.
func TestClientOddAnswers(t *testing.T) {
	asked := make(chan string, 4)
	c, ps := newPipeClient(t, func(m message) []string {
		switch m.Method {
		case "tools/list":
			return []string{
				`not json at all`,
				`{"jsonrpc":"2.0","id":999,"result":{}}`,
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}`,
				`{"jsonrpc":"2.0","id":"s1","method":"roots/list"}`,
				`{"jsonrpc":"2.0","id":"s2","method":"sampling/createMessage","params":{}}`,
				`[{"jsonrpc":"2.0","method":"notifications/progress"},{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"p2"}}]`,
			}
		case "tools/call":
			return []string{`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32000,"message":"it broke"}}`}
		}
		if m.Method == "" && m.ID != nil {
			asked <- string(m.ID) + " " + string(m.Result) + errText(m.Error)
		}
		return nil
	}, func(_ context.Context, method string, _ json.RawMessage) (any, error) {
		if method == "roots/list" {
			return map[string]any{"roots": []struct {
				URI  string `json:"uri"`
				Name string `json:"name"`
			}{{"file:///w", "w"}}}, nil
		}
		return nil, &Error{Code: CodeMethodNotFound, Message: "awl does not offer " + method}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var page struct {
		Tools      []Tool `json:"tools"`
		NextCursor string `json:"nextCursor"`
	}
	if err := c.call(ctx, "tools/list", nil, &page); err != nil || len(page.Tools) != 1 || page.NextCursor != "p2" {
		t.Fatalf("tools/list: %v %+v", err, page)
	}
	got := map[string]bool{}
	for range 2 {
		select {
		case a := <-asked:
			got[a] = true
		case <-ctx.Done():
			t.Fatalf("the server's requests were not answered: %v", got)
		}
	}
	if !got[`"s1" {"roots":[{"uri":"file:///w","name":"w"}]}`] || !got[`"s2" -32601 awl does not offer sampling/createMessage`] {
		t.Errorf("answers to the server's requests: %v", got)
	}
	_, err := c.CallTool(ctx, "a", json.RawMessage(`{}`))
	var re *Error
	if !errors.As(err, &re) || re.Message != "it broke" {
		t.Errorf("an error answer: %v", err)
	}
	if n := len(ps.messages()); n < 2 {
		t.Errorf("%d messages reached the server", n)
	}
}

func errText(e *Error) string {
	if e == nil {
		return ""
	}
	return fmt.Sprintf("%d %s", e.Code, e.Message)
}

// A call whose context ends is given up at once and the server told with
// notifications/cancelled; a server that exits fails every call with
// ErrConnClosed, and later calls too.
func TestClientCancelAndExit(t *testing.T) {
	c, ps := newPipeClient(t, func(m message) []string { return nil }, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := c.call(ctx, "tools/call", map[string]any{"name": "slow"}, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call past its context: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var cancelled bool
		for _, m := range ps.messages() {
			if m.Method == "notifications/cancelled" && strings.Contains(string(m.Params), `"requestId":1`) {
				cancelled = true
			}
		}
		if cancelled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no notifications/cancelled: %+v", ps.messages())
		}
		time.Sleep(10 * time.Millisecond)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		ps.toC.Close() // the server's stdout ends: it exited
	}()
	if err := c.call(context.Background(), "tools/list", nil, nil); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("a call to a server that exits: %v", err)
	}
	if err := c.call(context.Background(), "tools/list", nil, nil); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("a call after the server exited: %v", err)
	}
	select {
	case <-c.done:
	default:
		t.Error("the session did not end")
	}
}

// A server that answers initialize with a protocol version awl does not
// speak is refused, naming it.
func TestClientRefusesUnknownVersion(t *testing.T) {
	c, _ := newPipeClient(t, func(m message) []string {
		if m.Method == "initialize" {
			return []string{`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}`}
		}
		return nil
	}, nil)
	_, err := c.Initialize(context.Background(), "dev", map[string]any{})
	if err == nil || !strings.Contains(err.Error(), `"1999-01-01"`) {
		t.Fatalf("initialize: %v", err)
	}
}

// The event scanner reads what the format allows: CRLF, comments, data over
// several lines, an id or retry alone, events it has no use for, and a data
// line past MaxMessage, which it scans in bounded memory and replaces.
func TestEventScanner(t *testing.T) {
	stream := ": a comment\r\n" +
		"id: 1\r\nretry: 250\r\n\r\n" +
		"event: message\ndata: {\"a\":\ndata: 1}\n\n" +
		"event: ping\ndata: x\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" + strings.Repeat("y", MaxMessage+100) + "\"}]}}\n\n" +
		"data: cut by the end"
	sc := newEventScanner(strings.NewReader(stream))
	type ev struct {
		id, name string
		retry    int64
		data     string
	}
	var got []ev
	for sc.next() {
		got = append(got, ev{sc.id, sc.name, sc.retry, string(sc.data)})
	}
	if len(got) != 4 {
		t.Fatalf("%d events: %+v", len(got), got)
	}
	if got[0].id != "1" || got[0].retry != 250 || got[0].data != "" {
		t.Errorf("event 1: %+v", got[0])
	}
	if got[1].name != "message" || got[1].data != "{\"a\":\n1}" {
		t.Errorf("event 2: %+v", got[1])
	}
	if got[2].name != "ping" {
		t.Errorf("event 3: %+v", got[2])
	}
	big := got[3].data
	if len(big) > 64<<10 || !strings.Contains(big, `"id":7`) || !strings.Contains(big, "cut as it was read") {
		t.Errorf("the big event: %d bytes: %.200s", len(big), big)
	}
}

// Streamable HTTP: the session id and protocol version go on every request
// after initialize, a response stream carries the server's request before
// the answer, a transient status fails the call only, a 404 for the session
// ends it, and closing sends DELETE.
func TestHTTPTransport(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	status := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m message
		json.Unmarshal(body, &m)
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s sid=%s pv=%s", r.Method, m.Method, r.Header.Get(sessionIDHeader), r.Header.Get(protocolVersionHeader)))
		st := status
		mu.Unlock()
		switch {
		case r.Method == http.MethodGet:
			w.WriteHeader(http.StatusMethodNotAllowed)
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		case st != 0:
			w.WriteHeader(st)
		case m.Method == "initialize":
			w.Header().Set(sessionIDHeader, "sess-1")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"h","version":"1"}}}`, m.ID)
		case m.Method == "tools/list":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\n\nid: e1\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[]}}\n\n", m.ID)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer srv.Close()
	pinged := make(chan bool, 1)
	c := NewClient(NewHTTP(srv.URL, srv.Client(), nil, 2), func(_ context.Context, method string, _ json.RawMessage) (any, error) {
		if method == "ping" {
			pinged <- true
		}
		return struct{}{}, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, "dev", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-pinged:
	case <-ctx.Done():
		t.Fatal("the server's ping on the response stream was not served")
	}
	// The GET stream opens on its own goroutine after the handshake: wait
	// for it (bounded) before the statuses change and the session ends,
	// which on a loaded machine came before the GET was sent.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		all := strings.Join(seen, "\n")
		mu.Unlock()
		if strings.Contains(all, "GET  sid=sess-1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no GET stream asked for:\n%s", all)
		}
	}
	mu.Lock()
	status = http.StatusServiceUnavailable
	mu.Unlock()
	if _, err := c.CallTool(ctx, "x", json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("a 503: %v", err)
	}
	select {
	case <-c.done:
		t.Fatal("a transient status ended the session")
	default:
	}
	mu.Lock()
	status = http.StatusNotFound
	mu.Unlock()
	if _, err := c.CallTool(ctx, "x", json.RawMessage(`{}`)); !errors.Is(err, ErrSessionMissing) {
		t.Fatalf("a 404 for the session: %v", err)
	}
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		t.Fatal("a 404 for the session did not end it")
	}
	c.Close()
	mu.Lock()
	if strings.Contains(strings.Join(seen, "\n"), "DELETE") {
		t.Errorf("DELETE for a session the server no longer knows:\n%s", strings.Join(seen, "\n"))
	}
	status = 0
	mu.Unlock()
	// A session that ends well ends on the server too.
	c = NewClient(NewHTTP(srv.URL, srv.Client(), nil, 2), func(context.Context, string, json.RawMessage) (any, error) { return struct{}{}, nil })
	if _, err := c.Initialize(ctx, "dev", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(seen, "\n")
	for _, want := range []string{
		"POST initialize sid= pv=",
		"POST notifications/initialized sid=sess-1 pv=2025-06-18",
		"POST tools/list sid=sess-1 pv=2025-06-18",
		"DELETE  sid=sess-1 pv=2025-06-18",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q among the requests:\n%s", want, all)
		}
	}
}

// A JSON answer past MaxMessage is read through in bounded memory and
// delivered as its cut replacement.
func TestHTTPBigJSONAnswer(t *testing.T) {
	h := newHTTP("http://unused", nil, nil, 0)
	var got [][]byte
	h.start(func(b []byte) { got = append(got, bytes.Clone(b)) }, nil, nil)
	body := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"` + strings.Repeat("z", MaxMessage+10) + `END"}],"isError":true}}`
	h.readJSON(strings.NewReader(body))
	if len(got) != 1 || len(got[0]) > 64<<10 || !answers(got[0], "3") || !bytes.Contains(got[0], []byte(`"isError":true`)) || !bytes.Contains(got[0], []byte("END")) {
		t.Fatalf("delivered %d messages: %.300s", len(got), got)
	}
}
