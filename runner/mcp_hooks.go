package runner

import (
	"context"
	"slices"

	"github.com/awlrun/awl/runner/mcp"
	"github.com/awlrun/awl/runner/prompt"
)

// MCPServerEvent is how one MCP server's start went, on the session event.
type MCPServerEvent struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	// Status is "started" or "failed".
	Status string `json:"status"`
	// Tools are the awl names of the tools the server listed (before
	// --tools and --deny-tools).
	Tools []string `json:"tools"`
	// DurationMS is the time from launch until the tools were listed, or
	// until the start failed.
	DurationMS int64  `json:"duration_ms"`
	Error      string `json:"error,omitempty"`
}

func mcpEvents(st []mcp.Status) []MCPServerEvent {
	if len(st) == 0 {
		return nil
	}
	out := make([]MCPServerEvent, len(st))
	for i, s := range st {
		ev := MCPServerEvent{Name: s.Name, Transport: s.Transport, Status: "started", Tools: s.Tools, DurationMS: s.Duration.Milliseconds()}
		if s.Err != nil {
			ev.Status, ev.Error = "failed", s.Err.Error()
		}
		if ev.Tools == nil {
			ev.Tools = []string{}
		}
		out[i] = ev
	}
	return out
}

// mcpContext is what the model is told about the MCP servers: each one's
// offered tools and instructions, or that it failed to start.
func mcpContext(st []mcp.Status, offered []string) []prompt.MCPServer {
	var out []prompt.MCPServer
	for _, s := range st {
		p := prompt.MCPServer{Name: s.Name, Failed: s.Err != nil, Instructions: s.Instructions}
		for _, t := range s.Tools {
			if slices.Contains(offered, t) {
				p.Tools = append(p.Tools, t)
			}
		}
		out = append(out, p)
	}
	return out
}

// MCPElicitationEvent reports an MCP server's request for user input and
// how awl answered it, at once, with no one to ask: "accept" with the
// schema's defaults when every required field has one, else "decline".
type MCPElicitationEvent struct {
	Base
	Server string `json:"server"`
	// Name and CallID are the tool call the request came during.
	Name    string   `json:"name"`
	CallID  string   `json:"call_id"`
	Message string   `json:"message"`
	Action  string   `json:"action"`
	Fields  []string `json:"fields"`
	Reason  string   `json:"reason"`
}

// mcpCall returns the context of tool call callID: elicitation requests
// during it are reported as mcp_elicitation events.
func (r *run) mcpCall(ctx context.Context, callID string) context.Context {
	em := r.cfg.Events
	return mcp.WithCall(ctx, callID, func(e mcp.Elicitation) {
		fields := e.Fields
		if fields == nil {
			fields = []string{}
		}
		em.Emit(MCPElicitationEvent{Base: em.Stamp("mcp_elicitation", r.res.SessionID), Server: e.Server, Name: e.Tool, CallID: e.CallID, Message: e.Message, Action: e.Action, Fields: fields, Reason: e.Reason})
	})
}
