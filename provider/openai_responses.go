package provider

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/conv"
)

// responsesWire is the OpenAI Responses API.
type responsesWire struct{}

func (responsesWire) path() string { return "/responses" }

func (responsesWire) setHeaders(h http.Header, apiKey string) {
	if apiKey != "" {
		h.Set("Authorization", "Bearer "+apiKey)
	}
}

// respPart is an input content part.
type respPart struct {
	Type     string  `json:"type"`
	Text     *string `json:"text,omitempty"`
	ImageURL string  `json:"image_url,omitempty"`
	// Detail is required on input_image by the Responses schema.
	Detail string `json:"detail,omitempty"`
}

type respSummary struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// respItem is every input item awl sends; field order fixes key order.
type respItem struct {
	Type             string          `json:"type,omitempty"`
	Role             string          `json:"role,omitempty"`
	Content          any             `json:"content,omitempty"`
	ID               string          `json:"id,omitempty"`
	Summary          *[]*respSummary `json:"summary,omitempty"` // always sent on reasoning items, [] when empty
	EncryptedContent string          `json:"encrypted_content,omitempty"`
	CallID           string          `json:"call_id,omitempty"`
	Name             string          `json:"name,omitempty"`
	Arguments        *string         `json:"arguments,omitempty"`
	Output           any             `json:"output,omitempty"`
}

type respTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

type respReasoning struct {
	Effort  string `json:"effort"`
	Summary string `json:"summary"`
}

type respRequest struct {
	Model           string         `json:"model"`
	Input           []*respItem    `json:"input"`
	Tools           []*respTool    `json:"tools,omitempty"`
	ToolChoice      string         `json:"tool_choice,omitempty"`
	Reasoning       *respReasoning `json:"reasoning,omitempty"`
	MaxOutputTokens int            `json:"max_output_tokens,omitempty"`
	Text            *formatWrapper `json:"text,omitempty"`
	Include         []string       `json:"include,omitempty"`
	Store           bool           `json:"store"`
	Stream          bool           `json:"stream"`
	CacheKey        string         `json:"prompt_cache_key,omitempty"`
	CacheRetention  string         `json:"prompt_cache_retention,omitempty"`
	ServiceTier     string         `json:"service_tier,omitempty"`
}

// reasoningModel reports whether model is an OpenAI reasoning model, whose
// reasoning items must come back encrypted to be replayed with store false.
// Other models reject the include, gpt-5-chat* among them ("Encrypted
// content is not supported with this model").
func reasoningModel(model string) bool {
	if strings.HasPrefix(model, "gpt-5-chat") || strings.Contains(model, "/gpt-5-chat") {
		return false
	}
	for _, p := range []string{"gpt-5", "o1", "o3", "o4", "codex"} {
		if strings.HasPrefix(model, p) || strings.Contains(model, "/"+p) {
			return true
		}
	}
	return false
}

// encode projects req onto the Responses API, statelessly: store is false
// and every turn resends the whole item list, reasoning items included
// with their encrypted content. System messages are developer messages in
// place.
func (responsesWire) encode(req Request) (reqBody, error) {
	return writeJSON(req, responsesRequest(req))
}

// responsesRequest is req as the Responses API's request body.
func responsesRequest(req Request) *respRequest {
	out := &respRequest{Model: req.Model, Input: []*respItem{}, MaxOutputTokens: req.MaxTokens, Stream: true, CacheKey: req.CacheKey, ServiceTier: req.ServiceTier}
	if req.CacheTTL == "24h" {
		out.CacheRetention = "24h"
	}
	effort := req.Reasoning
	if req.Thinking == ThinkingNone {
		effort = "" // a model that does not reason refuses the parameter
	}
	if effort != "" {
		out.Reasoning = &respReasoning{Effort: effort, Summary: "auto"}
	}
	if effort != "" || req.Thinking != ThinkingNone && reasoningModel(req.Model) {
		out.Include = []string{"reasoning.encrypted_content"}
	}
	for _, m := range req.Messages {
		out.Input = append(out.Input, responsesItems(m)...)
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, &respTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: toolSchema(t.Schema)})
	}
	if len(out.Tools) > 0 {
		out.ToolChoice = req.ToolChoice
	}
	if f := newSchemaFormat(req.OutputSchema, true, true, true); f != nil {
		out.Text = &formatWrapper{Format: f}
	}
	return out
}

func inputText(s string) *respPart { return &respPart{Type: "input_text", Text: &s} }

func inputImage(mime, data string) *respPart {
	return &respPart{Type: "input_image", ImageURL: dataURL(mime, data), Detail: "auto"}
}

