package providertest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Call is a tool call for a canned stream.
type Call struct {
	ID    string
	Name  string
	Input string // raw JSON text
}

// Turn describes one canned assistant answer, rendered by Stream for any
// wire API.
type Turn struct {
	Model    string // "" means "fake-model"
	Thinking string
	Text     string
	Calls    []Call
	// Length ends the turn as truncated by the output cap.
	Length bool
	// InputTokens and OutputTokens are the usage reported. InputTokens
	// is the API's own input figure: Anthropic's input_tokens leaves the
	// cache reads and writes out, OpenAI's counts the cached tokens in.
	InputTokens, OutputTokens int
	// CacheReadTokens and CacheWriteTokens are the cache's share of the
	// input, CacheWrite1hTokens the part of the writes made for an hour
	// (Anthropic only). CacheUsage.Turn sets them from a Cache.
	CacheReadTokens, CacheWriteTokens, CacheWrite1hTokens int
}

// Turn returns t with u as its usage, in api's terms.
func (u CacheUsage) Turn(api string, t Turn) Turn {
	t.InputTokens = u.Total
	if api == "anthropic" {
		t.InputTokens = u.Input
	}
	t.CacheReadTokens, t.CacheWriteTokens, t.CacheWrite1hTokens = u.Read, u.Write, u.Write1h
	return t
}

// q quotes s as a JSON string.
func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Text is a 200 SSE response in provider's wire format ("anthropic",
// "openai", "openai-chat") that answers text and ends the turn.
func Text(provider, text string) Response {
	return Stream(provider, Turn{Text: text})
}

// ToolCall is a 200 SSE response that calls one tool.
func ToolCall(provider, id, name, input string) Response {
	return Stream(provider, Turn{Calls: []Call{{ID: id, Name: name, Input: input}}})
}

// Stream renders t as a complete 200 SSE response in provider's wire
// format. It panics on an unknown provider name (a test bug).
func Stream(provider string, t Turn) Response {
	if t.Model == "" {
		t.Model = "fake-model"
	}
	var body string
	switch provider {
	case "anthropic":
		body = anthropicStream(t)
	case "openai":
		body = responsesStream(t)
	case "openai-chat":
		body = chatStream(t)
	default:
		panic("providertest: unknown provider " + provider)
	}
	return Response{Body: []byte(body)}
}

