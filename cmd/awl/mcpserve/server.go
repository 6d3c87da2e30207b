// Package mcpserve is the server side of MCP that `awl mcp serve` speaks
// over stdio: JSON-RPC 2.0 one message a line, the initialize handshake,
// ping, tools/list, and tools/call handed to the Tool that owns the name,
// each call in a goroutine of its own with progress notifications and
// notifications/cancelled. It knows nothing of what a tool does: cmd/awl
// hands it the tools (each starts an `awl run` process).
//
// It is awl's own, as the client (runner/mcp/jsonrpc) is: the SDK's mcp
// package links encoding/gob and a JSON Schema library whose initialisers
// would run on every start of awl (cmd/awl's TestNotLinked).
package mcpserve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
)

// Versions are the MCP revisions the server speaks, newest first: a client
// asking for one of them gets it, any other gets the first.
var Versions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// JSON-RPC error codes.
const (
	CodeParse          = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
)

// Tool is one tool the server offers.
type Tool struct {
	Name         string
	Title        string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// ReadOnly is the readOnlyHint annotation; Destructive the
	// destructiveHint.
	ReadOnly, Destructive bool
	// Call runs the tool with its arguments (a JSON object, or nil when
	// the request had none). progress, when the client asked for it, sends
	// a progress notification with msg. ctx ends when the client cancels
	// the call or goes away, or the server shuts down.
	Call func(ctx context.Context, args json.RawMessage, progress func(msg string)) Result
}

// Result is what a tool call answers: the text (one text content item),
// the structured content, and whether it is an error.
type Result struct {
	Text       string
	Structured any
	IsError    bool
}

// Server is an MCP server with a fixed set of tools.
type Server struct {
	Name, Version string
	Instructions  string
	Tools         []Tool
	// MaxMessage is the longest line read whole; a longer one is dropped
	// as it is read and answered with an error.
	MaxMessage int
	// Log, when set, is told what the server does not answer (a line that
	// is too long, a response it did not ask for).
	Log io.Writer
}

// message is one JSON-RPC message of any kind.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// conn is one client's connection: the writer and the calls in flight.
type conn struct {
	s   *Server
	out io.Writer
	wmu sync.Mutex
	// werr is the first write to out that failed; broken, over stdio, is
	// told of it: nobody reads the answers any more.
	werr   error
	broken func(error)
	mu     sync.Mutex
	calls  map[string]*inFlight // by request id, as sent
	// wg counts the calls in flight; ctx, over HTTP, is the session's.
	wg  *sync.WaitGroup
	ctx context.Context
}

// inFlight is a call in flight: its cancel, and whether the client
// cancelled it (notifications/cancelled: then it is not answered).
type inFlight struct {
	cancel   context.CancelFunc
	byClient bool // under conn.mu
}

// Serve answers the messages read from in on out. When in ends, no more
// requests are read, and the calls received run to their end and are
// answered before Serve returns (a client that closes its side of a pipe
// after its last request, `printf ... | awl mcp serve`, gets its answers).
// When ctx is done (a signal), or a write to out fails (nobody reads the
// answers), the calls in flight are cancelled, each answered with what
// its tool returned when cancelled, and Serve returns once all have ended;
// a request read meanwhile is answered, a call refused.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c := &conn{s: s, out: out, broken: cancel, calls: map[string]*inFlight{}, wg: &sync.WaitGroup{}}
	quit := make(chan struct{})
	defer close(quit)
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		readErr <- s.readLines(quit, in, lines, c)
	}()
	var err error
	for reading := true; reading; {
		select {
		case <-ctx.Done():
			reading = false
		case err = <-readErr:
			reading = false
		case line := <-lines:
			c.handle(ctx, line, c.writeLine)
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		cancel(err) // stdin failed: the client is gone
	}
	// No call starts from here on: in has ended, or ctx is done.
	idle := make(chan struct{})
	go func() {
		c.wg.Wait()
		close(idle)
	}()
	for {
		select {
		case <-idle:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case line := <-lines:
			c.handle(ctx, line, c.writeLine)
		}
	}
}

