package mcpserve

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// pipe runs s on a pair of pipes: send writes a line, recv reads one.
type pipe struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

func start(t *testing.T, s *Server) *pipe {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &pipe{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() {
		p.done <- s.Serve(context.Background(), inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close() })
	return p
}

func (p *pipe) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

func (p *pipe) recv() map[string]any {
	p.t.Helper()
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		p.t.Fatalf("reading an answer: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		p.t.Fatalf("answer %q: %v", line, err)
	}
	return m
}

// errCode is an answer's error code and its id, as JSON.
func errCode(t *testing.T, m map[string]any) (float64, string) {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("not an error: %v", m)
	}
	id, _ := json.Marshal(m["id"])
	return e["code"].(float64), string(id)
}

func echoTool() Tool {
	return Tool{
		Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`),
		Call: func(ctx context.Context, args json.RawMessage, progress func(string)) Result {
			progress("echoing")
			return Result{Text: string(args), Structured: map[string]any{"n": len(args)}}
		},
	}
}

// Malformed lines are each answered with the error the JSON-RPC spec
// gives them, and the server goes on.
func TestMalformed(t *testing.T) {
	p := start(t, &Server{Name: "t", Tools: []Tool{echoTool()}, MaxMessage: 1024})
	cases := []struct {
		line string
		code float64
		id   string
	}{
		{`not json`, CodeParse, "null"},
		{`{"jsonrpc":"2.0","id":1,"method":`, CodeParse, "null"},
		{`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`, CodeInvalidRequest, "null"},
		{`{"jsonrpc":"1.0","id":3,"method":"ping"}`, CodeInvalidRequest, "3"},
		{`{"jsonrpc":"2.0","method":""}`, CodeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":"x","method":"resources/list"}`, CodeMethodNotFound, `"x"`},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}`, CodeInvalidParams, "5"},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":[1]}`, CodeInvalidParams, "6"},
		{`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}`, CodeInvalidParams, "7"},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"x":"` + strings.Repeat("a", 2000) + `"}}}`, CodeInvalidRequest, "null"},
	}
	for _, c := range cases {
		p.send(c.line)
		code, id := errCode(t, p.recv())
		if code != c.code || id != c.id {
			t.Errorf("%.60s: code %v id %s, want %v %s", c.line, code, id, c.code, c.id)
		}
	}
	// Blank lines and notifications get no answer; a ping after all that
	// still does.
	p.send(``)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if m := p.recv(); m["id"] != 9.0 || m["result"] == nil {
		t.Fatalf("ping: %v", m)
	}
}

// initialize agrees on the client's version when the server speaks it,
// else offers its newest.
func TestVersions(t *testing.T) {
	p := start(t, &Server{Name: "t", Version: "v1"})
	for _, c := range [][2]string{{"2025-06-18", "2025-06-18"}, {"2024-11-05", "2024-11-05"}, {"2099-01-01", Versions[0]}} {
		p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + c[0] + `","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		res := p.recv()["result"].(map[string]any)
		if res["protocolVersion"] != c[1] || res["serverInfo"].(map[string]any)["version"] != "v1" {
			t.Errorf("asked %s: %v", c[0], res)
		}
	}
}

