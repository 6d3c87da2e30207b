package jsonrpc

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// seen is one request as a stateless server received it.
type seen struct {
	headers http.Header
	msg     struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params map[string]any  `json:"params"`
	}
}

// TestStatelessProtocol: against a 2026-07-28 server, awl asks
// server/discover (once more after a -32022 naming the version), never
// initializes, and sends every request with its _meta and the version,
// method and name headers; a tool's x-mcp-header arguments go as
// Mcp-Param-* headers (base64 where the value is not plain ASCII), a tool
// with an invalid annotation is marked so; an input_required result is
// answered with the handler and the call sent again with a new id, the
// answers and the server's requestState as it came, or none.
func TestStatelessProtocol(t *testing.T) {
	var mu sync.Mutex
	var got []seen
	rejected := false
	rounds := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var s seen
		s.headers = r.Header.Clone()
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &s.msg)
		mu.Lock()
		got = append(got, s)
		first := !rejected
		rejected = true
		mu.Unlock()
		reply := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(s.msg.ID)+`,"result":`+result+`}`)
		}
		if first {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(s.msg.ID)+`,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"]}}}`)
			return
		}
		switch s.msg.Method {
		case "server/discover":
			reply(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"},"instructions":"be kind"}`)
		case "tools/list":
			reply(`{"tools":[{"name":"hdr","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}},` +
				`{"name":"bad","inputSchema":{"type":"object","properties":{"o":{"type":"object","x-mcp-header":"O"}}}}]}`)
		case "tools/call":
			name, _ := s.msg.Params["name"].(string)
			mu.Lock()
			rounds[name]++
			n := rounds[name]
			mu.Unlock()
			if n == 1 && name != "hdr" {
				state := ``
				if name == "stateful" {
					state = `,"requestState":"opaque-1"`
				}
				reply(`{"resultType":"input_required","inputRequests":{"ok":{"method":"elicitation/create","params":{"message":"sure?","requestedSchema":{"type":"object","properties":{}}}}}` + state + `}`)
				return
			}
			reply(`{"content":[{"type":"text","text":"done ` + name + `"}]}`)
		default:
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	c := NewClient(NewHTTP(srv.URL, srv.Client(), nil, 2), func(_ context.Context, method string, params json.RawMessage) (any, error) {
		if method != "elicitation/create" {
			return nil, &Error{Code: CodeMethodNotFound, Message: method}
		}
		return map[string]any{"action": "accept", "content": map[string]any{}}, nil
	})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.Initialize(ctx, "1.2.3", map[string]any{"elicitation": map[string]any{}})
	if err != nil || res.ProtocolVersion != "2026-07-28" || res.Instructions != "be kind" {
		t.Fatalf("initialize: %+v %v", res, err)
	}
	tools, err := c.Tools(ctx)
	if err != nil || len(tools) != 2 || tools[0].Invalid != "" || !strings.Contains(tools[1].Invalid, "only a string, integer or boolean") {
		t.Fatalf("tools: %+v %v", tools, err)
	}
	for _, name := range []string{"hdr", "stateful", "stateless"} {
		r, err := c.CallTool(ctx, name, json.RawMessage(`{"region":"Zürich","n":7}`))
		if err != nil || len(r.Content) != 1 || !strings.Contains(string(r.Content[0]), "done "+name) {
			t.Fatalf("call %s: %+v %v", name, r, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var calls []seen
	for i, s := range got {
		if s.msg.Method == "initialize" || s.msg.Method == "notifications/initialized" || s.headers.Get("Mcp-Session-Id") != "" {
			t.Errorf("request %d: %s, session %q: the stateless protocol has neither", i, s.msg.Method, s.headers.Get("Mcp-Session-Id"))
		}
		meta, _ := s.msg.Params["_meta"].(map[string]any)
		info, _ := meta["io.modelcontextprotocol/clientInfo"].(map[string]any)
		if s.headers.Get("MCP-Protocol-Version") != "2026-07-28" || meta["io.modelcontextprotocol/protocolVersion"] != "2026-07-28" ||
			meta["io.modelcontextprotocol/clientCapabilities"] == nil || info["version"] != "1.2.3" || s.headers.Get("Mcp-Method") != s.msg.Method {
			t.Errorf("request %d (%s): headers %v, _meta %v", i, s.msg.Method, s.headers, meta)
		}
		if s.msg.Method == "tools/call" {
			calls = append(calls, s)
		}
	}
	if len(got) < 2 || got[0].msg.Method != "server/discover" || got[1].msg.Method != "server/discover" {
		t.Errorf("discover was not asked twice first")
	}
	if len(calls) != 5 {
		t.Fatalf("%d tools/call requests, want 5", len(calls))
	}
	if h := calls[0].headers; h.Get("Mcp-Name") != "hdr" || h.Get("Mcp-Param-Region") != "=?base64?WsO8cmljaA==?=" || h.Get("Mcp-Param-N") != "7" {
		t.Errorf("hdr's headers: %v", h)
	}
	for i, want := range []struct {
		state any
		input bool
	}{{nil, false}, {nil, false}, {"opaque-1", true}, {nil, false}, {nil, true}} {
		p := calls[i].msg.Params
		if p["requestState"] != want.state || (p["inputResponses"] != nil) != want.input {
			t.Errorf("call %d (%s): requestState %v, inputResponses %v", i, p["name"], p["requestState"], p["inputResponses"])
		}
	}
	if string(calls[1].msg.ID) == string(calls[2].msg.ID) || string(calls[3].msg.ID) == string(calls[4].msg.ID) {
		t.Errorf("a round was sent again with the same id")
	}
	if calls[2].msg.Params["inputResponses"].(map[string]any)["ok"].(map[string]any)["action"] != "accept" {
		t.Errorf("inputResponses: %v", calls[2].msg.Params["inputResponses"])
	}
}

// A server that does not know server/discover (a 2025 one answering an
// HTTP 400, as the TypeScript SDK's does before initialize) gets the
// initialize handshake on the same connection, without the version header.
func TestDiscoverFallsBackToInitialize(t *testing.T) {
	var mu sync.Mutex
	var methods []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &m)
		mu.Lock()
		methods = append(methods, m.Method+" "+r.Header.Get("MCP-Protocol-Version"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch m.Method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"old","version":"1"}}}`)
		case "notifications/initialized":
			w.WriteHeader(http.StatusAccepted)
		default:
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}`)
		}
	}))
	defer srv.Close()
	c := NewClient(NewHTTP(srv.URL, srv.Client(), nil, 2), func(context.Context, string, json.RawMessage) (any, error) { return struct{}{}, nil })
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.Initialize(ctx, "1", map[string]any{})
	if err != nil || res.ProtocolVersion != "2025-11-25" {
		t.Fatalf("initialize: %+v %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"server/discover 2026-07-28", "initialize ", "notifications/initialized 2025-11-25"}
	if strings.Join(methods[:min(3, len(methods))], "|") != strings.Join(want, "|") {
		t.Errorf("requests %q, want %q", methods, want)
	}
}
