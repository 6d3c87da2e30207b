package jsonrpc

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Protocol 2026-07-28 is stateless (SEP-2575, SEP-2567): no initialize
// handshake and no session. The client asks server/discover for the
// versions and capabilities of the server, and every request carries the
// protocol version, the client's identity and its capabilities in _meta;
// over HTTP the version, the method and the name it acts on go in headers
// too (SEP-2243). A server that needs input during a request (an
// elicitation) answers it with an input_required result, and the client
// sends the request again with the answers (multi-round-trip requests,
// SEP-2322), where older versions had the server send a request of its own.
//
// awl asks server/discover first; a server that does not know it (an error,
// any HTTP refusal) gets the initialize handshake of 2025-11-25, as go-sdk's
// client does.

// statelessVersion is the first stateless protocol version.
const statelessVersion = "2026-07-28"

// The _meta keys of a stateless request.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
)

// codeUnsupportedVersion is a server's refusal of the version a request
// named, with the versions it supports in data.supported.
const codeUnsupportedVersion = -32022

// stdioDiscoverWait bounds the wait for a stdio server's answer to
// server/discover. A server of an older version answers it with an error
// (method not found), but one that ignores requests before initialize would
// otherwise hold the start until --mcp-timeout; after this long awl sends
// initialize, which such a server answers.
const stdioDiscoverWait = time.Second

// discoverResult is what server/discover answers.
type discoverResult struct {
	SupportedVersions []string        `json:"supportedVersions"`
	Capabilities      json.RawMessage `json:"capabilities"`
	ServerInfo        Implementation  `json:"serverInfo"`
	Instructions      string          `json:"instructions"`
}

// discover asks the server for the stateless protocol; nil error means the
// client speaks it from now on.
func (c *Client) discover(ctx context.Context, info map[string]string, caps any) (*InitializeResult, error) {
	if _, stdio := c.t.(*stdioTransport); stdio {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, stdioDiscoverWait)
		defer cancel()
	}
	version := statelessVersion
	for range 2 {
		c.setStateless(version, info, caps)
		var res discoverResult
		err := c.call(ctx, "server/discover", map[string]any{}, &res)
		if err == nil && slices.Contains(res.SupportedVersions, version) {
			return &InitializeResult{ProtocolVersion: version, Capabilities: res.Capabilities, ServerInfo: res.ServerInfo, Instructions: res.Instructions}, nil
		}
		var re *Error
		if errors.As(err, &re) && re.Code == codeUnsupportedVersion {
			// The server names what it supports: once more with the
			// newest stateless one of them awl speaks.
			var data struct {
				Supported []string `json:"supported"`
			}
			json.Unmarshal(re.Data, &data)
			if slices.Contains(data.Supported, statelessVersion) {
				continue
			}
		}
		if err == nil {
			err = fmt.Errorf("server/discover: the server supports %v", res.SupportedVersions)
		}
		c.setStateless("", nil, nil)
		return nil, err
	}
	c.setStateless("", nil, nil)
	return nil, errors.New("server/discover: refused twice")
}

// setStateless makes the client speak version statelessly (every request
// with its _meta, the transport's headers), or, with "", not.
func (c *Client) setStateless(version string, info map[string]string, caps any) {
	c.mu.Lock()
	c.stateless = version
	c.meta = nil
	if version != "" {
		c.meta = map[string]any{metaProtocolVersion: version, metaClientInfo: info, metaClientCapabilities: caps}
	}
	c.mu.Unlock()
	c.t.initialized(version)
}

// withMeta is params with the stateless _meta added, when the client speaks
// the stateless protocol; params otherwise.
func (c *Client) withMeta(params any) any {
	c.mu.Lock()
	meta := c.meta
	c.mu.Unlock()
	if meta == nil {
		return params
	}
	p, ok := params.(map[string]any)
	if !ok {
		p = map[string]any{}
	} else {
		p = maps(p)
	}
	p["_meta"] = meta
	return p
}

func maps(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// maxInputRounds bounds the rounds of one multi-round-trip request.
const maxInputRounds = 10

// inputRequired is a result of resultType input_required (SEP-2322).
type inputRequired struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  json.RawMessage            `json:"requestState"`
}

// callRounds sends a request and, while the server answers it with an
// input_required result, answers each of its input requests with the
// handler (as if the server had sent them as requests) and sends the
// request again, with a new id, the answers and the server's requestState
// exactly as it came (none when none came). out gets the complete result.
func (c *Client) callRounds(ctx context.Context, method string, params map[string]any, out any) error {
	for range maxInputRounds {
		var raw json.RawMessage
		if err := c.call(ctx, method, params, &raw); err != nil {
			return err
		}
		var ir inputRequired
		if json.Unmarshal(raw, &ir) != nil || ir.ResultType != "input_required" {
			// No resultType is "complete".
			if err := json.Unmarshal(raw, out); err != nil {
				return fmt.Errorf("%s: the server's result does not decode: %v", method, err)
			}
			return nil
		}
		answers := map[string]any{}
		for key, req := range ir.InputRequests {
			var r struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(req, &r); err != nil || r.Method == "" {
				return fmt.Errorf("%s: input request %q is not a request", method, key)
			}
			res, err := c.handle(ctx, r.Method, r.Params)
			if err != nil {
				return fmt.Errorf("%s: input request %q (%s): %w", method, key, r.Method, err)
			}
			answers[key] = res
		}
		params = maps(params)
		params["inputResponses"] = answers
		delete(params, "requestState")
		if len(ir.RequestState) > 0 && string(ir.RequestState) != "null" {
			params["requestState"] = ir.RequestState
		}
	}
	return fmt.Errorf("%s: still input_required after %d rounds", method, maxInputRounds)
}

