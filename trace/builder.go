package trace

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// Builder turns awl's NDJSON event stream into spans, following the
// OpenTelemetry GenAI semantic conventions v1.41.0: the run (invoke_agent),
// each model request (chat MODEL), each tool call (execute_tool NAME),
// compaction and checks. Events are timed as they arrive: Write is called
// as each event is emitted.
//
// A Builder is an io.Writer; it is safe for concurrent use.
type Builder struct {
	cfg     *Config
	redact  func(string) string
	version string
	now     func() time.Time
	// family maps a provider name to gen_ai.provider.name (nil: as is).
	family func(string) string

	mu      sync.Mutex
	partial []byte
	start   time.Time
	spans   []Span
	// The run: started once its session event came.
	started                    bool
	sessionID, provider, model string
	// The request being made: since when (the last event that readied
	// it), the retries so far, and (with content capture) the prompts.
	mark    time.Time
	retries []Event
	prompts []string
	// Tool calls by call id: the index of their span.
	tools map[string]int
	// Checks running, by command and attempt.
	checks map[string]int
	done   bool
}

// NewBuilder returns a builder for a run that started at start. redact
// (nil: none) is applied to every captured text.
func NewBuilder(cfg *Config, start time.Time, version string, redact func(string) string) *Builder {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	return &Builder{cfg: cfg, redact: redact, version: version, now: time.Now, start: start, mark: start,
		tools: map[string]int{}, checks: map[string]int{}}
}

// SetClock replaces time.Now (tests).
func (b *Builder) SetClock(now func() time.Time) { b.now = now }

// Write takes NDJSON event lines.
func (b *Builder) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	data := p
	if len(b.partial) > 0 {
		data = append(b.partial, p...)
		b.partial = nil
	}
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if len(data) > 0 {
				b.partial = append([]byte(nil), data...)
			}
			break
		}
		b.event(data[:i], now)
		data = data[i+1:]
	}
	return len(p), nil
}

func (b *Builder) newSpan(parent [8]byte, name string, kind int, start time.Time) Span {
	s := Span{TraceID: b.cfg.TraceID, Parent: parent, TraceState: b.cfg.TraceState, Name: name, Kind: kind, Start: start}
	rand.Read(s.SpanID[:])
	return s
}

// event adds what one NDJSON event line, seen at now, tells of the run.
func (b *Builder) event(line []byte, now time.Time) {
	if b.done {
		return
	}
	ev := gjson.ParseBytes(line)
	switch ev.Get("type").String() {
	case "session":
		b.started = true
		b.sessionID = ev.Get("session_id").String()
		b.provider = ev.Get("provider").String()
		b.model = ev.Get("model").String()
		b.mark = now
	case "entry":
		b.entry(ev.Get("entry"), now)
	case "retry":
		b.retry(ev, now)
	case "tool_start":
		b.toolStart(ev, now)
	case "tool_end":
		b.toolEnd(ev, now)
	case "check_start":
		b.checkStart(ev, now)
	case "check_end":
		b.checkEnd(ev, now)
	case "compaction":
		b.compaction(ev, now)
	case "result":
		b.result(ev, now)
	}
}

// retry keeps a retry as an event of the span it delays: the next model
// span, or the compaction's.
func (b *Builder) retry(ev gjson.Result, now time.Time) {
	attrs := []KV{Int("awl.retry.attempt", ev.Get("attempt").Int()), Int("awl.retry.wait_ms", ev.Get("wait_ms").Int())}
	if st := ev.Get("status").Int(); st != 0 {
		attrs = append(attrs, Int("http.response.status_code", st))
	}
	if msg := ev.Get("error").String(); msg != "" {
		attrs = append(attrs, Str("error.message", b.redact(msg)))
	}
	b.retries = append(b.retries, Event{Time: now, Name: "retry", Attrs: attrs})
}

