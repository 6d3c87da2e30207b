package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// rawMCP is a streamable HTTP MCP server written out by hand, for what an
// SDK's server will not send: it lists tools as the JSON given, and
// answers a call with the tool's name.
func rawMCP(t *testing.T, tools string) *httptest.Server {
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &m)
		var result string
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`
		case "tools/list":
			result = `{"tools":` + tools + `}`
		case "tools/call":
			n, _ := json.Marshal("called " + m.Params.Name)
			result = `{"content":[{"type":"text","text":` + string(n) + `}]}`
		default:
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+result+`}`)
	}))
	t.Cleanup(h.Close)
	return h
}

// A tool whose inputSchema is false takes no arguments at all: its schema
// goes to the run as false, which offers it to no model (the runner's
// lowering refuses it, with a notice), not as an empty object schema.
func TestFalseSchemaKept(t *testing.T) {
	h := rawMCP(t, `[{"name":"never","inputSchema":false},{"name":"any","inputSchema":true},{"name":"ok","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}]`)
	m, stderr := start(t, []Server{{Name: "raw", URL: h.URL}}, Options{Timeout: 10 * time.Second})
	if err := m.Status()[0].Err; err != nil {
		t.Fatalf("start: %v\n%s", err, stderr)
	}
	for name, want := range map[string]string{
		"mcp__raw__never": `false`,
		"mcp__raw__any":   `true`,
		"mcp__raw__ok":    `{"properties":{"a":{"type":"string"}},"type":"object"}`,
	} {
		if got := string(toolByName(t, m, name).Schema()); got != want {
			t.Errorf("%s: schema %s, want %s", name, got, want)
		}
	}
}

// A stdio server that exits at start is reported with its exit status and
// the end of its stderr, not with the write that failed after it.
func TestExitAtStartReported(t *testing.T) {
	srv := Server{Name: "gone", Command: "sh", Args: []string{"-c", "echo starting >&2; printf 'Error: GITHUB_TOKEN is not set\n' >&2; exit 3"}}
	m, stderr := start(t, []Server{srv}, Options{Timeout: 10 * time.Second})
	err := m.Status()[0].Err
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "its stderr ended: starting | Error: GITHUB_TOKEN is not set") ||
		strings.Contains(err.Error(), "file already closed") {
		t.Fatalf("start: %v\n%s", err, stderr)
	}
}

// An HTTP server that drops the connection in the middle of a call is
// reported so, not as `Post "…": EOF`; the next call goes through.
func TestHTTPConnectionDroppedMidCall(t *testing.T) {
	inner := rawMCP(t, `[{"name":"work","inputSchema":{"type":"object"}}]`)
	var dropped atomic.Bool
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"tools/call"`)) && dropped.CompareAndSwap(false, true) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		req, _ := http.NewRequest(r.Method, inner.URL, bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(h.Close)
	m, stderr := start(t, []Server{{Name: "web", URL: h.URL + "/mcp"}}, Options{Timeout: 10 * time.Second})
	tl := toolByName(t, m, "mcp__web__work")
	res := call(t, tl, `{}`)
	if !res.IsError || !strings.Contains(res.Content, `sending "tools/call": the server closed the connection before it answered`) || strings.Contains(res.Content, "EOF") {
		t.Fatalf("result: %+v\n%s", res, stderr)
	}
	if res := call(t, tl, `{}`); res.IsError || res.Content != "called work" {
		t.Fatalf("the next call: %+v", res)
	}
}
