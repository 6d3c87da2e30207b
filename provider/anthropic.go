package provider

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/conv"
)

// anthropicVersion is the API version header every request carries.
const anthropicVersion = "2023-06-01"

// anthropicBudget is the thinking budget of a Request.Reasoning on the
// Anthropic API, and whether it names one. A switch, not a map: a
// package-level map is built by an initialiser at every start of awl.
func anthropicBudget(reasoning string) (int, bool) {
	switch reasoning {
	case "low":
		return 2048, true
	case "medium":
		return 8192, true
	case "high":
		return 24576, true
	}
	return 0, false
}

// anthropicWire is the Anthropic Messages API. A cloud that serves it
// (Bedrock, Vertex AI) takes the model in the URL and version, its
// anthropic_version, in the body; omitStream leaves "stream" out.
type anthropicWire struct {
	version    string
	omitStream bool
	// self is the provider's name: thinking blocks go back only to the
	// provider that signed them ("" is anthropic).
	self string
}

func (anthropicWire) path() string { return "/v1/messages" }

func (anthropicWire) setHeaders(h http.Header, apiKey string) {
	if apiKey != "" {
		h.Set("x-api-key", apiKey)
	}
	h.Set("anthropic-version", anthropicVersion)
}

// anthropicMaxTokens is the default output cap for model: the older models
// have smaller limits than the current ones.
func anthropicMaxTokens(model string) int {
	switch {
	case strings.HasPrefix(model, "claude-3-5"):
		return 8192
	case strings.HasPrefix(model, "claude-3-") && !strings.HasPrefix(model, "claude-3-7"):
		return 4096
	}
	return 16384
}

type anthCache struct {
	Type string `json:"type"`
	TTL  string `json:"ttl,omitempty"`
}

var (
	ephemeral   = &anthCache{Type: "ephemeral"}
	ephemeral1h = &anthCache{Type: "ephemeral", TTL: "1h"}
)

type anthSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

// anthBlock is every content block awl sends; the fields in use depend on
// Type, and field order fixes the key order on the wire.
type anthBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	Source    *anthSource     `json:"source,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   any             `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Cache     *anthCache      `json:"cache_control,omitempty"`
}

type anthMessage struct {
	Role    string       `json:"role"`
	Content []*anthBlock `json:"content"`
}

type anthTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
	Cache       *anthCache      `json:"cache_control,omitempty"`
}

// anthChoice is tool_choice; only {"type":"none"} is sent.
type anthChoice struct {
	Type string `json:"type"`
}

// anthThinking is {"type":"enabled","budget_tokens":N} or
// {"type":"adaptive"}.
type anthThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

// anthOutput is output_config: the effort of adaptive thinking and the
// structured output format.
type anthOutput struct {
	Effort string        `json:"effort,omitempty"`
	Format *schemaFormat `json:"format,omitempty"`
}

type anthRequest struct {
	Version   string         `json:"anthropic_version,omitempty"`
	Model     string         `json:"model,omitempty"`
	MaxTokens int            `json:"max_tokens"`
	System    []*anthBlock   `json:"system,omitempty"`
	Messages  []*anthMessage `json:"messages"`
	Tools     []*anthTool    `json:"tools,omitempty"`
	Choice    *anthChoice    `json:"tool_choice,omitempty"`
	Thinking  *anthThinking  `json:"thinking,omitempty"`
	Output    *anthOutput    `json:"output_config,omitempty"`
	Stream    bool           `json:"stream,omitempty"`
	Tier      string         `json:"service_tier,omitempty"`
}

func textBlock(s string) *anthBlock { return &anthBlock{Type: "text", Text: &s} }

// toolSchema returns a tool's input schema lowered to an object root
// (LowerToolSchema), or an empty object schema for one that cannot be:
// the caller skips such a tool, so it is only a request that still makes
// sense.
func toolSchema(s json.RawMessage) json.RawMessage {
	out, _, err := LowerToolSchema(s)
	if err != nil {
		return json.RawMessage(emptyObjectSchema)
	}
	return out
}