// A cancelled call ends its tool's context and gets no answer; the calls
// beside it are answered; the end of input cancels what is left and
// Serve waits for it.
func TestCancelAndEOF(t *testing.T) {
	started := make(chan string, 4)
	var mu sync.Mutex
	ended := map[string]bool{}
	block := Tool{
		Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`),
		Call: func(ctx context.Context, args json.RawMessage, _ func(string)) Result {
			started <- string(args)
			<-ctx.Done()
			time.Sleep(20 * time.Millisecond) // a run ending its session
			mu.Lock()
			ended[string(args)] = true
			mu.Unlock()
			return Result{Text: "cancelled"}
		},
	}
	p := start(t, &Server{Name: "t", Tools: []Tool{block, echoTool()}})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block","arguments":"a"}}`)
	p.send(`{"jsonrpc":"2.0","id":"1","method":"tools/call","params":{"name":"block","arguments":"b"}}`)
	<-started
	<-started
	// A second call with a running call's id is refused.
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	if code, _ := errCode(t, p.recv()); code != CodeInvalidRequest {
		t.Errorf("a duplicate id: code %v", code)
	}
	// The number id 1 is cancelled, not the string "1".
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"k":1},"_meta":{"progressToken":"tok"}}}`)
	prog := p.recv()
	if prog["method"] != "notifications/progress" || prog["params"].(map[string]any)["progressToken"] != "tok" || prog["params"].(map[string]any)["progress"] != 1.0 {
		t.Fatalf("progress: %v", prog)
	}
	res := p.recv()
	if res["id"] != 2.0 || res["result"].(map[string]any)["structuredContent"].(map[string]any)["n"] != 7.0 {
		t.Fatalf("echo: %v", res)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		a, b := ended[`"a"`], ended[`"b"`]
		mu.Unlock()
		if b {
			t.Fatal("cancelling id 1 ended the call with id \"1\"")
		}
		if a {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("cancelling id 1 did not end its call")
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.in.Close()
	if err := <-p.done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !ended[`"b"`] {
		t.Error("Serve returned before the call in flight ended")
	}
	// Nothing was answered for either cancelled call.
	if rest, _ := io.ReadAll(p.out); len(rest) > 0 {
		t.Errorf("answered a cancelled call: %s", rest)
	}
}

// go-sdk's client, over in-memory pipes: the handshake, the tool list,
// a call with its structured content and progress.
func TestGoSDKClient(t *testing.T) {
	s := &Server{Name: "t", Version: "1", Tools: []Tool{echoTool()}}
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	go s.Serve(context.Background(), sr, sw)
	var mu sync.Mutex
	var msgs []string
	client := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			msgs = append(msgs, req.Params.Message)
			mu.Unlock()
		},
	})
	cs, err := client.Connect(context.Background(), &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(lt.Tools) != 1 || lt.Tools[0].Name != "echo" {
		t.Fatalf("tools: %v %v", lt, err)
	}
	params := &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"a": "b"}}
	params.SetProgressToken(7)
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if tc := res.Content[0].(*sdk.TextContent); tc.Text != `{"a":"b"}` || res.IsError {
		t.Fatalf("result %+v", res)
	}
	time.Sleep(50 * time.Millisecond) // the notification may be handled after the answer
	mu.Lock()
	defer mu.Unlock()
	if len(msgs) != 1 || msgs[0] != "echoing" {
		t.Errorf("progress %v", msgs)
	}
}

// Over HTTP: the token, the Origin, the session, the method and the size
// are each checked; a JSON answer when it is ready at once, an event
// stream for a call; DELETE ends a session and cancels its calls.
func TestHTTP(t *testing.T) {
	ended := make(chan struct{})
	block := Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`), Call: func(ctx context.Context, _ json.RawMessage, progress func(string)) Result {
		progress("started")
		<-ctx.Done()
		close(ended)
		return Result{}
	}}
	s := &Server{Name: "t", Tools: []Tool{echoTool(), block}, MaxMessage: 4096}
	h := s.HTTPHandler(context.Background(), "tok")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve1(ctx, ln, h) }()
	defer func() {
		h.Close()
		stop()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	srv := struct{ URL string }{"http://" + ln.Addr().String()}
	post := func(session, body string, header ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer tok")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
			if header[i] == "Host" {
				req.Host = header[i+1]
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || sid == "" || resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(b), `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	for _, c := range []struct {
		name, session, body string
		header              []string
		want                int
	}{
		{"no token", sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, []string{"Authorization", ""}, 401},
		{"another origin", sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, []string{"Origin", "http://attacker.example:8080"}, 403},
		{"a loopback origin", sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, []string{"Origin", "http://localhost:3000"}, 200},
		{"another host", sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, []string{"Host", "evil.example.com"}, 403},
		{"no session", "", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, nil, 400},
		{"unknown session", "ffff", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, nil, 404},
		{"a version not spoken", sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, []string{"MCP-Protocol-Version", "1999-01-01"}, 400},
		{"too large", sid, `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"` + strings.Repeat("a", 5000) + `"}}`, nil, 413},
		{"a notification", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil, 202},
	} {
		resp := post(c.session, c.body, c.header...)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
	req, _ := http.NewRequest("GET", srv.URL+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer tok")
	if resp, _ := http.DefaultClient.Do(req); resp.StatusCode != 405 {
		t.Errorf("GET: %d", resp.StatusCode)
	}
	// A call that blocks streams its progress; DELETE cancels it.
	resp = post(sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"block","_meta":{"progressToken":"x"}}}`)
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("a call: %v", resp.Header)
	}
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	if line != "event: message\n" {
		t.Errorf("stream: %q", line)
	}
	req, _ = http.NewRequest("DELETE", srv.URL+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Mcp-Session-Id", sid)
	if resp, _ := http.DefaultClient.Do(req); resp.StatusCode != 204 {
		t.Errorf("DELETE: %d", resp.StatusCode)
	}
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("DELETE did not cancel the session's call")
	}
	resp.Body.Close()
	if resp := post(sid, `{"jsonrpc":"2.0","id":4,"method":"ping"}`); resp.StatusCode != 404 {
		t.Errorf("after DELETE: %d", resp.StatusCode)
	}
}