// responsesItems lowers one message to input items, in block order.
func responsesItems(m conv.Message) []*respItem {
	switch m.Role {
	case conv.RoleSystem:
		return []*respItem{{Role: "developer", Content: joinText(m.Content, "\n")}}
	case conv.RoleAssistant:
		var out []*respItem
		same := m.Provider == NameOpenAI
		for _, b := range m.Content {
			switch b.Type {
			case conv.BlockText:
				if b.Text != "" {
					out = append(out, &respItem{Role: "assistant", Content: b.Text})
				}
			case conv.BlockThinking:
				// With store false the server keeps nothing: a
				// reasoning item without its encrypted content can't
				// be resolved and is left out.
				if !same || b.ItemID == "" || b.Signature == "" {
					continue
				}
				// The API requires summary on a reasoning item, even empty.
				summary := []*respSummary{}
				if b.Thinking != "" {
					summary = append(summary, &respSummary{Type: "summary_text", Text: b.Thinking})
				}
				out = append(out, &respItem{Type: "reasoning", ID: b.ItemID, Summary: &summary, EncryptedContent: b.Signature})
			case conv.BlockToolUse:
				args := b.Input
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				out = append(out, &respItem{Type: "function_call", CallID: respCallID(b.ID), Name: b.Name, Arguments: &args})
			}
		}
		return out
	}
	var out []*respItem
	var parts []*respPart
	flush := func() {
		if len(parts) > 0 {
			out = append(out, &respItem{Role: "user", Content: parts})
			parts = nil
		}
	}
	for _, b := range m.Content {
		switch b.Type {
		case conv.BlockText:
			parts = append(parts, inputText(b.Text))
		case conv.BlockImage:
			parts = append(parts, inputImage(b.MimeType, b.Data))
		case conv.BlockToolResult:
			flush()
			it := &respItem{Type: "function_call_output", CallID: respCallID(b.ToolUseID), Output: b.Content}
			if len(b.Attachments) > 0 {
				var ps []*respPart
				if b.Content != "" {
					ps = append(ps, inputText(b.Content))
				}
				for _, a := range b.Attachments {
					ps = append(ps, inputImage(a.MimeType, a.Data))
				}
				it.Output = ps
			}
			out = append(out, it)
		}
	}
	flush()
	return out
}

// respCallID is id as a call_id the API accepts: at most 64 bytes. Longer
// ids (another server's, or the Codex backend's own) are shortened the same
// way in every request (fitToolID).
func respCallID(id string) string {
	if id == "" {
		return id
	}
	return fitToolID(id, 64, nil)
}

// respBlock is an output item being assembled.
type respBlock struct {
	pos  int // position in msg.Content
	sb   strings.Builder
	done bool
}

// responsesDecoder accumulates one Responses API response. Output items
// map to blocks: message → text, reasoning → thinking, function_call →
// toolUse. output_item.done carries the authoritative item.
type responsesDecoder struct {
	provider string
	emit     func(Event)
	msg      conv.Message
	items    map[int64]*respBlock
}

func (responsesWire) decoder(provider string, emit func(Event)) decoder {
	return &responsesDecoder{provider: provider, emit: emit,
		msg:   conv.Message{Role: conv.RoleAssistant, Provider: provider},
		items: map[int64]*respBlock{}}
}