// readLines hands each line of in to lines until quit is closed; a line
// over MaxMessage is dropped as it is read and answered with an error
// (its id is not known).
func (s *Server) readLines(quit <-chan struct{}, in io.Reader, lines chan<- []byte, c *conn) error {
	br := bufio.NewReaderSize(in, 64<<10)
	max := s.MaxMessage
	if max <= 0 {
		max = 16 << 20
	}
	var line []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			line = append(line, chunk...)
			if len(line) > max {
				tooLong, line = true, nil
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if tooLong {
			fail(c.writeLine, nil, CodeInvalidRequest, fmt.Sprintf("message over %d bytes: dropped", max))
			if s.Log != nil {
				fmt.Fprintf(s.Log, "awl: mcp serve: a message over %d bytes was dropped\n", max)
			}
		} else if len(line) > 0 {
			select {
			case lines <- line:
			case <-quit:
				return nil
			}
		}
		line, tooLong = nil, false
		if err != nil {
			return err
		}
	}
}

// writeLine writes one message as a line of out. Once a write has failed
// (EPIPE: the client closed its end) nothing more is written, and the
// calls in flight are cancelled: their answers would reach nobody.
func (c *conn) writeLine(m message) {
	b := encode(m)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.werr != nil {
		return
	}
	if _, err := c.out.Write(append(b, '\n')); err != nil {
		c.werr = err
		if c.s.Log != nil {
			fmt.Fprintf(c.s.Log, "awl: mcp serve: writing an answer: %v: the client is gone\n", err)
		}
		if c.broken != nil {
			c.broken(fmt.Errorf("the client is gone (writing an answer: %w)", err))
		}
	}
}

// encode is m as JSON-RPC 2.0.
func encode(m message) []byte {
	m.JSONRPC = "2.0"
	b, err := json.Marshal(m)
	if err != nil {
		b, _ = json.Marshal(message{JSONRPC: "2.0", ID: m.ID, Error: &rpcError{Code: CodeInternal, Message: err.Error()}})
	}
	return b
}

// sendFunc sends a message where the answer to a request goes: a line of
// stdout, or an HTTP response's event stream.
type sendFunc func(message)

// fail answers the request id with an error.
func fail(send sendFunc, id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	send(message{ID: id, Error: &rpcError{Code: code, Message: msg}})
}

// answered is a channel already closed: what handle returns when it has
// answered, or will not answer, at once. (Made when needed: nothing of
// the server costs the start of a run.)
func answered() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// handle answers one message, a request, a notification, or something
// else, through send. The channel it returns is closed once the answer
// has been sent (or, for a cancelled call, will not be).
func (c *conn) handle(ctx context.Context, line []byte, send sendFunc) <-chan struct{} {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		t := bytes.TrimSpace(line)
		switch {
		case len(t) == 0:
		case t[0] == '[':
			fail(send, nil, CodeInvalidRequest, "JSON-RPC batches are not supported")
		default:
			fail(send, nil, CodeParse, "not JSON: "+err.Error())
		}
		return answered()
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch {
	case m.JSONRPC != "2.0":
		fail(send, m.ID, CodeInvalidRequest, `not JSON-RPC 2.0: "jsonrpc" must be "2.0"`)
	case m.Method == "" && hasID:
		// A response: the server sends no requests, so none is awaited.
	case m.Method == "":
		fail(send, nil, CodeInvalidRequest, "neither a request nor a notification: no method")
	case !hasID:
		c.notification(m)
	default:
		return c.request(ctx, m, send)
	}
	return answered()
}

// notification acts on a notification: a cancellation ends its call;
// the others need nothing.
func (c *conn) notification(m message) {
	if m.Method != "notifications/cancelled" {
		return
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return
	}
	c.mu.Lock()
	f := c.calls[idKey(p.RequestID)]
	if f != nil {
		f.byClient = true
	}
	c.mu.Unlock()
	if f != nil {
		f.cancel()
	}
}

// idKey is a request id as the calls map knows it: a string id and a
// number id never collide, since the string keeps its quotes.
func idKey(id json.RawMessage) string {
	id = bytes.TrimSpace(id)
	var n json.Number
	if len(id) > 0 && id[0] != '"' && json.Unmarshal(id, &n) == nil {
		if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
			return strconv.FormatInt(i, 10)
		}
	}
	return string(id)
}

// request answers a request.
func (c *conn) request(ctx context.Context, m message, send sendFunc) <-chan struct{} {
	switch m.Method {
	case "initialize":
		c.initialize(m, send)
	case "ping":
		send(message{ID: m.ID, Result: struct{}{}})
	case "tools/list":
		send(message{ID: m.ID, Result: map[string]any{"tools": c.s.toolList()}})
	case "tools/call":
		return c.call(ctx, m, send)
	default:
		fail(send, m.ID, CodeMethodNotFound, "method not found: "+m.Method)
	}
	return answered()
}

