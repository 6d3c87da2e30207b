package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/awlrun/awl/runner/mcp/jsonrpc"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Elicitation is a server's request for input from the user, and how awl
// answered it. No one is there to ask, so awl answers at once: it accepts
// with the requested schema's defaults when every required field has one,
// and declines otherwise.
type Elicitation struct {
	Server string
	// Tool is the awl name of the tool whose call the request came
	// during; "" when no call was running.
	Tool   string
	CallID string
	// Message is the server's message, cut to maxElicitMessage bytes.
	Message string
	// Action is "accept" or "decline".
	Action string
	// Fields are the requested schema's property names, sorted.
	Fields []string
	// Reason says why awl declined, or what it accepted with.
	Reason string
}

// maxElicitMessage is how much of a server's elicitation message is kept.
const maxElicitMessage = 500

// callKey is the context key of the reporter of a call (WithCall).
type callKey struct{}

// callInfo is what a tool call tells the elicitation handler: who to
// report to, and where the notes for the call's result go.
type callInfo struct {
	id     string
	report func(Elicitation)
	mu     sync.Mutex
	notes  []string
}

// WithCall returns ctx for the tool call callID: report receives each
// elicitation request answered while the call runs.
func WithCall(ctx context.Context, callID string, report func(Elicitation)) context.Context {
	return context.WithValue(ctx, callKey{}, &callInfo{id: callID, report: report})
}

// elicitResult is awl's answer to elicitation/create.
type elicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// elicit answers a server's elicitation request without asking anyone.
func (s *server) elicit(_ context.Context, params json.RawMessage) (*elicitResult, error) {
	var p struct {
		Mode            string          `json:"mode"`
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &jsonrpc.Error{Code: -32602, Message: "elicitation/create: " + err.Error()}
	}
	e := Elicitation{Server: s.cfg.Name, Message: cutBytes(s.redact(p.Message), maxElicitMessage)}
	var res *elicitResult
	if p.Mode == "url" {
		e.Action, e.Reason = "decline", "awl runs unattended and cannot open a URL for the user"
		res = &elicitResult{Action: "decline"}
	} else {
		content, fields, missing := schemaDefaults(p.RequestedSchema)
		e.Fields = fields
		if len(missing) > 0 {
			e.Action = "decline"
			e.Reason = "awl runs unattended, and required field(s) " + strings.Join(missing, ", ") + " have no default"
			res = &elicitResult{Action: "decline"}
		} else {
			e.Action = "accept"
			b, _ := json.Marshal(content)
			e.Reason = "awl runs unattended and accepted with the schema's defaults: " + string(b)
			res = &elicitResult{Action: "accept", Content: content}
		}
	}
	s.calls.each(func(c *callInfo, toolName string) {
		ev := e
		ev.Tool, ev.CallID = toolName, c.id
		c.mu.Lock()
		c.notes = append(c.notes, fmt.Sprintf("[the MCP server asked for input (%q); %s]", e.Message, e.Reason))
		c.mu.Unlock()
		if c.report != nil {
			c.report(ev)
		}
	}, func() {
		s.m.warnf("mcp server %s asked for input outside a tool call (%q); %s", s.cfg.Name, e.Message, e.Reason)
	})
	return res, nil
}

// schemaDefaults reads a form elicitation's requested schema: the defaults
// of its properties, their names, and the required ones without a default.
func schemaDefaults(schema any) (content map[string]any, fields, missing []string) {
	var s struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if b, err := json.Marshal(schema); err == nil {
		json.Unmarshal(b, &s)
	}
	content = map[string]any{}
	for name, p := range s.Properties {
		fields = append(fields, name)
		if p.Default != nil {
			content[name] = p.Default
		}
	}
	slices.Sort(fields)
	for _, name := range s.Required {
		if _, ok := content[name]; !ok {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	return content, fields, missing
}

// activeCalls are the calls to one server now running.
type activeCalls struct {
	mu    sync.Mutex
	calls map[*callInfo]string // the call and its tool's awl name
}

func (a *activeCalls) add(c *callInfo, toolName string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.calls == nil {
		a.calls = map[*callInfo]string{}
	}
	a.calls[c] = toolName
}

func (a *activeCalls) remove(c *callInfo) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.calls, c)
}

// each runs f for every running call; none when no call is running. A
// server does not say which call a request belongs to, so a request made
// while two calls run is noted on both.
func (a *activeCalls) each(f func(*callInfo, string), none func()) {
	a.mu.Lock()
	calls := make(map[*callInfo]string, len(a.calls))
	for c, n := range a.calls {
		calls[c] = n
	}
	a.mu.Unlock()
	if len(calls) == 0 {
		none()
		return
	}
	for c, n := range calls {
		f(c, n)
	}
}

// cutBytes keeps at most n bytes of s, cut at the start of a character
// (never inside one), followed by "…" when anything was cut.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