// encode projects req onto the Messages API. Leading system messages become
// the system prompt; a later one is a user turn wrapped in <system> tags.
// Cache breakpoints go on the system prompt, the last tool and the last
// block of the latest message, so each request reads the previous one's
// prefix from the cache.
func (w anthropicWire) encode(req Request) (reqBody, error) {
	out := anthropicRequest(req, cmp.Or(w.self, NameAnthropic))
	if w.version != "" {
		out.Version, out.Model = w.version, ""
		out.Stream = !w.omitStream
	}
	return writeJSON(req, out)
}

// anthropicRequest is req as the Messages API's request body for the
// provider called self.
func anthropicRequest(req Request, self string) *anthRequest {
	out := &anthRequest{Model: req.Model, MaxTokens: req.MaxTokens, Stream: true, Messages: []*anthMessage{}}
	if out.MaxTokens <= 0 {
		out.MaxTokens = anthropicMaxTokens(req.Model)
	}
	anthropicThinking(out, req)
	out.Tier = anthropicTier(req.ServiceTier)
	mark := ephemeral
	if req.CacheTTL == "1h" {
		// Every breakpoint alike: a 1-hour one may not follow a 5-minute one.
		mark = ephemeral1h
	}
	msgs := req.Messages
	stable, shared := req.StablePrefix, req.SharedPrefix
	for len(msgs) > 0 && msgs[0].Role == conv.RoleSystem {
		for _, b := range msgs[0].Content {
			if b.Type == conv.BlockText && b.Text != "" {
				out.System = append(out.System, textBlock(b.Text))
			}
		}
		msgs = msgs[1:]
		stable--
		shared--
	}
	if n := len(out.System); n > 0 {
		out.System[n-1].Cache = mark
	}
	// The breakpoints: the end of the stable prefix and of the shared
	// one, when each ends before the next, and the end of the request.
	at, sharedAt := 0, 0
	for i, m := range msgs {
		if am := anthropicMessage(m, self); am != nil {
			out.Messages = append(out.Messages, am)
		}
		if i == stable-1 {
			at = len(out.Messages)
		}
		if i == shared-1 {
			sharedAt = len(out.Messages)
		}
	}
	if n := len(out.Messages); n > 0 {
		markEnd(out.Messages[n-1], mark)
		if at > 0 && at < n {
			markEnd(out.Messages[at-1], mark)
		}
		if sharedAt >= at || sharedAt > 0 && !markEnd(out.Messages[sharedAt-1], mark) {
			sharedAt = 0
		}
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, &anthTool{Name: t.Name, Description: t.Description, InputSchema: toolSchema(t.Schema)})
	}
	// A request may mark four breakpoints: with the shared prefix marked,
	// the one after the tools goes (the system prompt's, after them,
	// serves when it is there).
	if n := len(out.Tools); n > 0 && (sharedAt == 0 || len(out.System) == 0) {
		out.Tools[n-1].Cache = mark
	}
	if n := len(out.Tools); n > 0 {
		if req.ToolChoice != "" {
			out.Choice = &anthChoice{Type: req.ToolChoice}
		}
	}
	if f := newSchemaFormat(req.OutputSchema, true, false, false); f != nil {
		f.Schema = anthropicOutputSchema(f.Schema)
		if out.Output == nil {
			out.Output = &anthOutput{}
		}
		out.Output.Format = f
	}
	return out
}

// anthropicThinking sets the thinking of out for req.Reasoning in the form
// req.Thinking names: adaptive thinking with output_config.effort, or a
// token budget (the form of a model the table does not know), which
// raises max_tokens above the budget. A model that does not reason gets
// neither.
func anthropicThinking(out *anthRequest, req Request) {
	budget, ok := anthropicBudget(req.Reasoning)
	switch {
	case !ok || req.Thinking == ThinkingNone:
	case req.Thinking == ThinkingAdaptive:
		out.Thinking = &anthThinking{Type: "adaptive"}
		out.Output = &anthOutput{Effort: req.Reasoning}
	default:
		out.Thinking = &anthThinking{Type: "enabled", BudgetTokens: budget}
		out.MaxTokens = max(out.MaxTokens, budget+4096)
	}
}