// initialize agrees on the version the client asked for when the server
// speaks it, else offers its newest.
func (c *conn) initialize(m message, send sendFunc) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil || p.ProtocolVersion == "" {
		fail(send, m.ID, CodeInvalidParams, "initialize: params must be an object with a protocolVersion")
		return
	}
	res := map[string]any{
		"protocolVersion": negotiate(p.ProtocolVersion),
		"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
		"serverInfo":      map[string]any{"name": c.s.Name, "version": c.s.Version},
	}
	if c.s.Instructions != "" {
		res["instructions"] = c.s.Instructions
	}
	send(message{ID: m.ID, Result: res})
}

// negotiate is the version the server answers a client asking for v.
func negotiate(v string) string {
	if slices.Contains(Versions, v) {
		return v
	}
	return Versions[0]
}

// toolList is tools/list's tools.
func (s *Server) toolList() []map[string]any {
	out := make([]map[string]any, 0, len(s.Tools))
	for _, t := range s.Tools {
		d := map[string]any{"name": t.Name, "description": t.Description, "inputSchema": t.InputSchema}
		if t.Title != "" {
			d["title"] = t.Title
		}
		if len(t.OutputSchema) > 0 {
			d["outputSchema"] = t.OutputSchema
		}
		d["annotations"] = map[string]any{"title": t.Title, "readOnlyHint": t.ReadOnly, "destructiveHint": t.Destructive, "openWorldHint": true}
		out = append(out, d)
	}
	return out
}

// call runs a tools/call in a goroutine of its own; its answer is sent
// when it ends, unless the client cancelled it (then nothing is, as the
// protocol says). A call the server ends (a signal, the client gone, an
// HTTP session deleted) is answered with what its tool returned, an error
// saying so when the tool failed. Once ctx is done no call starts.
func (c *conn) call(ctx context.Context, m message, send sendFunc) <-chan struct{} {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		fail(send, m.ID, CodeInvalidParams, "tools/call: params: "+err.Error())
		return answered()
	}
	i := slices.IndexFunc(c.s.Tools, func(t Tool) bool { return t.Name == p.Name })
	if i < 0 {
		fail(send, m.ID, CodeInvalidParams, fmt.Sprintf("unknown tool %q", p.Name))
		return answered()
	}
	if ctx.Err() != nil {
		fail(send, m.ID, CodeInternal, fmt.Sprintf("the call was not started: %v", context.Cause(ctx)))
		return answered()
	}
	key := idKey(m.ID)
	c.mu.Lock()
	if _, busy := c.calls[key]; busy {
		c.mu.Unlock()
		fail(send, m.ID, CodeInvalidRequest, "a call with this id is still running")
		return answered()
	}
	cctx, cancel := context.WithCancel(ctx)
	f := &inFlight{cancel: cancel}
	c.calls[key] = f
	c.mu.Unlock()
	c.wg.Add(1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer c.wg.Done()
		defer cancel()
		res := c.s.Tools[i].Call(cctx, p.Arguments, progress(send, p.Meta.ProgressToken))
		c.mu.Lock()
		delete(c.calls, key)
		byClient := f.byClient
		c.mu.Unlock()
		if byClient {
			return
		}
		if cctx.Err() != nil && res.IsError {
			res.Text = fmt.Sprintf("the server ended the call: %v\n\n%s", context.Cause(cctx), res.Text)
		}
		send(message{ID: m.ID, Result: callResult(res)})
	}()
	return done
}

// callResult is a tools/call result.
func callResult(r Result) map[string]any {
	out := map[string]any{
		"content": []map[string]any{{"type": "text", "text": r.Text}},
		"isError": r.IsError,
	}
	if r.Structured != nil {
		out["structuredContent"] = r.Structured
	}
	return out
}

// progress is a call's progress function: a no-op when the client gave
// no token.
func progress(send sendFunc, token json.RawMessage) func(string) {
	if len(token) == 0 || string(token) == "null" {
		return func(string) {}
	}
	var mu sync.Mutex
	n := 0
	return func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		n++
		b, _ := json.Marshal(map[string]any{"progressToken": token, "progress": n, "message": msg})
		send(message{Method: "notifications/progress", Params: b})
	}
}
