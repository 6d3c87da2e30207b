package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/awlrun/awl/runner/mcp/jsonrpc"
	"reflect"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/runner/tool"
)

// Prefix starts the name of every MCP tool: mcp__<server>__<tool>.
const Prefix = "mcp__"

// maxToolName is the longest tool name every provider accepts.
const maxToolName = 64

// toolName returns the awl name of a server's tool. Characters providers
// refuse in a tool name become _, and a name over 64 bytes is cut and ends
// in a hash of the full name, so it stays unique.
func toolName(server, name string) string {
	var b strings.Builder
	b.WriteString(Prefix + server + "__")
	for _, r := range name {
		if r < utf8.RuneSelf && (r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	full := b.String()
	if len(full) <= maxToolName {
		return full
	}
	return hashed(full, server, name)
}

// hashedToolName is the awl name of a tool whose plain name another tool
// of the server already has: it ends in a hash of the server's own name for
// the tool, and is cut to fit.
func hashedToolName(server, name string) string {
	return hashed(toolName(server, name), server, name)
}

// hashed ends full (cut to fit) in _ and 8 hex digits of the hash of the
// server's name for the tool.
func hashed(full, server, name string) string {
	sum := sha256.Sum256([]byte(Prefix + server + "__" + name))
	return full[:min(len(full), maxToolName-9)] + "_" + hex.EncodeToString(sum[:4])
}

// Tool is one tool of an MCP server, offered to the model as an awl tool.
type Tool struct {
	srv      *server
	name     string // awl name
	remote   string // the server's name for it
	desc     string
	schema   json.RawMessage
	readOnly bool
}

var _ tool.Tool = (*Tool)(nil)

func newTool(s *server, name string, t jsonrpc.Tool) *Tool {
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	if desc == "" && t.Annotations != nil {
		desc = t.Annotations.Title
	}
	schema := []byte(`{"type":"object","properties":{}}`)
	// Decoded and encoded again: compact, with the keys of each object
	// sorted, so a request's bytes do not follow the server's layout. A
	// boolean schema stays one: true takes any arguments, false none, and
	// the run offers a tool whose schema is false to no model.
	var v any
	if json.Unmarshal(t.InputSchema, &v) == nil && v != nil {
		if b, err := json.Marshal(v); err == nil && (bytes.HasPrefix(b, []byte("{")) || string(b) == "true" || string(b) == "false") {
			schema = b
		}
	}
	return &Tool{
		srv:      s,
		name:     name,
		remote:   t.Name,
		desc:     desc,
		schema:   schema,
		readOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint,
	}
}

// Name is mcp__<server>__<tool>.
func (t *Tool) Name() string { return t.name }

// Description is the server's description of the tool.
func (t *Tool) Description() string { return t.desc }

// Schema is the tool's input schema as the server gave it.
func (t *Tool) Schema() json.RawMessage { return bytes.Clone(t.schema) }

// ReadOnly reports whether the server marked the tool readOnlyHint; only
// such tools may run in parallel with others.
func (t *Tool) ReadOnly() bool { return t.readOnly }

// Server is the name of the tool's server.
func (t *Tool) Server() string { return t.srv.cfg.Name }

// errCallTimeout is the cause of a call stopped by --mcp-call-timeout.
var errCallTimeout = errors.New("call timeout")

// Run calls the tool. Every failure is an error result: bad arguments, a
// server error, a call past --mcp-call-timeout (cancelled with
// notifications/cancelled), a server that died during the call (it is
// restarted once).
func (t *Tool) Run(ctx context.Context, input json.RawMessage) tool.Result {
	s := t.srv
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	if !json.Valid(input) || !bytes.HasPrefix(bytes.TrimSpace(input), []byte("{")) {
		return errorf("%s: the arguments must be a JSON object", t.name)
	}
	if !t.readOnly {
		if !lockCtx(ctx, &s.m.serial) {
			return errorf("%s: interrupted: the run stopped before the call started", t.name)
		}
		defer s.m.serial.Unlock()
	}
	c, err := s.current()
	if err != nil {
		return errorf("%s: MCP server %s is not available: %v", t.name, s.cfg.Name, err)
	}
	timeout := s.m.opts.CallTimeout
	cctx, cancel := context.WithTimeoutCause(ctx, timeout, errCallTimeout)
	defer cancel()
	ci, _ := ctx.Value(callKey{}).(*callInfo)
	if ci == nil {
		ci = &callInfo{}
	}
	s.calls.add(ci, t.name)
	failSeq := s.httpFailureSeq()
	res, err := c.cl.CallTool(cctx, t.remote, input)
	if errors.Is(err, jsonrpc.ErrSessionMissing) && cctx.Err() == nil {
		// The server forgot the session (it restarted, or expired it):
		// a new session, as the spec says, and the call, which never ran,
		// once more on it.
		if nc := s.renew(c); nc != nil {
			c = nc
			res, err = c.cl.CallTool(cctx, t.remote, input)
		}
	}
	s.calls.remove(ci)
	switch {
	case err == nil:
		out := convertResult(res)
		// A server may echo what it was given: its header values, the
		// config's secrets and its OAuth tokens never reach the model.
		out.Content = s.redact(out.Content)
		ci.mu.Lock()
		if len(ci.notes) > 0 {
			out.Content += "\n" + strings.Join(ci.notes, "\n")
		}
		ci.mu.Unlock()
		return out
	case ctx.Err() != nil:
		return errorf("%s: interrupted: the run stopped during the call", t.name)
	case errors.Is(context.Cause(cctx), errCallTimeout):
		return errorf("%s: no result within %s (--mcp-call-timeout); the call was cancelled", t.name, timeout)
	}
	if f := s.httpFailureSince(failSeq); f != "" {
		return errorf("%s: MCP server %s answered %s", t.name, s.cfg.Name, f)
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return errorf("%s: MCP server %s answered with an error: %s", t.name, s.cfg.Name, s.redact(rpcErr.Message))
	}
	if dead(c, err) {
		what := s.lost(c, shortErr(s.redact(err.Error())))
		return errorf("%s: MCP server %s stopped during the call; %s", t.name, s.cfg.Name, what)
	}
	return errorf("%s: MCP server %s: %s", t.name, s.cfg.Name, s.redact(err.Error()))
}

// lockCtx locks mu, or gives up when ctx is done first.
func lockCtx(ctx context.Context, mu *sync.Mutex) bool {
	for !mu.TryLock() {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(5 * time.Millisecond):
		}
	}
	return true
}

// dead reports whether err means c's server is gone: the connection closed,
// or the session ended within a moment of the error.
func dead(c *conn, err error) bool {
	if errors.Is(err, jsonrpc.ErrConnClosed) {
		return true
	}
	select {
	case <-c.done:
		return true
	case <-time.After(time.Second):
		return false
	}
}

// shortErr keeps an error's text to one line.
func shortErr(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func errorf(format string, args ...any) tool.Result {
	return tool.Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// maxText is how much text a result keeps: the first and last halves
// around a note of what was cut, like bash output.
const maxText = tool.OutputHeadBytes + tool.OutputTailBytes

// contentItem is one item of a result's content, of any type: text,
// image and audio (base64 data), resource_link, resource (embedded).
type contentItem struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Data        string `json:"data"`
	MIMEType    string `json:"mimeType"`
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Resource    *struct {
		URI      string  `json:"uri"`
		MIMEType string  `json:"mimeType"`
		Text     string  `json:"text"`
		Blob     *string `json:"blob"`
	} `json:"resource"`
}

// convertResult turns an MCP result into a tool result: text as it is,
// images as attachments, structured content as JSON text (unless a text
// block already holds the same JSON), resource links by URI, embedded text
// resources with their URI, and a note for what cannot be shown.
func convertResult(res *jsonrpc.CallResult) tool.Result {
	var parts []string
	var atts []conv.Attachment
	var texts []string
	for _, raw := range res.Content {
		var c contentItem
		if json.Unmarshal(raw, &c) != nil {
			parts = append(parts, "[a content item that does not decode left out]")
			continue
		}
		switch c.Type {
		case "text":
			parts = append(parts, c.Text)
			texts = append(texts, c.Text)
		case "image":
			data, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				parts = append(parts, fmt.Sprintf("[image (%s) left out: its data is not base64]", c.MIMEType))
				continue
			}
			att, err := tool.ImageAttachment(data)
			if err != nil {
				parts = append(parts, fmt.Sprintf("[image (%s) left out: %v]", c.MIMEType, err))
				continue
			}
			atts = append(atts, att)
			parts = append(parts, fmt.Sprintf("[image %d: %s, %d bytes, attached]", len(atts), att.MimeType, len(data)))
		case "audio":
			parts = append(parts, fmt.Sprintf("[audio (%s, %d bytes) left out: awl does not pass audio to the model]", c.MIMEType, base64.StdEncoding.DecodedLen(len(c.Data))-padding(c.Data)))
		case "resource_link":
			parts = append(parts, resourceLink(c))
		case "resource":
			parts = append(parts, embedded(c))
		default:
			parts = append(parts, fmt.Sprintf("[a content item of type %q left out]", sanitize(c.Type)))
		}
	}
	var structured any
	if len(res.StructuredContent) > 0 {
		json.Unmarshal(res.StructuredContent, &structured)
	}
	if structured != nil && !sameJSON(structured, texts) {
		if b, err := json.Marshal(structured); err == nil {
			parts = append(parts, string(b))
		}
	}
	text := strings.Join(parts, "\n")
	if text == "" && len(atts) == 0 {
		if res.IsError {
			text = "the tool failed and said nothing more"
		} else {
			text = "(no output)"
		}
	}
	return tool.Result{Content: cut(text), IsError: res.IsError, Attachments: atts}
}

// padding is how many "=" end base64 data.
func padding(data string) int {
	return len(data) - len(strings.TrimRight(data, "="))
}

func resourceLink(l contentItem) string {
	s := "Resource: " + l.URI
	var extra []string
	if l.Name != "" {
		extra = append(extra, l.Name)
	}
	if l.MIMEType != "" {
		extra = append(extra, l.MIMEType)
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	if l.Description != "" {
		s += ": " + l.Description
	}
	return s
}

func embedded(c contentItem) string {
	r := c.Resource
	if r == nil {
		return "[empty embedded resource]"
	}
	if r.Blob != nil || r.Text == "" {
		n := 0
		if r.Blob != nil {
			n = base64.StdEncoding.DecodedLen(len(*r.Blob)) - padding(*r.Blob)
		}
		return fmt.Sprintf("[embedded resource %s (%s, %d bytes) left out: binary]", r.URI, r.MIMEType, n)
	}
	return "Resource " + r.URI + ":\n" + r.Text
}

// sameJSON reports whether one of texts is JSON equal to v.
func sameJSON(v any, texts []string) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	var want any
	if json.Unmarshal(b, &want) != nil {
		return false
	}
	for _, t := range texts {
		var got any
		if json.Unmarshal([]byte(t), &got) == nil && reflect.DeepEqual(got, want) {
			return true
		}
	}
	return false
}

// cut keeps the first and last maxText/2 bytes of a long text.
func cut(s string) string {
	if len(s) <= maxText {
		return s
	}
	h, t := maxText/2, len(s)-maxText/2
	for i := 0; i < utf8.UTFMax && !utf8.RuneStart(s[h]); i++ {
		h--
	}
	for i := 0; i < utf8.UTFMax && t < len(s) && !utf8.RuneStart(s[t]); i++ {
		t++
	}
	head, tail := s[:h], s[t:]
	return fmt.Sprintf("%s\n[… %d bytes cut …]\n%s", head, len(s)-len(head)-len(tail), tail)
}