func (d *responsesDecoder) event(_, data []byte) (bool, error) {
	switch typ := get(data, "type").Str; typ {
	case "response.created", "response.in_progress":
		if m := get(data, "response.model"); m.Str != "" {
			d.msg.Model = strings.Clone(m.Str)
		}
	case "response.output_item.added":
		d.added(get(data, "output_index").Int(), get(data, "item"))
	case "response.output_text.delta", "response.refusal.delta":
		if it := d.items[get(data, "output_index").Int()]; it != nil && !it.done && d.msg.Content[it.pos].Type == conv.BlockText {
			t := get(data, "delta").Str
			it.sb.WriteString(t)
			d.emit(Event{Kind: EventTextDelta, Index: it.pos, Text: strings.Clone(t)})
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if it := d.items[get(data, "output_index").Int()]; it != nil && !it.done && d.msg.Content[it.pos].Type == conv.BlockThinking {
			t := get(data, "delta").Str
			it.sb.WriteString(t)
			d.emit(Event{Kind: EventThinkingDelta, Index: it.pos, Text: strings.Clone(t)})
		}
	case "response.reasoning_summary_part.added":
		if it := d.items[get(data, "output_index").Int()]; it != nil && !it.done && get(data, "summary_index").Int() > 0 {
			it.sb.WriteString("\n\n")
			d.emit(Event{Kind: EventThinkingDelta, Index: it.pos, Text: "\n\n"})
		}
	case "response.function_call_arguments.delta":
		if it := d.items[get(data, "output_index").Int()]; it != nil && !it.done && d.msg.Content[it.pos].Type == conv.BlockToolUse {
			t := get(data, "delta").Str
			it.sb.WriteString(t)
			b := d.msg.Content[it.pos]
			d.emit(Event{Kind: EventToolCallDelta, Index: it.pos, ToolID: b.ID, ToolName: b.Name, Text: strings.Clone(t)})
		}
	case "response.output_item.done":
		idx := get(data, "output_index").Int()
		item := get(data, "item")
		if d.items[idx] == nil {
			d.added(idx, item)
		}
		if it := d.items[idx]; it != nil && !it.done {
			d.done(it, item)
		}
	case "response.completed", "response.incomplete":
		return true, d.terminal(get(data, "response"))
	case "response.failed":
		return false, responsesFailure(get(data, "response.error"))
	case "error":
		e := gjson.Parse(string(data))
		if inner := e.Get("error"); inner.IsObject() {
			e = inner
		}
		return false, responsesFailure(e)
	}
	return false, nil
}

// responsesFailure classifies response.failed and error events.
func responsesFailure(e gjson.Result) *wireError {
	we := &wireError{kind: KindRequest, msg: strings.Clone(e.Get("message").String()), inStream: true}
	code := strings.Clone(e.Get("code").String())
	we.code = code
	if code == "" {
		we.code = strings.Clone(e.Get("type").String())
	}
	if we.msg == "" {
		we.msg = code
	}
	if we.msg == "" {
		we.msg = "response failed"
	}
	switch code {
	case "server_error", "rate_limit_exceeded", "internal_error", "server_is_overloaded":
		we.retry = true
	}
	if e.Get("type").String() == "server_error" {
		we.retry = true
	}
	return we
}

// added opens the block for a new output item.
func (d *responsesDecoder) added(idx int64, item gjson.Result) {
	if d.items[idx] != nil {
		return
	}
	var b conv.Block
	switch item.Get("type").Str {
	case "message":
		b = conv.Block{Type: conv.BlockText}
	case "reasoning":
		b = conv.Block{Type: conv.BlockThinking, ItemID: str(item.Get("id"))}
	case "function_call":
		b = conv.Block{Type: conv.BlockToolUse, ID: str(item.Get("call_id")), Name: str(item.Get("name"))}
	default:
		return
	}
	it := &respBlock{pos: len(d.msg.Content)}
	d.items[idx] = it
	d.msg.Content = append(d.msg.Content, b)
	if b.Type == conv.BlockToolUse {
		d.emit(Event{Kind: EventToolCallStart, Index: it.pos, ToolID: b.ID, ToolName: b.Name})
	}
}

// done sets the block from the finished item, which is authoritative (a
// reasoning item's encrypted content changes between added and done).
func (d *responsesDecoder) done(it *respBlock, item gjson.Result) {
	b := &d.msg.Content[it.pos]
	switch b.Type {
	case conv.BlockText:
		var sb strings.Builder
		found := false
		item.Get("content").ForEach(func(_, p gjson.Result) bool {
			switch p.Get("type").Str {
			case "output_text":
				sb.WriteString(p.Get("text").Str)
				found = true
			case "refusal":
				sb.WriteString(p.Get("refusal").Str)
				found = true
			}
			return true
		})
		if found {
			b.Text = sb.String()
		} else {
			b.Text = it.sb.String()
		}
	case conv.BlockThinking:
		if id := item.Get("id").Str; id != "" {
			b.ItemID = strings.Clone(id)
		}
		b.Signature = str(item.Get("encrypted_content"))
		var parts []string
		item.Get("summary").ForEach(func(_, p gjson.Result) bool {
			parts = append(parts, p.Get("text").Str)
			return true
		})
		if parts == nil {
			item.Get("content").ForEach(func(_, p gjson.Result) bool {
				parts = append(parts, p.Get("text").Str)
				return true
			})
		}
		if parts != nil {
			b.Thinking = strings.Clone(strings.Join(parts, "\n\n"))
		} else {
			b.Thinking = it.sb.String()
		}
	case conv.BlockToolUse:
		if id := item.Get("call_id").Str; id != "" {
			b.ID = strings.Clone(id)
		}
		if n := item.Get("name").Str; n != "" {
			b.Name = strings.Clone(n)
		}
		args := it.sb.String()
		if a := item.Get("arguments"); a.Type == gjson.String {
			args = strings.Clone(a.Str)
		}
		b.Input = strings.TrimSpace(args)
		if b.Input == "" {
			b.Input = "{}"
		}
		d.emit(Event{Kind: EventToolCallEnd, Index: it.pos, ToolID: b.ID, ToolName: b.Name})
	}
	it.sb.Reset()
	it.done = true
}

// terminal completes the message from response.completed/incomplete.
func (d *responsesDecoder) terminal(resp gjson.Result) error {
	if m := resp.Get("model").Str; m != "" {
		d.msg.Model = strings.Clone(m)
	}
	if t := resp.Get("service_tier").Str; t != "" {
		d.msg.ServiceTier = strings.Clone(t)
	}
	// Items that never got output_item.done keep what their deltas built.
	for _, it := range d.items {
		if !it.done {
			d.done(it, gjson.Result{})
		}
	}
	if len(d.items) == 0 {
		resp.Get("output").ForEach(func(k, item gjson.Result) bool {
			d.added(k.Int(), item)
			if it := d.items[k.Int()]; it != nil {
				d.done(it, item)
			}
			return true
		})
	}
	switch {
	case resp.Get("status").Str == "incomplete":
		if resp.Get("incomplete_details.reason").Str == "content_filter" {
			d.msg.StopReason = conv.StopError
		} else {
			d.msg.StopReason = conv.StopLength
		}
	case len(d.msg.ToolUses()) > 0:
		d.msg.StopReason = conv.StopToolUse
	default:
		d.msg.StopReason = conv.StopEnd
	}
	if u := resp.Get("usage"); u.IsObject() {
		cached := u.Get("input_tokens_details.cached_tokens").Int()
		written := u.Get("input_tokens_details.cache_write_tokens").Int()
		usage := conv.Usage{
			Input:      max(u.Get("input_tokens").Int()-cached-written, 0),
			Output:     u.Get("output_tokens").Int(),
			CacheRead:  cached,
			CacheWrite: written,
		}
		d.msg.Usage = &usage
		d.emit(Event{Kind: EventUsage, Usage: usage})
	}
	return nil
}

// whole decodes a non-streamed response object.
func (d *responsesDecoder) whole(body []byte) error {
	if !gjson.ValidBytes(body) {
		return &wireError{retry: true, msg: "response body is not valid JSON"}
	}
	root := gjson.ParseBytes(body)
	if e := root.Get("error"); e.IsObject() {
		return responsesFailure(e)
	}
	return d.terminal(root)
}

func (d *responsesDecoder) message() conv.Message { return d.msg }

func (p *respPart) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("type", p.Type)
	w.optPtrStr("text", p.Text)
	w.optStr("image_url", p.ImageURL)
	w.optStr("detail", p.Detail)
	w.end()
}