// RefusesBudgetThinking reports whether err is the Messages API's refusal
// of thinking with a token budget by a model that takes adaptive thinking
// only (HTTP 400, "\"thinking.type.enabled\" is not supported for this
// model"): the request may be sent again in the adaptive form.
func RefusesBudgetThinking(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == 400 && strings.Contains(e.Message, `"thinking.type.enabled" is not supported`)
}

// markEnd sets a cache breakpoint on the last block of m, unless it is
// thinking, which cannot carry one, and reports whether it did.
func markEnd(m *anthMessage, mark *anthCache) bool {
	last := m.Content[len(m.Content)-1]
	if last.Type == "thinking" || last.Type == "redacted_thinking" {
		return false
	}
	last.Cache = mark
	return true
}

// anthropicMessage lowers one message, or returns nil when nothing in it
// can be sent (the API rejects empty content).
func anthropicMessage(m conv.Message, self string) *anthMessage {
	am := &anthMessage{Role: "user"}
	switch m.Role {
	case conv.RoleAssistant:
		am.Role = "assistant"
	case conv.RoleSystem:
		var parts []string
		for _, b := range m.Content {
			if b.Type == conv.BlockText {
				parts = append(parts, b.Text)
			}
		}
		am.Content = append(am.Content, textBlock("<system>\n"+strings.Join(parts, "\n")+"\n</system>"))
		return am
	}
	same := m.Provider == self
	for _, b := range m.Content {
		switch b.Type {
		case conv.BlockText:
			if b.Text != "" {
				am.Content = append(am.Content, textBlock(b.Text))
			}
		case conv.BlockImage:
			am.Content = append(am.Content, anthropicImage(b.MimeType, b.Data))
		case conv.BlockThinking:
			switch {
			case m.Role != conv.RoleAssistant || !same:
			case b.Redacted != "":
				am.Content = append(am.Content, &anthBlock{Type: "redacted_thinking", Data: b.Redacted})
			case b.Signature != "":
				th := b.Thinking
				am.Content = append(am.Content, &anthBlock{Type: "thinking", Thinking: &th, Signature: b.Signature})
			}
		case conv.BlockToolUse:
			am.Content = append(am.Content, &anthBlock{Type: "tool_use", ID: anthToolID(b.ID), Name: b.Name, Input: jsonObject(b.Input)})
		case conv.BlockToolResult:
			tr := &anthBlock{Type: "tool_result", ToolUseID: anthToolID(b.ToolUseID), IsError: b.IsError}
			if len(b.Attachments) == 0 {
				tr.Content = b.Content
			} else {
				var parts []*anthBlock
				if b.Content != "" {
					parts = append(parts, textBlock(b.Content))
				}
				for _, a := range b.Attachments {
					parts = append(parts, anthropicImage(a.MimeType, a.Data))
				}
				tr.Content = parts
			}
			am.Content = append(am.Content, tr)
		}
	}
	if len(am.Content) == 0 {
		return nil
	}
	return am
}

func anthropicImage(mime, data string) *anthBlock {
	return &anthBlock{Type: "image", Source: &anthSource{Type: "base64", MediaType: mime, Data: data}}
}

// anthropicDecoder accumulates one Messages API response.
type anthropicDecoder struct {
	provider string
	emit     func(Event)
	msg      conv.Message
	usage    conv.Usage
	hasUsage bool // the stream reported usage (a server may not: its cost is unknown)
	stop     string
	// pos maps the stream's block index to a position in msg.Content;
	// blocks of types awl doesn't keep map to -1.
	pos   map[int64]int
	input map[int]*strings.Builder
	text  map[int]*strings.Builder
}