func anthropicStream(t Turn) string {
	var b strings.Builder
	ev := func(name, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data) }
	ev("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_fake","type":"message","role":"assistant","model":%s,"content":[],"stop_reason":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d%s,"output_tokens":1}}}`, q(t.Model), t.InputTokens, t.CacheWriteTokens, t.CacheReadTokens, anthropicCreation(t)))
	i := 0
	if t.Thinking != "" {
		ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"thinking","thinking":"","signature":""}}`, i))
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"thinking_delta","thinking":%s}}`, i, q(t.Thinking)))
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"signature_delta","signature":"sig-fake"}}`, i))
		ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
		i++
	}
	if t.Text != "" {
		ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, i))
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, i, q(t.Text)))
		ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
		i++
	}
	for _, c := range t.Calls {
		ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%s,"name":%s,"input":{}}}`, i, q(c.ID), q(c.Name)))
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, q(c.Input)))
		ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
		i++
	}
	stop := "end_turn"
	switch {
	case t.Length:
		stop = "max_tokens"
	case len(t.Calls) > 0:
		stop = "tool_use"
	}
	ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, t.OutputTokens))
	ev("message_stop", `{"type":"message_stop"}`)
	return b.String()
}

// anthropicCreation is the cache_creation member of a usage that wrote to
// the cache: the writes by TTL.
func anthropicCreation(t Turn) string {
	if t.CacheWriteTokens == 0 {
		return ""
	}
	return fmt.Sprintf(`,"cache_creation":{"ephemeral_5m_input_tokens":%d,"ephemeral_1h_input_tokens":%d}`, t.CacheWriteTokens-t.CacheWrite1hTokens, t.CacheWrite1hTokens)
}

func chatStream(t Turn) string {
	var b strings.Builder
	chunk := func(delta, finish, usage string) {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-fake","object":"chat.completion.chunk","model":%s,"choices":[{"index":0,"delta":%s,"finish_reason":%s}],"usage":%s}`+"\n\n", q(t.Model), delta, finish, usage)
	}
	chunk(`{"role":"assistant","content":""}`, "null", "null")
	if t.Thinking != "" {
		chunk(fmt.Sprintf(`{"reasoning_content":%s}`, q(t.Thinking)), "null", "null")
	}
	if t.Text != "" {
		chunk(fmt.Sprintf(`{"content":%s}`, q(t.Text)), "null", "null")
	}
	for i, c := range t.Calls {
		chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%s,"type":"function","function":{"name":%s,"arguments":%s}}]}`, i, q(c.ID), q(c.Name), q(c.Input)), "null", "null")
	}
	finish := `"stop"`
	switch {
	case t.Length:
		finish = `"length"`
	case len(t.Calls) > 0:
		finish = `"tool_calls"`
	}
	chunk(`{}`, finish, "null")
	fmt.Fprintf(&b, `data: {"id":"chatcmpl-fake","object":"chat.completion.chunk","model":%s,"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d%s}}`+"\n\n", q(t.Model), t.InputTokens, t.OutputTokens, t.InputTokens+t.OutputTokens, chatCached(t))
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// chatCached is the prompt_tokens_details member of a Chat usage with
// cached tokens.
func chatCached(t Turn) string {
	if t.CacheReadTokens == 0 {
		return ""
	}
	return fmt.Sprintf(`,"prompt_tokens_details":{"cached_tokens":%d}`, t.CacheReadTokens)
}

func responsesStream(t Turn) string {
	var b strings.Builder
	ev := func(name, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data) }
	ev("response.created", fmt.Sprintf(`{"type":"response.created","response":{"id":"resp_fake","status":"in_progress","model":%s,"output":[]}}`, q(t.Model)))
	var items []string
	i := 0
	if t.Thinking != "" {
		item := fmt.Sprintf(`{"id":"rs_fake%d","type":"reasoning","encrypted_content":"enc-fake","summary":[{"type":"summary_text","text":%s}]}`, i, q(t.Thinking))
		ev("response.output_item.added", fmt.Sprintf(`{"type":"response.output_item.added","output_index":%d,"item":{"id":"rs_fake%d","type":"reasoning","summary":[]}}`, i, i))
		ev("response.reasoning_summary_text.delta", fmt.Sprintf(`{"type":"response.reasoning_summary_text.delta","output_index":%d,"summary_index":0,"delta":%s}`, i, q(t.Thinking)))
		ev("response.output_item.done", fmt.Sprintf(`{"type":"response.output_item.done","output_index":%d,"item":%s}`, i, item))
		items = append(items, item)
		i++
	}
	if t.Text != "" {
		status := "completed"
		if t.Length {
			status = "incomplete"
		}
		item := fmt.Sprintf(`{"id":"msg_fake%d","type":"message","status":%q,"role":"assistant","content":[{"type":"output_text","annotations":[],"text":%s}]}`, i, status, q(t.Text))
		ev("response.output_item.added", fmt.Sprintf(`{"type":"response.output_item.added","output_index":%d,"item":{"id":"msg_fake%d","type":"message","status":"in_progress","role":"assistant","content":[]}}`, i, i))
		ev("response.output_text.delta", fmt.Sprintf(`{"type":"response.output_text.delta","output_index":%d,"content_index":0,"delta":%s}`, i, q(t.Text)))
		ev("response.output_item.done", fmt.Sprintf(`{"type":"response.output_item.done","output_index":%d,"item":%s}`, i, item))
		items = append(items, item)
		i++
	}
	for _, c := range t.Calls {
		item := fmt.Sprintf(`{"id":"fc_fake%d","type":"function_call","status":"completed","call_id":%s,"name":%s,"arguments":%s}`, i, q(c.ID), q(c.Name), q(c.Input))
		ev("response.output_item.added", fmt.Sprintf(`{"type":"response.output_item.added","output_index":%d,"item":{"id":"fc_fake%d","type":"function_call","status":"in_progress","call_id":%s,"name":%s,"arguments":""}}`, i, i, q(c.ID), q(c.Name)))
		ev("response.function_call_arguments.delta", fmt.Sprintf(`{"type":"response.function_call_arguments.delta","output_index":%d,"delta":%s}`, i, q(c.Input)))
		ev("response.output_item.done", fmt.Sprintf(`{"type":"response.output_item.done","output_index":%d,"item":%s}`, i, item))
		items = append(items, item)
		i++
	}
	status, name, details := "completed", "response.completed", "null"
	if t.Length {
		status, name, details = "incomplete", "response.incomplete", `{"reason":"max_output_tokens"}`
	}
	ev(name, fmt.Sprintf(`{"type":%q,"response":{"id":"resp_fake","status":%q,"incomplete_details":%s,"model":%s,"output":[%s],"usage":{"input_tokens":%d,"input_tokens_details":{"cached_tokens":%d},"output_tokens":%d,"total_tokens":%d}}}`,
		name, status, details, q(t.Model), strings.Join(items, ","), t.InputTokens, t.CacheReadTokens, t.OutputTokens, t.InputTokens+t.OutputTokens))
	return b.String()
}