// The HTTP headers of a stateless request (SEP-2243): the method, the name
// it acts on, and the arguments a tool's schema marks with x-mcp-header.
const (
	methodHeader      = "Mcp-Method"
	nameHeader        = "Mcp-Name"
	paramHeaderPrefix = "Mcp-Param-"
)

// paramHeadersKey carries a tools/call's Mcp-Param-* headers to the
// transport.
type paramHeadersKey struct{}

// standardHeaders sets Mcp-Method and Mcp-Name on a POST of the stateless
// protocol, and the call's Mcp-Param-* headers.
func (h *httpTransport) standardHeaders(ctx context.Context, req *http.Request, data []byte) {
	if req.Header.Get(protocolVersionHeader) < statelessVersion {
		return
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal(data, &m) != nil || m.Method == "" {
		return
	}
	req.Header.Set(methodHeader, m.Method)
	switch m.Method {
	case "tools/call", "prompts/get":
		req.Header.Set(nameHeader, headerValue(m.Params.Name))
	case "resources/read":
		req.Header.Set(nameHeader, headerValue(m.Params.URI))
	}
	if ph, ok := ctx.Value(paramHeadersKey{}).(map[string]string); ok {
		for k, v := range ph {
			req.Header.Set(paramHeaderPrefix+k, v)
		}
	}
}

// headerValue is s as a header value: as it is when it is printable ASCII
// without leading or trailing space, else =?base64?…?=.
func headerValue(s string) string {
	plain := s == "" || s[0] != ' ' && s[0] != '\t' && s[len(s)-1] != ' ' && s[len(s)-1] != '\t'
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] <= 0x7e
	}
	if plain {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// headerBinding is an argument a tool's schema sends as a header: the path
// of property names to it, and the header's name after Mcp-Param-.
type headerBinding struct {
	path   []string
	header string
}

// schemaNode is what x-mcp-header reads of a schema.
type schemaNode struct {
	Type       any                   `json:"type"`
	XMCPHeader json.RawMessage       `json:"x-mcp-header"`
	Properties map[string]schemaNode `json:"properties"`
}

// toolHeaders reads the x-mcp-header annotations of a tool's input schema:
// what they bind, or why the tool must not be offered (SEP-2243: a client
// excludes a tool whose annotations are invalid): an annotation on a
// property that is not a string, integer or boolean, a name that is not an
// HTTP token, or one used twice (case aside).
func toolHeaders(schema json.RawMessage) ([]headerBinding, error) {
	var root schemaNode
	if json.Unmarshal(schema, &root) != nil {
		return nil, nil
	}
	var out []headerBinding
	seen := map[string]bool{}
	var walk func(props map[string]schemaNode, prefix []string) error
	walk = func(props map[string]schemaNode, prefix []string) error {
		for _, name := range slices.Sorted(mapsKeys(props)) {
			p := props[name]
			path := append(slices.Clone(prefix), name)
			if p.XMCPHeader != nil {
				var h string
				typ, _ := p.Type.(string)
				switch {
				case typ != "string" && typ != "integer" && typ != "boolean":
					return fmt.Errorf("x-mcp-header on %s, of type %v: only a string, integer or boolean may be a header", strings.Join(path, "."), p.Type)
				case json.Unmarshal(p.XMCPHeader, &h) != nil || h == "" || !isToken(h):
					return fmt.Errorf("x-mcp-header %s on %s is not a header name", p.XMCPHeader, strings.Join(path, "."))
				case seen[strings.ToLower(h)]:
					return fmt.Errorf("x-mcp-header %q is used twice", h)
				}
				seen[strings.ToLower(h)] = true
				out = append(out, headerBinding{path: path, header: h})
			}
			if err := walk(p.Properties, path); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(root.Properties, nil)
}

func mapsKeys(m map[string]schemaNode) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// isToken reports whether s is an HTTP token (RFC 9110 tchar).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// paramHeaders are the Mcp-Param-* headers of a call with args.
func paramHeaders(bindings []headerBinding, args json.RawMessage) map[string]string {
	out := map[string]string{}
	for _, b := range bindings {
		cur := args
		for _, name := range b.path {
			var obj map[string]json.RawMessage
			if json.Unmarshal(cur, &obj) != nil {
				cur = nil
				break
			}
			cur = obj[name]
		}
		var v any
		if cur == nil || json.Unmarshal(cur, &v) != nil {
			continue
		}
		switch v := v.(type) {
		case string:
			out[b.header] = headerValue(v)
		case bool:
			out[b.header] = strconv.FormatBool(v)
		case float64:
			if v == math.Trunc(v) && math.Abs(v) <= 1<<53-1 {
				out[b.header] = strconv.FormatInt(int64(v), 10)
			}
		}
	}
	return out
}

// noteHeaders reads the tools' x-mcp-header annotations, under the
// stateless protocol: their bindings, or Invalid on a tool whose
// annotations are not valid.
func (c *Client) noteHeaders(tools []Tool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stateless == "" {
		return
	}
	c.headers = map[string][]headerBinding{}
	for i := range tools {
		b, err := toolHeaders(tools[i].InputSchema)
		if err != nil {
			tools[i].Invalid = err.Error()
			continue
		}
		if len(b) > 0 {
			c.headers[tools[i].Name] = b
		}
	}
}