func (anthropicWire) decoder(provider string, emit func(Event)) decoder {
	return &anthropicDecoder{
		provider: provider, emit: emit,
		msg:   conv.Message{Role: conv.RoleAssistant, Provider: provider},
		pos:   map[int64]int{},
		input: map[int]*strings.Builder{},
		text:  map[int]*strings.Builder{},
	}
}

func (d *anthropicDecoder) event(_, data []byte) (bool, error) {
	typ := get(data, "type")
	switch typ.Str {
	case "message_start":
		m := get(data, "message")
		d.msg.Model = str(m.Get("model"))
		d.readUsage(m.Get("usage"))
	case "content_block_start":
		d.start(get(data, "index").Int(), get(data, "content_block"))
	case "content_block_delta":
		d.delta(get(data, "index").Int(), get(data, "delta"))
	case "content_block_stop":
		if i, ok := d.pos[get(data, "index").Int()]; ok && i >= 0 {
			d.finish(i)
		}
	case "message_delta":
		if r := get(data, "delta.stop_reason"); r.Type == gjson.String {
			d.stop = strings.Clone(r.Str)
		}
		d.readUsage(get(data, "usage"))
	case "message_stop":
		d.complete()
		return true, nil
	case "error":
		return false, anthropicStreamError(get(data, "error"))
	}
	return false, nil
}

// anthropicStreamError classifies an error event sent inside a 200 stream.
func anthropicStreamError(e gjson.Result) *wireError {
	typ := e.Get("type").String()
	we := &wireError{msg: strings.Clone(e.Get("message").String()), kind: KindRequest, inStream: true, code: strings.Clone(typ)}
	if we.msg == "" {
		we.msg = typ
	}
	switch typ {
	case "overloaded_error", "api_error", "rate_limit_error", "timeout_error":
		we.retry = true
	case "authentication_error", "permission_error", "not_found_error":
		we.kind = KindAuth
	}
	return we
}

func (d *anthropicDecoder) readUsage(u gjson.Result) {
	if !u.IsObject() {
		return
	}
	d.hasUsage = true
	if v := u.Get("service_tier"); v.Type == gjson.String {
		d.msg.ServiceTier = strings.Clone(v.Str)
	}
	if v := u.Get("input_tokens"); v.Exists() {
		d.usage.Input = v.Int()
	}
	if v := u.Get("output_tokens"); v.Exists() {
		d.usage.Output = v.Int()
	}
	if v := u.Get("cache_read_input_tokens"); v.Exists() {
		d.usage.CacheRead = v.Int()
	}
	if v := u.Get("cache_creation_input_tokens"); v.Exists() {
		d.usage.CacheWrite = v.Int()
	}
}

func (d *anthropicDecoder) start(index int64, cb gjson.Result) {
	if _, seen := d.pos[index]; seen {
		return
	}
	var b conv.Block
	switch cb.Get("type").Str {
	case "text":
		b = conv.Block{Type: conv.BlockText}
	case "thinking":
		b = conv.Block{Type: conv.BlockThinking}
	case "redacted_thinking":
		b = conv.Block{Type: conv.BlockThinking, Redacted: str(cb.Get("data"))}
	case "tool_use":
		b = conv.Block{Type: conv.BlockToolUse, ID: str(cb.Get("id")), Name: str(cb.Get("name"))}
	default:
		d.pos[index] = -1
		return
	}
	i := len(d.msg.Content)
	d.pos[index] = i
	d.msg.Content = append(d.msg.Content, b)
	if b.Type == conv.BlockToolUse {
		d.input[i] = &strings.Builder{}
		d.emit(Event{Kind: EventToolCallStart, Index: i, ToolID: b.ID, ToolName: b.Name})
	} else {
		// A text block may open with text; a thinking block with thinking.
		d.text[i] = &strings.Builder{}
		if t := cb.Get("text").Str; t != "" && b.Type == conv.BlockText {
			d.appendText(i, t, EventTextDelta)
		}
		if t := cb.Get("thinking").Str; t != "" && b.Type == conv.BlockThinking {
			d.appendText(i, t, EventThinkingDelta)
		}
		if s := cb.Get("signature").Str; s != "" {
			d.msg.Content[i].Signature = strings.Clone(s)
		}
	}
}

