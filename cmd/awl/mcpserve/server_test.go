package mcpserve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
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
	return startCtx(t, context.Background(), s)
}

// startCtx is start with Serve's context.
func startCtx(t *testing.T, ctx context.Context, s *Server) *pipe {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &pipe{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() {
		p.done <- s.Serve(ctx, inR, outW)
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
// beside it are answered; at the end of input the call left runs to its
// end and is answered before Serve returns.
func TestCancelAndEOF(t *testing.T) {
	started := make(chan string, 4)
	release := make(chan struct{})
	var mu sync.Mutex
	ended := map[string]bool{}
	block := Tool{
		Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`),
		Call: func(ctx context.Context, args json.RawMessage, _ func(string)) Result {
			started <- string(args)
			text := "released"
			select {
			case <-ctx.Done():
				text = "cancelled"
			case <-release:
			}
			time.Sleep(20 * time.Millisecond) // a run ending its session
			mu.Lock()
			ended[string(args)] = true
			mu.Unlock()
			return Result{Text: text}
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
	// The end of input cancels nothing: the call "1" still runs, and
	// Serve waits for it.
	p.in.Close()
	select {
	case err := <-p.done:
		t.Fatalf("Serve returned (%v) with a call in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	res = p.recv()
	if res["id"] != "1" || resultText(res) != "released" {
		t.Fatalf("the call in flight at the end of input: %v", res)
	}
	if err := <-p.done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !ended[`"b"`] {
		t.Error("Serve returned before the call in flight ended")
	}
	// Nothing was answered for the call the client cancelled.
	if rest, _ := io.ReadAll(p.out); len(rest) > 0 {
		t.Errorf("answered a cancelled call: %s", rest)
	}
}

// resultText is the text of a tools/call answer.
func resultText(m map[string]any) string {
	r, _ := m["result"].(map[string]any)
	c, _ := r["content"].([]any)
	if len(c) == 0 {
		return ""
	}
	text, _ := c[0].(map[string]any)["text"].(string)
	return text
}

// A shutdown (Serve's context done: a signal) cancels the calls in
// flight and answers each with what its tool returned, marked as ended by
// the server; a request read while they end is answered, a call refused.
func TestShutdownAnswers(t *testing.T) {
	started := make(chan struct{}, 1)
	finish := make(chan struct{})
	block := Tool{
		Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`),
		Call: func(ctx context.Context, _ json.RawMessage, _ func(string)) Result {
			started <- struct{}{}
			<-ctx.Done()
			<-finish // a run ending its session
			return Result{Text: "awl run exited 130 (interrupted)", IsError: true}
		},
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	p := startCtx(t, ctx, &Server{Name: "t", Tools: []Tool{block, echoTool()}})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
	<-started
	cancel(errors.New("interrupted by terminated"))
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	code, id := errCode(t, p.recv())
	if code != CodeInternal || id != "2" {
		t.Errorf("a call after the shutdown began: code %v id %s", code, id)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if m := p.recv(); m["id"] != 3.0 || m["result"] == nil {
		t.Errorf("a ping after the shutdown began: %v", m)
	}
	close(finish)
	res := p.recv()
	want := "the server ended the call: interrupted by terminated\n\nawl run exited 130 (interrupted)"
	if res["id"] != 1.0 || resultText(res) != want || res["result"].(map[string]any)["isError"] != true {
		t.Fatalf("the call the shutdown ended: %v", res)
	}
	if err := <-p.done; err != nil {
		t.Fatal(err)
	}
}

// failWriter fails every write, as a pipe whose reader is gone does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// A write that fails (the client closed its end of stdout) ends the calls
// in flight: their answers would reach nobody.
func TestBrokenOut(t *testing.T) {
	ended := make(chan struct{})
	started := make(chan struct{})
	block := Tool{
		Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`),
		Call: func(ctx context.Context, _ json.RawMessage, _ func(string)) Result {
			close(started)
			<-ctx.Done()
			close(ended)
			return Result{Text: "cancelled", IsError: true}
		},
	}
	inR, inW := io.Pipe()
	defer inW.Close()
	var log strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- (&Server{Name: "t", Tools: []Tool{block}, Log: &log}).Serve(context.Background(), inR, failWriter{})
	}()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block","arguments":{}}}`+"\n")
	<-started
	io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("a failed write did not end the call in flight")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "the client is gone") {
		t.Errorf("log: %q", log.String())
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
// stream for a call; DELETE ends a session and cancels its calls, whose
// streams get their answers.
func TestHTTP(t *testing.T) {
	ended := make(chan struct{})
	block := Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`), Call: func(ctx context.Context, _ json.RawMessage, progress func(string)) Result {
		progress("started")
		<-ctx.Done()
		close(ended)
		return Result{Text: "stopped", IsError: true}
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
	stream := bufio.NewReader(resp.Body)
	line, _ := stream.ReadString('\n')
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
	rest, _ := io.ReadAll(stream)
	resp.Body.Close()
	if !strings.Contains(string(rest), `"id":3,"result":{"content":[{"text":"the server ended the call: the client ended the session (DELETE)\n\nstopped"`) {
		t.Errorf("the stream of the call DELETE ended: %s", rest)
	}
	if resp := post(sid, `{"jsonrpc":"2.0","id":4,"method":"ping"}`); resp.StatusCode != 404 {
		t.Errorf("after DELETE: %d", resp.StatusCode)
	}
}