// toolStart opens a tool call's span.
func (b *Builder) toolStart(ev gjson.Result, now time.Time) {
	// The model chose the name and the id: redacted, with or without
	// content capture, like what the events carried.
	name := b.redact(ev.Get("name").String())
	s := b.newSpan(b.cfg.Root, "execute_tool "+name, KindInternal, now)
	s.Attrs = []KV{
		Str("gen_ai.operation.name", "execute_tool"),
		Str("gen_ai.tool.name", name),
		Str("gen_ai.tool.call.id", b.redact(ev.Get("call_id").String())),
		Str("gen_ai.tool.type", "function"),
	}
	if b.cfg.CaptureContent {
		in := ev.Get("input")
		text := in.Raw
		if in.Type == gjson.String {
			text = in.String()
		}
		s.Attrs = append(s.Attrs, Str("gen_ai.tool.call.arguments", b.redact(text)))
	}
	b.spans = append(b.spans, s)
	b.tools[ev.Get("call_id").String()] = len(b.spans) - 1
}

// toolEnd closes a tool call's span.
func (b *Builder) toolEnd(ev gjson.Result, now time.Time) {
	i, ok := b.tools[ev.Get("call_id").String()]
	if !ok {
		return
	}
	s := &b.spans[i]
	s.End = now
	s.Attrs = append(s.Attrs, Int("awl.tool.duration_ms", ev.Get("duration_ms").Int()))
	if x := ev.Get("exit_code"); x.Exists() {
		s.Attrs = append(s.Attrs, Int("awl.tool.exit_code", x.Int()))
	}
	denied := ev.Get("denied").Bool()
	s.Attrs = append(s.Attrs, Bool("awl.tool.denied", denied))
	if ev.Get("is_error").Bool() {
		s.Status = StatusError
		kind := "tool_error"
		if denied {
			kind = "denied"
		}
		s.Attrs = append(s.Attrs, Str("error.type", kind))
	}
	b.mark = now
}

// checkStart opens a --check command's span.
func (b *Builder) checkStart(ev gjson.Result, now time.Time) {
	s := b.newSpan(b.cfg.Root, "awl.check", KindInternal, now)
	s.Attrs = []KV{Int("awl.check.attempt", ev.Get("attempt").Int())}
	if b.cfg.CaptureContent {
		s.Attrs = append(s.Attrs, Str("awl.check.command", b.redact(ev.Get("cmd").String())))
	}
	b.spans = append(b.spans, s)
	b.checks[ev.Get("cmd").String()+"\x00"+ev.Get("attempt").String()] = len(b.spans) - 1
}

// checkEnd closes a --check command's span.
func (b *Builder) checkEnd(ev gjson.Result, now time.Time) {
	key := ev.Get("cmd").String() + "\x00" + ev.Get("attempt").String()
	i, ok := b.checks[key]
	if !ok {
		return
	}
	delete(b.checks, key)
	s := &b.spans[i]
	s.End = now
	code := ev.Get("exit_code").Int()
	s.Attrs = append(s.Attrs, Int("awl.check.exit_code", code))
	if code != 0 {
		s.Status, s.StatusMsg = StatusError, "the check failed"
	}
	b.mark = now
}

// compaction adds a compaction's span, ending now, with the retries of
// its summary request.
func (b *Builder) compaction(ev gjson.Result, now time.Time) {
	d := time.Duration(ev.Get("duration_ms").Int()) * time.Millisecond
	s := b.newSpan(b.cfg.Root, "awl.compaction", KindInternal, now.Add(-d))
	s.End = now
	s.Attrs = []KV{
		Str("awl.compaction.reason", ev.Get("reason").String()),
		Int("awl.compaction.tokens_before", ev.Get("tokens_before").Int()),
		Int("awl.compaction.tokens_after", ev.Get("tokens_after").Int()),
	}
	// Retries during the summary request are the compaction's.
	keep := b.retries[:0]
	for _, r := range b.retries {
		if r.Time.Before(s.Start) {
			keep = append(keep, r)
		} else {
			s.Events = append(s.Events, r)
		}
	}
	b.retries = keep
	b.spans = append(b.spans, s)
	b.mark = now
}

func (b *Builder) entry(e gjson.Result, now time.Time) {
	if e.Get("type").String() != "message" {
		b.mark = now
		return
	}
	msg := e.Get("message")
	switch msg.Get("role").String() {
	case "assistant":
		b.request(e, msg, now)
	case "user":
		if m := e.Get("model").String(); m != "" {
			b.model = m
		}
		if p := e.Get("provider").String(); p != "" {
			b.provider = p
		}
		for _, blk := range msg.Get("content").Array() {
			switch blk.Get("type").String() {
			case "text":
				if b.cfg.CaptureContent {
					b.prompts = append(b.prompts, blk.Get("text").String())
				}
			case "toolResult":
				if i, ok := b.tools[blk.Get("toolUseId").String()]; ok && b.cfg.CaptureContent {
					b.spans[i].Attrs = append(b.spans[i].Attrs, Str("gen_ai.tool.call.result", b.redact(blk.Get("content").String())))
				}
			}
		}
		b.mark = now
	default:
		b.mark = now
	}
}