func (d *anthropicDecoder) appendText(i int, t string, kind EventKind) {
	d.text[i].WriteString(t)
	d.emit(Event{Kind: kind, Index: i, Text: strings.Clone(t)})
}

func (d *anthropicDecoder) delta(index int64, delta gjson.Result) {
	i, ok := d.pos[index]
	if !ok || i < 0 || d.text[i] == nil && d.input[i] == nil {
		// Not started, not kept, or already stopped: finish dropped the
		// builder, and a late delta must not reopen the block.
		return
	}
	b := &d.msg.Content[i]
	switch delta.Get("type").Str {
	case "text_delta":
		if b.Type == conv.BlockText {
			d.appendText(i, delta.Get("text").Str, EventTextDelta)
		}
	case "thinking_delta":
		if b.Type == conv.BlockThinking {
			d.appendText(i, delta.Get("thinking").Str, EventThinkingDelta)
		}
	case "signature_delta":
		if b.Type == conv.BlockThinking {
			b.Signature += strings.Clone(delta.Get("signature").Str)
		}
	case "input_json_delta":
		if sb := d.input[i]; sb != nil {
			p := delta.Get("partial_json").Str
			sb.WriteString(p)
			if p != "" {
				d.emit(Event{Kind: EventToolCallDelta, Index: i, ToolID: b.ID, ToolName: b.Name, Text: strings.Clone(p)})
			}
		}
	}
}

// finish closes block i: text is set from its builder; a tool call's input
// is the concatenated JSON, {} when the model sent none.
func (d *anthropicDecoder) finish(i int) {
	b := &d.msg.Content[i]
	if sb := d.text[i]; sb != nil {
		switch b.Type {
		case conv.BlockText:
			b.Text = sb.String()
		case conv.BlockThinking:
			b.Thinking = sb.String()
		}
		delete(d.text, i)
	}
	if sb := d.input[i]; sb != nil {
		b.Input = strings.TrimSpace(sb.String())
		if b.Input == "" {
			b.Input = "{}"
		}
		delete(d.input, i)
		d.emit(Event{Kind: EventToolCallEnd, Index: i, ToolID: b.ID, ToolName: b.Name})
	}
}

// complete finalizes blocks left open (a response cut off by max_tokens)
// and the message metadata.
func (d *anthropicDecoder) complete() {
	for i := range d.msg.Content {
		d.finish(i)
	}
	d.msg.StopReason = anthropicStop(d.stop)
	u := d.usage
	if d.hasUsage {
		d.msg.Usage = &u
	}
	d.emit(Event{Kind: EventUsage, Usage: u})
}

func anthropicStop(s string) conv.StopReason {
	switch s {
	case "tool_use":
		return conv.StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return conv.StopLength
	case "refusal":
		return conv.StopError
	}
	return conv.StopEnd
}

// whole decodes a non-streamed Messages API response.
func (d *anthropicDecoder) whole(body []byte) error {
	if !gjson.ValidBytes(body) {
		return &wireError{retry: true, msg: "response body is not valid JSON"}
	}
	root := gjson.ParseBytes(body)
	if root.Get("type").Str == "error" {
		return anthropicStreamError(root.Get("error"))
	}
	d.msg.Model = root.Get("model").String()
	d.readUsage(root.Get("usage"))
	d.stop = root.Get("stop_reason").String()
	for k, cb := range root.Get("content").Array() {
		d.start(int64(k), cb)
		i := d.pos[int64(k)]
		if i < 0 {
			continue
		}
		if cb.Get("type").Str == "tool_use" {
			in := cb.Get("input").Raw
			d.input[i].WriteString(in)
			d.emit(Event{Kind: EventToolCallDelta, Index: i, ToolID: d.msg.Content[i].ID, ToolName: d.msg.Content[i].Name, Text: in})
		}
		d.finish(i)
	}
	d.complete()
	return nil
}

