// Package jsonrpc is awl's MCP client: JSON-RPC 2.0 over a transport (a
// stdio server's lines, or streamable HTTP), the initialize handshake,
// tools/list and tools/call, and the requests a server may send awl, which
// a Handler answers. It knows nothing of awl's config, its servers'
// processes or OAuth: an HTTP transport is handed an Authorizer.
//
// awl speaks the few parts of MCP it uses itself: the SDK's mcp package
// linked encoding/gob and a JSON Schema library whose initialisers ran on
// every start of awl, MCP or not (cmd/awl's TestInitCost and TestNotLinked).
package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// protocolVersions are the MCP revisions awl speaks through initialize,
// newest first: it asks for the first and accepts any of them in the
// server's answer. Before them, it asks server/discover for the stateless
// 2026-07-28 (stateless.go).
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// ErrConnClosed is the cause of every failure after a connection ended: a
// stdio server that exited, an HTTP session that broke, a client closed.
var ErrConnClosed = errors.New("connection closed")

// JSON-RPC error codes awl answers with.
const (
	CodeMethodNotFound = -32601
	codeInternal       = -32603
)

// Error is a JSON-RPC error object: what a server answered a request with,
// or what a Handler answers with.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (JSON-RPC error %d)", e.Message, e.Code) }

// message is one JSON-RPC message, of any kind: a request (Method and ID),
// a notification (Method), or a response (ID with Result or Error).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Transport moves whole JSON-RPC messages between awl and a server.
type Transport interface {
	// send writes one message. id is the request's id when an answer is
	// expected (the HTTP transport then reads the response for it), ""
	// for a notification or a response.
	send(ctx context.Context, data []byte, id string) error
	// start begins handing incoming messages to deliver, one at a time,
	// and calls fail once when the connection ends. A transport may also
	// hand a pending request an error of its own with answer.
	start(deliver func([]byte), answer func(id string, err error), fail func(error))
	// initialized says the server accepted initialize, with the agreed
	// protocol version (sent in a header over HTTP from then on).
	initialized(version string)
	// ready says the handshake is complete (notifications/initialized
	// sent): the HTTP transport opens the server's own stream then.
	ready()
	// close ends the connection.
	close()
}

// Handler answers a request from the server; a *Error is sent as it is.
type Handler func(ctx context.Context, method string, params json.RawMessage) (any, error)

// reply is what a pending request gets: the server's response, or an error
// of the transport's.
type reply struct {
	m   message
	err error
}

// Client is one MCP session with a server.
type Client struct {
	t      Transport
	handle Handler
	ctx    context.Context // for handlers; cancelled when the session ends
	cancel context.CancelFunc
	nextID atomic.Int64

	mu      sync.Mutex
	pending map[string]chan reply
	ended   bool

	done     chan struct{} // closed when the session ends
	failOnce sync.Once
	err      error // why it ended, set before done is closed

	// stateless is the stateless protocol version spoken ("" for one
	// agreed with initialize), meta the _meta of its requests; under mu.
	stateless string
	meta      map[string]any
	// headers are the x-mcp-header bindings of each tool, by name.
	headers map[string][]headerBinding
}

// NewClient starts reading from t; handle answers the server's requests.
func NewClient(t Transport, handle Handler) *Client {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{t: t, handle: handle, ctx: ctx, cancel: cancel, pending: map[string]chan reply{}, done: make(chan struct{})}
	t.start(c.deliver, c.answer, c.fail)
	return c
}

// fail ends the session: every pending and later request fails with err.
func (c *Client) fail(err error) {
	c.failOnce.Do(func() {
		if !errors.Is(err, ErrConnClosed) {
			err = fmt.Errorf("%w: %v", ErrConnClosed, err)
		}
		c.mu.Lock()
		c.err, c.ended = err, true
		c.mu.Unlock()
		c.cancel()
		close(c.done)
	})
}

// Close ends the session and the transport.
func (c *Client) Close() {
	c.t.close()
	c.fail(errors.New("closed by awl"))
}

// Wait returns when the session has ended.
func (c *Client) Wait() { <-c.done }

// idKey is a request id as the pending map knows it.
func idKey(id json.RawMessage) string { return string(bytes.TrimSpace(id)) }

// deliver takes one incoming message (or a batch of them).
func (c *Client) deliver(data []byte) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(data, &batch) == nil {
			for _, m := range batch {
				c.deliver(m)
			}
		}
		return
	}
	var m message
	if json.Unmarshal(data, &m) != nil {
		return // not a message: dropped, as a server's noise
	}
	hasID := len(m.ID) > 0 && idKey(m.ID) != "null"
	switch {
	case m.Method != "" && hasID:
		go c.serve(m)
	case m.Method != "":
		// A notification (logging, progress, list changes): nothing awl
		// acts on.
	case hasID:
		c.answerWith(idKey(m.ID), reply{m: m})
	}
}

// answer hands the pending request id an error of the transport's.
func (c *Client) answer(id string, err error) { c.answerWith(id, reply{err: err}) }

func (c *Client) answerWith(id string, r reply) {
	c.mu.Lock()
	ch := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- r
	}
}