// request records the model request that msg answered.
func (b *Builder) request(e, msg gjson.Result, now time.Time) {
	s := b.newSpan(b.cfg.Root, "chat "+b.model, KindClient, b.mark)
	s.End = now
	s.Attrs = b.requestAttrs()
	if m := msg.Get("model").String(); m != "" {
		s.Attrs = append(s.Attrs, Str("gen_ai.response.model", m))
	}
	if u := msg.Get("usage"); u.Exists() {
		in, cr, cw := u.Get("input").Int(), u.Get("cacheRead").Int(), u.Get("cacheWrite").Int()
		s.Attrs = append(s.Attrs,
			Int("gen_ai.usage.input_tokens", in+cr+cw),
			Int("gen_ai.usage.output_tokens", u.Get("output").Int()),
			Int("gen_ai.usage.cache_read.input_tokens", cr),
			Int("gen_ai.usage.cache_creation.input_tokens", cw))
	}
	if c := msg.Get("costUsd"); c.Exists() {
		s.Attrs = append(s.Attrs, Float("awl.cost_usd", c.Float()))
	}
	stop := msg.Get("stopReason").String()
	if stop != "" {
		s.Attrs = append(s.Attrs, KV{"gen_ai.response.finish_reasons", []string{finishReason(stop)}})
	}
	if b.cfg.CaptureContent {
		if len(b.prompts) > 0 {
			s.Attrs = append(s.Attrs, Str("gen_ai.input.messages", b.messages("user", b.prompts, nil, "")))
		}
		var texts []string
		var calls []map[string]any
		for _, blk := range msg.Get("content").Array() {
			switch blk.Get("type").String() {
			case "text":
				texts = append(texts, blk.Get("text").String())
			case "toolUse":
				calls = append(calls, map[string]any{"type": "tool_call", "id": blk.Get("id").String(), "name": blk.Get("name").String(), "arguments": blk.Get("input").String()})
			}
		}
		s.Attrs = append(s.Attrs, Str("gen_ai.output.messages", b.messages("assistant", texts, calls, finishReason(stop))))
	}
	s.Events = b.retries
	b.retries, b.prompts = nil, nil
	b.spans = append(b.spans, s)
	b.mark = now
}

func (b *Builder) requestAttrs() []KV {
	attrs := []KV{
		Str("gen_ai.operation.name", "chat"),
		Str("gen_ai.provider.name", b.providerName(b.provider)),
		Str("gen_ai.request.model", b.model),
	}
	if b.sessionID != "" {
		attrs = append(attrs, Str("gen_ai.conversation.id", b.sessionID))
	}
	return attrs
}

// messages is the semantic conventions' JSON for captured messages: one
// message of role with text parts (and tool calls), redacted.
func (b *Builder) messages(role string, texts []string, calls []map[string]any, finish string) string {
	parts := []map[string]any{}
	for _, t := range texts {
		parts = append(parts, map[string]any{"type": "text", "content": t})
	}
	parts = append(parts, calls...)
	m := map[string]any{"role": role, "parts": parts}
	if finish != "" {
		m["finish_reason"] = finish
	}
	out, _ := json.Marshal([]any{m})
	return b.redact(string(out))
}