func (s *respSummary) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("type", s.Type)
	w.strField("text", s.Text)
	w.end()
}

func (it *respItem) appendJSON(w *jsonWriter) {
	w.begin()
	w.optStr("type", it.Type)
	w.optStr("role", it.Role)
	w.optAnyField("content", it.Content)
	w.optStr("id", it.ID)
	if it.Summary != nil {
		sliceField(w, "summary", *it.Summary, (*respSummary).appendJSON)
	}
	w.optStr("encrypted_content", it.EncryptedContent)
	w.optStr("call_id", it.CallID)
	w.optStr("name", it.Name)
	w.optPtrStr("arguments", it.Arguments)
	w.optAnyField("output", it.Output)
	w.end()
}

func (t *respTool) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("type", t.Type)
	w.strField("name", t.Name)
	w.optStr("description", t.Description)
	w.rawField("parameters", t.Parameters)
	w.boolField("strict", t.Strict)
	w.end()
}

func (r *respReasoning) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("effort", r.Effort)
	w.strField("summary", r.Summary)
	w.end()
}

func (r *respRequest) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("model", r.Model)
	sliceField(w, "input", r.Input, (*respItem).appendJSON)
	optSliceField(w, "tools", r.Tools, (*respTool).appendJSON)
	w.optStr("tool_choice", r.ToolChoice)
	optObjField(w, "reasoning", r.Reasoning)
	if r.MaxOutputTokens != 0 {
		w.intField("max_output_tokens", r.MaxOutputTokens)
	}
	optObjField(w, "text", r.Text)
	optSliceField(w, "include", r.Include, strElem)
	w.boolField("store", r.Store)
	w.boolField("stream", r.Stream)
	w.optStr("prompt_cache_key", r.CacheKey)
	w.optStr("prompt_cache_retention", r.CacheRetention)
	w.optStr("service_tier", r.ServiceTier)
	w.end()
}
