package runner

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/policy"
	"github.com/awlrun/awl/runner/tool"
)

// runTools runs the tool calls of one model turn and returns their results
// in the order the model gave the calls.
//
// Calls to read-only tools run concurrently with each other. A call to any
// other tool (write, edit, bash, a tool that does not declare itself
// read-only) waits until every earlier call has ended, and every later call
// waits until it has ended: mutating calls run one at a time, in the model's
// order, and a read sees the effect of the writes the model asked for
// before it. tool_start is emitted when a call actually starts, tool_end
// when it ends.
func (r *run) runTools(ctx context.Context, uses []conv.Block, byName map[string]tool.Tool) []conv.Block {
	em := r.cfg.Events
	id := r.res.SessionID
	out := make([]conv.Block, len(uses))
	var running sync.WaitGroup // read-only calls started since the last mutating one
	for i, u := range uses {
		r.res.ToolCalls++
		t, ok := byName[u.Name]
		if ok && !t.ReadOnly() {
			running.Wait()
		}
		em.Emit(event.ToolStart{Base: em.Stamp("tool_start", id), Name: u.Name, CallID: u.ID, Input: eventInput(u.Input)})
		if !ok {
			out[i] = r.refuse(u)
			em.Emit(event.ToolEnd{Base: em.Stamp("tool_end", id), Name: u.Name, CallID: u.ID, IsError: true, Denied: r.denied(u.Name), OutputBytes: len(out[i].Content)})
			continue
		}
		if bad := r.args.check(t, u); bad != nil {
			out[i] = *bad
			em.Emit(event.ToolEnd{Base: em.Stamp("tool_end", id), Name: u.Name, CallID: u.ID, IsError: true})
			continue
		}
		run, rec, d := r.judge(ctx, t, u)
		if d != nil {
			out[i] = r.deny(u, d)
			out[i].Hook = rec
			em.Emit(event.ToolEnd{Base: em.Stamp("tool_end", id), Name: u.Name, CallID: u.ID, IsError: true, Denied: true, OutputBytes: len(out[i].Content)})
			continue
		}
		if b, ok := r.cfg.RecordedInterrupts[u.ID]; ok {
			out[i] = b
			em.Emit(event.ToolEnd{Base: em.Stamp("tool_end", id), Name: u.Name, CallID: u.ID, IsError: b.IsError, OutputBytes: len(b.Content)})
			continue
		}
		call := func() {
			start := time.Now()
			res := t.Run(r.callContext(ctx, u.ID), json.RawMessage(run.Input))
			// A call that ends after an interrupt message is marked: it
			// was stopped, or kept from starting, by the interrupt.
			out[i] = conv.Block{Type: conv.BlockToolResult, ToolUseID: u.ID, Content: res.Content, IsError: res.IsError, Attachments: res.Attachments, Hook: rec,
				Interrupted: context.Cause(ctx) == errTurnInterrupted}
			em.Emit(event.ToolEnd{Base: em.Stamp("tool_end", id), Name: u.Name, CallID: u.ID, DurationMS: time.Since(start).Milliseconds(), IsError: res.IsError, ExitCode: res.ExitCode, OutputBytes: len(res.Content)})
		}
		if !t.ReadOnly() {
			call()
			continue
		}
		running.Go(call)
	}
	running.Wait()
	return out
}

// judge decides a call to the offered tool t by the policy's rules, then
// by the pre-tool hooks (or, in a replay, by what they decided in the
// recording): the call to run (its input changed by a hook), the hooks'
// record, and the denial when it may not run.
func (r *run) judge(ctx context.Context, t tool.Tool, u conv.Block) (conv.Block, *conv.HookRecord, *policy.Denial) {
	if d := r.cfg.Policy.Check(u.Name, []byte(u.Input)); d != nil {
		return u, nil, d
	}
	var rec *conv.HookRecord
	switch {
	case r.cfg.RecordedHooks != nil:
		rec = r.cfg.RecordedHooks[u.ID]
	case len(r.cfg.Hooks) > 0:
		hd := policy.RunHooks(ctx, r.cfg.Hooks, policy.HookRequest{
			SessionID: r.res.SessionID, Turn: r.res.Turns, Tool: u.Name, CallID: u.ID,
			Input: eventInput(u.Input), Cwd: r.cfg.Cwd,
		})
		rec = &conv.HookRecord{Decision: hd.Decision, Hook: hd.Hook, Reason: hd.Reason, Input: string(hd.Input)}
	}
	if rec == nil {
		return u, nil, nil
	}
	if rec.Decision != "allow" {
		return u, rec, &policy.Denial{Tool: u.Name, Hook: rec.Hook, Reason: rec.Reason}
	}
	if rec.Input == "" {
		return u, rec, nil
	}
	changed := u
	changed.Input = rec.Input
	if problem := fitsSchema(t, changed.Input); problem != "" {
		return u, rec, &policy.Denial{Tool: u.Name, Hook: rec.Hook, Reason: "the input the hook gave does not fit the tool's schema: " + problem}
	}
	if d := r.cfg.Policy.Check(u.Name, []byte(changed.Input)); d != nil {
		d.Reason = "the input the hook gave: " + d.Reason
		return u, rec, d
	}
	return changed, rec, nil
}

// fitsSchema returns what makes input (JSON) not an input of t's schema,
// or "".
func fitsSchema(t tool.Tool, input string) string {
	sch, err := CompileOutputSchema(t.Schema())
	if err != nil {
		return "the tool's schema does not compile: " + err.Error()
	}
	if _, problems := sch.Validate(input); len(problems) > 0 {
		return strings.Join(problems, "; ")
	}
	return ""
}

// callContext is the context tool call callID runs with: the MCP
// elicitation reporting (mcpCall) and the environment ToolEnviron gives
// its processes.
func (r *run) callContext(ctx context.Context, callID string) context.Context {
	ctx = r.mcpCall(ctx, callID)
	if r.cfg.ToolEnviron != nil {
		ctx = tool.WithEnviron(ctx, r.cfg.ToolEnviron(callID)...)
	}
	return ctx
}

// eventInput is a call's input as a tool_start event carries it: the JSON
// the model sent, {} for nothing, or a JSON string when it is not JSON.
func eventInput(in string) json.RawMessage {
	if len(strings.TrimSpace(in)) == 0 {
		return json.RawMessage("{}")
	}
	if !json.Valid([]byte(in)) {
		return mustJSONString(in)
	}
	return json.RawMessage(in)
}