func (b *Builder) result(ev gjson.Result, now time.Time) {
	b.done = true
	if id := ev.Get("session_id").String(); id != "" {
		b.sessionID = id
	}
	code := ev.Get("exit_code").Int()
	reason := ev.Get("reason").String()
	// A request that failed (no answer came) is a span too.
	if b.started && (reason == "provider_error" || reason == "provider_config" || len(b.retries) > 0) {
		s := b.newSpan(b.cfg.Root, "chat "+b.model, KindClient, b.mark)
		s.End = now
		s.Attrs = append(b.requestAttrs(), Str("error.type", reason))
		s.Status, s.StatusMsg = StatusError, b.redact(ev.Get("error").String())
		s.Events = b.retries
		b.retries = nil
		b.spans = append(b.spans, s)
	}
	// Tools and checks still open were cut short by the end of the run.
	for i := range b.spans {
		if b.spans[i].End.IsZero() {
			b.spans[i].End = now
			b.spans[i].Status, b.spans[i].StatusMsg = StatusError, "the run ended first ("+reason+")"
		}
	}
	root := Span{TraceID: b.cfg.TraceID, SpanID: b.cfg.Root, Parent: b.cfg.Parent, TraceState: b.cfg.TraceState,
		Name: "invoke_agent awl", Kind: KindInternal, Start: b.start, End: now}
	root.Attrs = []KV{
		Str("gen_ai.operation.name", "invoke_agent"),
		Str("gen_ai.agent.name", "awl"),
		Str("gen_ai.provider.name", b.providerName(b.provider)),
		Str("gen_ai.request.model", b.model),
		Int("awl.exit_code", code),
		Str("awl.reason", reason),
		Int("awl.turns", ev.Get("turns").Int()),
		Int("awl.tool_calls", ev.Get("tool_calls").Int()),
	}
	if b.version != "" {
		root.Attrs = append(root.Attrs, Str("awl.version", b.version))
	}
	if b.sessionID != "" {
		root.Attrs = append(root.Attrs, Str("gen_ai.conversation.id", b.sessionID), Str("awl.session.id", b.sessionID))
	}
	u := ev.Get("usage")
	root.Attrs = append(root.Attrs,
		Int("gen_ai.usage.input_tokens", u.Get("input").Int()+u.Get("cache_read").Int()+u.Get("cache_write").Int()),
		Int("gen_ai.usage.output_tokens", u.Get("output").Int()),
		Int("gen_ai.usage.cache_read.input_tokens", u.Get("cache_read").Int()),
		Int("gen_ai.usage.cache_creation.input_tokens", u.Get("cache_write").Int()))
	if c := ev.Get("cost_usd"); c.Type == gjson.Number {
		root.Attrs = append(root.Attrs, Float("awl.cost_usd", c.Float()))
	}
	if code != 0 {
		root.Status, root.StatusMsg = StatusError, b.redact(ev.Get("error").String())
		root.Attrs = append(root.Attrs, Str("error.type", reason))
	}
	b.spans = append(b.spans, root)
}

// Spans returns the spans built so far: all of them once the result event
// has arrived (the run span last).
func (b *Builder) Spans() []Span {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Span(nil), b.spans...)
}

// Done reports whether the result event has arrived.
func (b *Builder) Done() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.done
}

// ToolTraceparent is the W3C traceparent of tool call callID's span, for
// the processes the call starts; "" when no such call has started.
func (b *Builder) ToolTraceparent(callID string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	i, ok := b.tools[callID]
	if !ok {
		return ""
	}
	return b.cfg.traceparent(b.spans[i].SpanID)
}

// CheckTraceparent is the W3C traceparent of the span of check cmd's
// attempt, for its process; "" when that check has not started.
func (b *Builder) CheckTraceparent(cmd string, attempt int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	i, ok := b.checks[cmd+"\x00"+strconv.Itoa(attempt)]
	if !ok {
		return ""
	}
	return b.cfg.traceparent(b.spans[i].SpanID)
}

// Request returns the encoded ExportTraceServiceRequest of the spans.
func (b *Builder) Request() []byte {
	return Encode(b.cfg.Resource, "github.com/awlrun/awl", b.version, b.Spans())
}

// SetProviderFamily sets how a provider name maps to the semantic
// conventions' gen_ai.provider.name: the provider registry's family
// (openai-chat is openai). Without it, names are passed as they are.
func (b *Builder) SetProviderFamily(family func(string) string) { b.family = family }

// providerName is provider p's gen_ai.provider.name.
func (b *Builder) providerName(p string) string {
	if b.family == nil {
		return p
	}
	return b.family(p)
}

// finishReason maps awl's stop reasons to the conventions' finish reasons.
func finishReason(stop string) string {
	switch stop {
	case "toolUse":
		return "tool_call"
	case "length":
		return "length"
	case "error":
		return "error"
	}
	return "stop"
}