// serve answers one request of the server's.
func (c *Client) serve(m message) {
	resp := message{JSONRPC: "2.0", ID: m.ID}
	res, err := c.handle(c.ctx, m.Method, m.Params)
	var re *Error
	switch {
	case errors.As(err, &re):
		resp.Error = re
	case err != nil:
		resp.Error = &Error{Code: codeInternal, Message: err.Error()}
	default:
		b, err := json.Marshal(res)
		if err != nil {
			resp.Error = &Error{Code: codeInternal, Message: err.Error()}
		} else {
			resp.Result = b
		}
	}
	data, err := json.Marshal(resp)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer cancel()
	c.t.send(ctx, data, "")
}

// call sends a request and waits for its response, decoded into out. When
// ctx ends first, the server is told with notifications/cancelled.
func (c *Client) call(ctx context.Context, method string, params, out any) error {
	id := c.nextID.Add(1)
	key := strconv.FormatInt(id, 10)
	data, err := encode(message{ID: json.RawMessage(key), Method: method}, c.withMeta(params))
	if err != nil {
		return err
	}
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return c.err
	}
	c.pending[key] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, key)
		c.mu.Unlock()
	}
	if err := c.t.send(ctx, data, key); err != nil {
		forget()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r := <-ch:
		switch {
		case r.err != nil:
			return fmt.Errorf("%s: %w", method, r.err)
		case r.m.Error != nil:
			return r.m.Error
		case out == nil:
			return nil
		case len(r.m.Result) == 0:
			return fmt.Errorf("%s: the server's response has neither a result nor an error", method)
		}
		if err := json.Unmarshal(r.m.Result, out); err != nil {
			return fmt.Errorf("%s: the server's result does not decode: %v", method, err)
		}
		return nil
	case <-ctx.Done():
		forget()
		cctx, cancel := context.WithTimeout(c.ctx, 2*time.Second)
		c.notify(cctx, "notifications/cancelled", map[string]any{"requestId": id, "reason": context.Cause(ctx).Error()})
		cancel()
		return ctx.Err()
	case <-c.done:
		forget()
		return c.err
	}
}

// notify sends a notification.
func (c *Client) notify(ctx context.Context, method string, params any) error {
	data, err := encode(message{Method: method}, params)
	if err != nil {
		return err
	}
	return c.t.send(ctx, data, "")
}

// encode is m with params, as JSON-RPC 2.0.
func encode(m message, params any) ([]byte, error) {
	m.JSONRPC = "2.0"
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		m.Params = p
	}
	return json.Marshal(m)
}

// InitializeResult is the part of the server's answer to initialize that
// awl reads.
type InitializeResult struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ServerInfo      Implementation  `json:"serverInfo"`
	Instructions    string          `json:"instructions"`
}

// Implementation names a server (or a client) and its version.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Initialize agrees on a protocol version: the stateless 2026-07-28
// through server/discover when the server speaks it, else the handshake of
// the versions before it (initialize with awl's capabilities, the version
// check, then notifications/initialized).
func (c *Client) Initialize(ctx context.Context, version string, caps any) (*InitializeResult, error) {
	info := map[string]string{"name": "awl", "version": version}
	if res, err := c.discover(ctx, info, caps); err == nil {
		return res, nil
	} else if ctx.Err() != nil {
		return nil, err
	}
	params := map[string]any{
		"protocolVersion": protocolVersions[0],
		"capabilities":    caps,
		"clientInfo":      info,
	}
	var res InitializeResult
	if err := c.call(ctx, "initialize", params, &res); err != nil {
		return nil, err
	}
	if !slices.Contains(protocolVersions, res.ProtocolVersion) {
		return nil, fmt.Errorf("the server answered with MCP protocol version %q; awl speaks %v", res.ProtocolVersion, protocolVersions)
	}
	c.t.initialized(res.ProtocolVersion)
	if err := c.notify(ctx, "notifications/initialized", nil); err != nil {
		return nil, err
	}
	c.t.ready()
	return &res, nil
}

// Tool is a tool as tools/list describes it.
type Tool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations *struct {
		Title        string `json:"title"`
		ReadOnlyHint bool   `json:"readOnlyHint"`
	} `json:"annotations"`
	// Invalid, when set, is why the tool must not be offered (its
	// x-mcp-header annotations, under the stateless protocol).
	Invalid string `json:"-"`
}

// maxToolPages bounds tools/list paging: a server that repeats its cursor
// must not hold the start forever (the start's timeout would, later).
const maxToolPages = 1000

// Tools lists every tool, page by page.
func (c *Client) Tools(ctx context.Context) ([]Tool, error) {
	var all []Tool
	cursor := ""
	for range maxToolPages {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var page struct {
			Tools      []Tool `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := c.call(ctx, "tools/list", params, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Tools...)
		if page.NextCursor == "" {
			c.noteHeaders(all)
			return all, nil
		}
		cursor = page.NextCursor
	}
	return nil, fmt.Errorf("tools/list: still a next page after %d pages", maxToolPages)
}

// CallResult is a tools/call result; each content item is decoded by the
// caller according to its type.
type CallResult struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent"`
	IsError           bool              `json:"isError"`
}

// CallTool calls a tool with arguments, a JSON object.
func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage) (*CallResult, error) {
	var res CallResult
	c.mu.Lock()
	bindings := c.headers[name]
	c.mu.Unlock()
	if len(bindings) > 0 {
		ctx = context.WithValue(ctx, paramHeadersKey{}, paramHeaders(bindings, args))
	}
	if err := c.callRounds(ctx, "tools/call", map[string]any{"name": name, "arguments": args}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
