package runner

import (
	"context"
	"slices"

	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/mcp"
	"github.com/awlrun/awl/runner/modelctx"
)

func mcpEvents(st []mcp.Status) []event.MCPServer {
	if len(st) == 0 {
		return nil
	}
	out := make([]event.MCPServer, len(st))
	for i, s := range st {
		ev := event.MCPServer{Name: s.Name, Transport: s.Transport, Status: "started", Tools: s.Tools, DurationMS: s.Duration.Milliseconds()}
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
func mcpContext(st []mcp.Status, offered []string) []modelctx.MCPServer {
	var out []modelctx.MCPServer
	for _, s := range st {
		p := modelctx.MCPServer{Name: s.Name, Failed: s.Err != nil, Instructions: s.Instructions}
		for _, t := range s.Tools {
			if slices.Contains(offered, t) {
				p.Tools = append(p.Tools, t)
			}
		}
		out = append(out, p)
	}
	return out
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
		em.Emit(event.MCPElicitation{Base: em.Stamp("mcp_elicitation", r.res.SessionID), Server: e.Server, Name: e.Tool, CallID: e.CallID, Message: e.Message, Action: e.Action, Fields: fields, Reason: e.Reason})
	})
}
