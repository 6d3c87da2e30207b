package provider

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/conv"
)

// chatWire is the OpenAI Chat Completions API, also spoken by Ollama, vLLM,
// llama.cpp, LM Studio, OpenRouter, LiteLLM and others. name is the
// provider speaking it: reasoning_content goes back only to the provider
// that sent it.
type chatWire struct{ name string }

func (chatWire) path() string { return "/chat/completions" }

func (chatWire) setHeaders(h http.Header, apiKey string) {
	if apiKey != "" {
		h.Set("Authorization", "Bearer "+apiKey)
	}
}

type chatImageURL struct {
	URL string `json:"url"`
}

type chatPart struct {
	Type     string        `json:"type"`
	Text     *string       `json:"text,omitempty"`
	ImageURL *chatImageURL `json:"image_url,omitempty"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatMessage struct {
	Role             string          `json:"role"`
	Content          any             `json:"content"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	ToolCalls        []*chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string          `json:"tool_call_id,omitempty"`
}

type chatToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type chatTool struct {
	Type     string      `json:"type"`
	Function chatToolDef `json:"function"`
}

type chatStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatRequest struct {
	Model               string             `json:"model"`
	Messages            []*chatMessage     `json:"messages"`
	Tools               []*chatTool        `json:"tools,omitempty"`
	ToolChoice          string             `json:"tool_choice,omitempty"`
	MaxCompletionTokens int                `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     string             `json:"reasoning_effort,omitempty"`
	ResponseFormat      *formatWrapper     `json:"response_format,omitempty"`
	Stream              bool               `json:"stream"`
	StreamOptions       *chatStreamOptions `json:"stream_options,omitempty"`
	CacheRetention      string             `json:"prompt_cache_retention,omitempty"`
	ServiceTier         string             `json:"service_tier,omitempty"`
}

func chatText(s string) *chatPart { return &chatPart{Type: "text", Text: &s} }

func chatImage(mime, data string) *chatPart {
	return &chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: dataURL(mime, data)}}
}

// dataURL is an inline image as both OpenAI APIs take it.
func dataURL(mime, data string) string { return "data:" + mime + ";base64," + data }

// reasoningContentID marks, as its ItemID, a thinking block that arrived as
// reasoning_content: the field it goes back in. Thinking that arrived as
// reasoning is not sent back (Groq and Cerebras reject reasoning_content).
const reasoningContentID = "reasoning_content"

// encode projects req onto Chat Completions. System messages stay in place
// with role system. Thinking that came as reasoning_content from this API
// goes back as reasoning_content on its assistant message (DeepSeek-style
// thinking models require it in a tool loop). Tool results become tool
// messages; tool messages take text only, so images attached to tool
// results follow the turn's tool messages in one user message that names
// each tool call before its images.
func (w chatWire) encode(req Request) (reqBody, error) {
	return writeJSON(req, chatCompletionsRequest(req, w.name))
}

// chatCompletionsRequest is req as the Chat Completions request body for
// the provider called self.
func chatCompletionsRequest(req Request, self string) *chatRequest {
	out := &chatRequest{
		Model: req.Model, Messages: []*chatMessage{},
		MaxCompletionTokens: req.MaxTokens, ReasoningEffort: req.Reasoning,
		Stream: true, StreamOptions: &chatStreamOptions{IncludeUsage: true},
	}
	if req.CacheTTL == "24h" {
		out.CacheRetention = "24h"
	}
	out.ServiceTier = req.ServiceTier
	if req.Thinking == ThinkingNone {
		out.ReasoningEffort = "" // a model that does not reason refuses the parameter
	}
	for _, m := range req.Messages {
		out.Messages = append(out.Messages, chatMessages(m, self)...)
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, &chatTool{Type: "function",
			Function: chatToolDef{Name: t.Name, Description: t.Description, Parameters: toolSchema(t.Schema)}})
	}
	if len(out.Tools) > 0 {
		out.ToolChoice = req.ToolChoice
	}
	if f := newSchemaFormat(req.OutputSchema, false, true, true); f != nil {
		out.ResponseFormat = &formatWrapper{Type: "json_schema", JSONSchema: f}
	}
	return out
}

// chatMessages lowers one conversation message to one or more Chat messages
// for the provider called self.
func chatMessages(m conv.Message, self string) []*chatMessage {
	switch m.Role {
	case conv.RoleSystem:
		return []*chatMessage{{Role: "system", Content: joinText(m.Content, "\n")}}
	case conv.RoleAssistant:
		am := &chatMessage{Role: "assistant"}
		if t := joinText(m.Content, ""); t != "" {
			am.Content = t
		}
		same := m.Provider == self
		for _, b := range m.Content {
			if same && b.Type == conv.BlockThinking && b.ItemID == reasoningContentID {
				am.ReasoningContent += b.Thinking
			}
			if b.Type == conv.BlockToolUse {
				args := b.Input
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				am.ToolCalls = append(am.ToolCalls, &chatToolCall{ID: chatToolID(b.ID), Type: "function",
					Function: chatFunction{Name: b.Name, Arguments: args}})
			}
		}
		if am.Content == nil && am.ToolCalls == nil {
			am.Content = ""
		}
		return []*chatMessage{am}
	}
	var out []*chatMessage
	var attach []*chatPart
	var parts []*chatPart
	for _, b := range m.Content {
		switch b.Type {
		case conv.BlockToolResult:
			id := chatToolID(b.ToolUseID)
			out = append(out, &chatMessage{Role: "tool", ToolCallID: id, Content: b.Content})
			if len(b.Attachments) > 0 {
				attach = append(attach, chatText("Attachments of tool call "+id+":"))
				for _, a := range b.Attachments {
					attach = append(attach, chatImage(a.MimeType, a.Data))
				}
			}
		case conv.BlockText:
			parts = append(parts, chatText(b.Text))
		case conv.BlockImage:
			parts = append(parts, chatImage(b.MimeType, b.Data))
		}
	}
	if len(attach) > 0 {
		out = append(out, &chatMessage{Role: "user", Content: attach})
	}
	switch {
	case len(parts) == 1 && parts[0].Type == "text":
		out = append(out, &chatMessage{Role: "user", Content: *parts[0].Text})
	case len(parts) > 0:
		out = append(out, &chatMessage{Role: "user", Content: parts})
	case len(out) == 0:
		out = append(out, &chatMessage{Role: "user", Content: ""})
	}
	return out
}

// chatToolID is id as OpenAI's Chat API accepts it: at most 40 bytes.
// Longer ids (another provider's) are shortened the same way in every
// request (fitToolID); compatible servers accept either.
func chatToolID(id string) string {
	if id == "" {
		return id
	}
	return fitToolID(id, 40, nil)
}

// joinText concatenates the text blocks of content with sep.
func joinText(content []conv.Block, sep string) string {
	var parts []string
	for _, b := range content {
		if b.Type == conv.BlockText {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, sep)
}

// chatCall is a tool call being assembled from fragments.
type chatCall struct {
	block int // position in msg.Content
	args  strings.Builder
}

// chatDecoder accumulates one Chat Completions response.
type chatDecoder struct {
	provider string
	emit     func(Event)
	msg      conv.Message
	id       string
	finish   string
	usage    conv.Usage
	hasUsage bool
	// text and think are the open text and thinking blocks (-1 for none);
	// a change of kind opens a new block.
	text, think int
	sb          map[int]*strings.Builder
	calls       map[int64]*chatCall
	order       []*chatCall // calls in the order they began
	lastCall    int64
	// request is the request body this response answers, hashed into
	// the ids of tool calls the server sent without one.
	request reqBody
}

// setRequest records the request body the response answers.
func (d *chatDecoder) setRequest(b reqBody) { d.request = b }

func (chatWire) decoder(provider string, emit func(Event)) decoder {
	return &chatDecoder{provider: provider, emit: emit,
		msg:  conv.Message{Role: conv.RoleAssistant, Provider: provider},
		text: -1, think: -1, lastCall: -1,
		sb: map[int]*strings.Builder{}, calls: map[int64]*chatCall{}}
}

func (d *chatDecoder) event(_, data []byte) (bool, error) {
	if string(trimSpace(data)) == "[DONE]" {
		d.complete()
		return true, nil
	}
	return false, d.chunk(data)
}

// trimSpace trims ASCII spaces without allocating.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

// chatStreamError classifies an error object sent inside a 200 stream:
// {"error":{message, type, code, status_code?}} or OpenRouter's numeric
// code. A 429 or 5xx status, or a server/overload type, is retried.
func chatStreamError(e gjson.Result) *wireError {
	we := &wireError{kind: KindRequest, inStream: true}
	if e.Type == gjson.String {
		we.msg = strings.Clone(e.Str)
		return we
	}
	we.msg = strings.Clone(e.Get("message").String())
	status := e.Get("status_code").Int()
	if c := e.Get("code"); c.Type == gjson.Number {
		status = c.Int()
	}
	code := e.Get("code").String() + " " + e.Get("type").String()
	we.code = strings.Clone(strings.TrimSpace(code))
	switch {
	case status == 429 || status >= 500:
		we.retry = true
	case strings.Contains(code, "server_error"), strings.Contains(code, "overloaded"),
		strings.Contains(code, "rate_limit"), strings.Contains(code, "api_error"):
		we.retry = true
	}
	if we.msg == "" {
		we.msg = strings.TrimSpace(code)
	}
	return we
}

// chunk applies one chat.completion.chunk, walking its top level once
// (lookups by path would rescan the chunk for each field).
func (d *chatDecoder) chunk(data []byte) error {
	var choice, errObj gjson.Result
	get(data, "@this").ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "id":
			if d.id == "" {
				d.id = str(v)
			}
		case "model":
			if d.msg.Model == "" {
				d.msg.Model = str(v)
			}
		case "service_tier":
			if v.Type == gjson.String {
				d.msg.ServiceTier = str(v)
			}
		case "usage":
			if v.IsObject() {
				d.readUsage(v)
			}
		case "choices":
			choice = v.Get("0")
		case "error":
			errObj = v
		}
		return true
	})
	if errObj.Exists() && errObj.Type != gjson.Null {
		return chatStreamError(errObj)
	}
	if !choice.Exists() {
		return nil
	}
	var delta gjson.Result
	choice.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "delta":
			delta = v
		case "finish_reason":
			if v.Type == gjson.String && v.Str != "" {
				d.finish = strings.Clone(v.Str)
			}
		}
		return true
	})
	d.content(delta)
	return nil
}

// content applies a streamed delta or a whole message: reasoning (as
// reasoning_content or reasoning), text and tool calls.
func (d *chatDecoder) content(m gjson.Result) {
	var reasoning, reasoningContent, text, calls gjson.Result
	m.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "reasoning_content":
			reasoningContent = v
		case "reasoning":
			reasoning = v
		case "content":
			text = v
		case "tool_calls":
			calls = v
		}
		return true
	})
	if reasoningContent.Type == gjson.String && reasoningContent.Str != "" {
		d.appendThinking(reasoningContent.Str, reasoningContentID)
	} else if reasoning.Type == gjson.String && reasoning.Str != "" {
		d.appendThinking(reasoning.Str, "")
	}
	if text.Type == gjson.String && text.Str != "" {
		d.appendText(text.Str)
	}
	calls.ForEach(func(_, f gjson.Result) bool {
		d.toolFragment(f)
		return true
	})
}

func (d *chatDecoder) readUsage(u gjson.Result) {
	cached := u.Get("prompt_tokens_details.cached_tokens").Int()
	if cached == 0 {
		cached = u.Get("prompt_cache_hit_tokens").Int()
	}
	d.usage = conv.Usage{
		Input:     max(u.Get("prompt_tokens").Int()-cached, 0),
		Output:    u.Get("completion_tokens").Int(),
		CacheRead: cached,
	}
	d.hasUsage = true
}

// open starts a new block and returns its position.
func (d *chatDecoder) open(b conv.Block) int {
	i := len(d.msg.Content)
	d.msg.Content = append(d.msg.Content, b)
	return i
}

func (d *chatDecoder) appendThinking(t, field string) {
	if d.think < 0 || d.think != len(d.msg.Content)-1 {
		d.think = d.open(conv.Block{Type: conv.BlockThinking, ItemID: field})
		d.sb[d.think] = &strings.Builder{}
	}
	d.sb[d.think].WriteString(t)
	d.emit(Event{Kind: EventThinkingDelta, Index: d.think, Text: strings.Clone(t)})
}

func (d *chatDecoder) appendText(t string) {
	if d.text < 0 || d.text != len(d.msg.Content)-1 {
		d.text = d.open(conv.Block{Type: conv.BlockText})
		d.sb[d.text] = &strings.Builder{}
	}
	d.sb[d.text].WriteString(t)
	d.emit(Event{Kind: EventTextDelta, Index: d.text, Text: strings.Clone(t)})
}

// toolFragment applies one tool call fragment. Fragments are keyed by
// index; a server that sends none gets one per new id or name.
func (d *chatDecoder) toolFragment(f gjson.Result) {
	id := f.Get("id").Str
	name := f.Get("function.name").Str
	var key int64
	switch idx := f.Get("index"); {
	case idx.Type == gjson.Number:
		key = idx.Int()
	case id != "" || name != "" || d.lastCall < 0:
		key = int64(len(d.calls))
		for d.calls[key] != nil {
			key++
		}
	default:
		key = d.lastCall
	}
	d.lastCall = key
	call := d.calls[key]
	if call == nil {
		call = &chatCall{block: d.open(conv.Block{Type: conv.BlockToolUse})}
		d.calls[key] = call
		d.order = append(d.order, call)
	}
	b := &d.msg.Content[call.block]
	started := b.ID != "" || b.Name != ""
	if id != "" && b.ID == "" {
		b.ID = strings.Clone(id)
	}
	if name != "" && b.Name == "" {
		b.Name = strings.Clone(name)
	}
	if !started && (b.ID != "" || b.Name != "") {
		d.emit(Event{Kind: EventToolCallStart, Index: call.block, ToolID: b.ID, ToolName: b.Name})
	}
	args := f.Get("function.arguments")
	piece := args.Str
	if args.IsObject() || args.IsArray() {
		piece = args.Raw // some servers send an object, not a string
	}
	if piece != "" {
		call.args.WriteString(piece)
		d.emit(Event{Kind: EventToolCallDelta, Index: call.block, ToolID: b.ID, ToolName: b.Name, Text: strings.Clone(piece)})
	}
}

// complete finalizes the message after [DONE] (or a whole response).
func (d *chatDecoder) complete() {
	for i, sb := range d.sb {
		b := &d.msg.Content[i]
		if b.Type == conv.BlockText {
			b.Text = sb.String()
		} else {
			b.Thinking = sb.String()
		}
	}
	for _, call := range d.order {
		b := &d.msg.Content[call.block]
		b.Input = strings.TrimSpace(call.args.String())
		if b.Input == "" {
			b.Input = "{}"
		}
		if b.ID == "" {
			// Compatible servers may omit ids, and the response id too.
			// Derive one from both and the request body: each request of
			// a session extends the previous one by at least the answer
			// to it, so ids stay unique within the session (another
			// provider rejects duplicates once it moves there), and short
			// enough for OpenAI's 40-character limit.
			h := fnv.New64a()
			h.Write([]byte(d.id))
			h.Write([]byte{0})
			for _, p := range d.request {
				h.Write(p)
			}
			b.ID = fmt.Sprintf("call_%016x_%d", h.Sum64(), call.block)
		}
		d.emit(Event{Kind: EventToolCallEnd, Index: call.block, ToolID: b.ID, ToolName: b.Name})
	}
	switch {
	case d.finish == "length":
		d.msg.StopReason = conv.StopLength
	case len(d.msg.ToolUses()) > 0:
		d.msg.StopReason = conv.StopToolUse
	case d.finish == "content_filter" || d.finish == "error":
		d.msg.StopReason = conv.StopError
	default:
		d.msg.StopReason = conv.StopEnd
	}
	if d.hasUsage {
		u := d.usage
		d.msg.Usage = &u
		d.emit(Event{Kind: EventUsage, Usage: u})
	}
}

// whole decodes a non-streamed chat.completion, which some servers send
// even when asked to stream.
func (d *chatDecoder) whole(body []byte) error {
	if !gjson.ValidBytes(body) {
		return &wireError{retry: true, msg: "response body is not valid JSON"}
	}
	root := gjson.ParseBytes(body)
	if e := root.Get("error"); e.Exists() && e.Type != gjson.Null {
		return chatStreamError(e)
	}
	d.id = root.Get("id").String()
	d.msg.Model = root.Get("model").String()
	d.msg.ServiceTier = root.Get("service_tier").String()
	if u := root.Get("usage"); u.IsObject() {
		d.readUsage(u)
	}
	choice := root.Get("choices.0")
	d.content(choice.Get("message"))
	d.finish = choice.Get("finish_reason").String()
	d.complete()
	return nil
}

func (d *chatDecoder) message() conv.Message { return d.msg }

func (u *chatImageURL) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("url", u.URL)
	w.end()
}

func (p *chatPart) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("type", p.Type)
	w.optPtrStr("text", p.Text)
	optObjField(w, "image_url", p.ImageURL)
	w.end()
}

func (f *chatFunction) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("name", f.Name)
	w.strField("arguments", f.Arguments)
	w.end()
}

func (c *chatToolCall) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("id", c.ID)
	w.strField("type", c.Type)
	optObjField(w, "function", &c.Function)
	w.end()
}

func (m *chatMessage) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("role", m.Role)
	w.key("content")
	w.any(m.Content)
	w.optStr("reasoning_content", m.ReasoningContent)
	optSliceField(w, "tool_calls", m.ToolCalls, (*chatToolCall).appendJSON)
	w.optStr("tool_call_id", m.ToolCallID)
	w.end()
}

func (d *chatToolDef) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("name", d.Name)
	w.optStr("description", d.Description)
	w.rawField("parameters", d.Parameters)
	w.end()
}

func (t *chatTool) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("type", t.Type)
	optObjField(w, "function", &t.Function)
	w.end()
}

func (o *chatStreamOptions) appendJSON(w *jsonWriter) {
	w.begin()
	w.boolField("include_usage", o.IncludeUsage)
	w.end()
}

func (r *chatRequest) appendJSON(w *jsonWriter) {
	w.begin()
	w.strField("model", r.Model)
	sliceField(w, "messages", r.Messages, (*chatMessage).appendJSON)
	optSliceField(w, "tools", r.Tools, (*chatTool).appendJSON)
	w.optStr("tool_choice", r.ToolChoice)
	if r.MaxCompletionTokens != 0 {
		w.intField("max_completion_tokens", r.MaxCompletionTokens)
	}
	w.optStr("reasoning_effort", r.ReasoningEffort)
	optObjField(w, "response_format", r.ResponseFormat)
	w.boolField("stream", r.Stream)
	optObjField(w, "stream_options", r.StreamOptions)
	w.optStr("prompt_cache_retention", r.CacheRetention)
	w.optStr("service_tier", r.ServiceTier)
	w.end()
}