func (d *anthropicDecoder) message() conv.Message { return d.msg }

// anthToolID returns id when it matches Anthropic's ^[a-zA-Z0-9_-]+$, else
// a valid id derived from it alone (fitToolID). Ids from other providers
// (Kimi's "functions.bash:0") need it when a session moves to Anthropic.
func anthToolID(id string) string { return fitToolID(id, 0, anthIDByte) }

// fitToolID returns id when it is non-empty, at most maxLen bytes (0: no
// limit) and every byte is ok (nil: any), else an id derived from it alone:
// bytes that aren't ok become '_', the front is cut to leave room, then '_'
// and 8 hex digits of a hash of id follow. So distinct ids stay distinct
// and every request maps an id the same way, keeping the cached prefix.
func fitToolID(id string, maxLen int, ok func(byte) bool) string {
	fits := id != "" && (maxLen == 0 || len(id) <= maxLen)
	for i := 0; i < len(id) && fits && ok != nil; i++ {
		fits = ok(id[i])
	}
	if fits {
		return id
	}
	b := []byte(id)
	if maxLen > 0 && len(b) > maxLen-9 {
		b = b[:maxLen-9]
	}
	for i, c := range b {
		if ok != nil && !ok(c) {
			b[i] = '_'
		}
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	return fmt.Sprintf("%s_%08x", b, h.Sum32())
}

func anthIDByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// appendJSON methods write the wire structs as encoding/json would, field
// by field in tag order, omitempty included (jsonw.go).

func (c *anthCache) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("type", c.Type)
	w.optStr("ttl", c.TTL)
	w.end()
}

func (s *anthSource) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("type", s.Type)
	w.strField("media_type", s.MediaType)
	w.strField("data", s.Data)
	w.end()
}

func (b *anthBlock) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("type", b.Type)
	w.optPtrStr("text", b.Text)
	w.optPtrStr("thinking", b.Thinking)
	w.optStr("signature", b.Signature)
	w.optStr("data", b.Data)
	optObjField(w, "source", b.Source)
	w.optStr("id", b.ID)
	w.optStr("name", b.Name)
	if len(b.Input) > 0 {
		w.rawField("input", b.Input)
	}
	w.optStr("tool_use_id", b.ToolUseID)
	w.optAnyField("content", b.Content)
	if b.IsError {
		w.boolField("is_error", true)
	}
	optObjField(w, "cache_control", b.Cache)
	w.end()
}

func (m *anthMessage) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("role", m.Role)
	sliceField(w, "content", m.Content, (*anthBlock).appendJSON)
	w.end()
}

func (t *anthTool) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("name", t.Name)
	w.optStr("description", t.Description)
	w.rawField("input_schema", t.InputSchema)
	optObjField(w, "cache_control", t.Cache)
	w.end()
}

func (c *anthChoice) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("type", c.Type)
	w.end()
}

func (t *anthThinking) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("type", t.Type)
	if t.BudgetTokens != 0 {
		w.intField("budget_tokens", t.BudgetTokens)
	}
	w.end()
}

func (o *anthOutput) appendJSON(w *jsonWriter) {
	w.begin()
	w.optStr("effort", o.Effort)
	optObjField(w, "format", o.Format)
	w.end()
}

func (r *anthRequest) appendJSON(w *jsonWriter) {
	w.begin()
	w.optStr("anthropic_version", r.Version)
	w.optStr("model", r.Model)
	w.intField("max_tokens", r.MaxTokens)
	optSliceField(w, "system", r.System, (*anthBlock).appendJSON)
	sliceField(w, "messages", r.Messages, (*anthMessage).appendJSON)
	optSliceField(w, "tools", r.Tools, (*anthTool).appendJSON)
	optObjField(w, "tool_choice", r.Choice)
	optObjField(w, "thinking", r.Thinking)
	optObjField(w, "output_config", r.Output)
	if r.Stream {
		w.boolField("stream", true)
	}
	w.optStr("service_tier", r.Tier)
	w.end()
}
