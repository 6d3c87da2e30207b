package provider

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/awlrun/awl/conv"
)

// A tiny valid PNG (1x1) and GIF, base64, as tool attachments and images.
const (
	pngData = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	gifData = "R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=="
)

var testTools = []Tool{
	{Name: "read", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "view_image", Description: "Show an image to the model.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
}

func sys(s string) conv.Message {
	return conv.Message{Role: conv.RoleSystem, Content: []conv.Block{conv.TextBlock(s)}}
}

func user(blocks ...conv.Block) conv.Message {
	return conv.Message{Role: conv.RoleUser, Content: blocks}
}

func assistant(provider string, blocks ...conv.Block) conv.Message {
	return conv.Message{Role: conv.RoleAssistant, Provider: provider, Model: "m", StopReason: conv.StopToolUse, Content: blocks}
}

func toolUse(id, name, input string) conv.Block {
	return conv.Block{Type: conv.BlockToolUse, ID: id, Name: name, Input: input}
}

func toolResult(id, content string, isErr bool, att ...conv.Attachment) conv.Block {
	return conv.Block{Type: conv.BlockToolResult, ToolUseID: id, Content: content, IsError: isErr, Attachments: att}
}

// thinkingFor is a thinking block as provider would have produced it.
func thinkingFor(provider string) conv.Block {
	switch provider {
	case NameAnthropic:
		return conv.Block{Type: conv.BlockThinking, Thinking: "Let me read the file.", Signature: "EqQBCkYIBxgCKkA-sig"}
	case NameOpenAI:
		return conv.Block{Type: conv.BlockThinking, Thinking: "**Reading**\n\nLet me read the file.", Signature: "gAAAAABenc", ItemID: "rs_123"}
	case NameOpenAIChat:
		// As it arrived in reasoning_content (DeepSeek, Kimi, llama.cpp).
		return conv.Block{Type: conv.BlockThinking, Thinking: "Let me read the file.", ItemID: reasoningContentID}
	}
	return conv.Block{Type: conv.BlockThinking, Thinking: "Let me read the file."}
}

// features are the conversations whose requests are pinned by golden files.
func features(provider string) map[string]Request {
	other := NameOpenAIChat
	if provider == NameOpenAIChat {
		other = NameAnthropic
	}
	fs := map[string]Request{
		"plain": {Model: "model-x", Messages: []conv.Message{sys("You are terse."), user(conv.TextBlock("hello"))}},
		"tools": {Model: "model-x", Tools: testTools, Messages: []conv.Message{
			sys("You are terse."),
			user(conv.TextBlock("read a.txt")),
			assistant(provider, conv.TextBlock("Reading."), toolUse("call_1", "read", `{"path":"a.txt"}`)),
			user(toolResult("call_1", "contents of a", false)),
		}},
		"thinking": {Model: "model-x", Reasoning: "medium", Tools: testTools, Messages: []conv.Message{
			user(conv.TextBlock("read a.txt")),
			assistant(provider, thinkingFor(provider), toolUse("call_1", "read", `{"path":"a.txt"}`)),
			user(toolResult("call_1", "contents of a", false)),
			// Thinking from another provider is dropped; redacted
			// thinking is Anthropic's own.
			assistant(other, thinkingFor(other), conv.TextBlock("Done.")),
			user(conv.TextBlock("again")),
			assistant(provider, conv.Block{Type: conv.BlockThinking, Redacted: "EmwKAhgBEgy-redacted"}, toolUse("call_2", "read", "")),
			user(toolResult("call_2", "contents of a", false)),
		}},
		"caching": {Model: "model-x", MaxTokens: 1000, Tools: testTools, Messages: []conv.Message{
			sys("You are terse."), sys("Project rules: none."),
			user(conv.TextBlock("one")),
			assistant(provider, conv.TextBlock("1")),
			user(conv.TextBlock("two")),
		}},
		"tool-errors": {Model: "model-x", Tools: testTools, Messages: []conv.Message{
			user(conv.TextBlock("read both")),
			assistant(provider, toolUse("call_1", "read", `{"path":"a.txt"}`), toolUse("call_2", "read", `{"path":"missing.txt"}`)),
			user(toolResult("call_1", "contents of a", false), toolResult("call_2", "open missing.txt: no such file or directory", true)),
		}},
		"images": {Model: "model-x", Tools: testTools, Messages: []conv.Message{
			user(conv.TextBlock("what is wrong on this page?"), conv.Block{Type: conv.BlockImage, MimeType: "image/png", Data: pngData}),
			assistant(provider, toolUse("call_1", "view_image", `{"path":"a.png"}`), toolUse("call_2", "read", `{"path":"a.txt"}`), toolUse("call_3", "view_image", `{"path":"b.gif"}`)),
			user(toolResult("call_1", "a.png (image/png, 70 bytes)", false, conv.Attachment{Type: "image", MimeType: "image/png", Data: pngData}),
				toolResult("call_2", "contents of a", false),
				toolResult("call_3", "", false, conv.Attachment{Type: "image", MimeType: "image/gif", Data: gifData})),
		}},
		"later-system": {Model: "model-x", Messages: []conv.Message{
			sys("You are terse."),
			user(conv.TextBlock("one")),
			assistant(provider, conv.TextBlock("1")),
			sys("The user is now in a hurry."),
			user(conv.TextBlock("two")),
		}},
	}
	// --output-schema: a schema OpenAI's strict mode accepts as it is, and
	// one it does not (an optional property, extra properties allowed).
	// Tools stay offered.
	toolTurn := []conv.Message{
		sys("You are terse."),
		user(conv.TextBlock("review a.txt")),
		assistant(provider, toolUse("call_1", "read", `{"path":"a.txt"}`)),
		user(toolResult("call_1", "contents of a", false)),
	}
	fs["output-schema-strict"] = Request{Model: "model-x", Tools: testTools, Messages: toolTurn, OutputSchema: json.RawMessage(strictVerdict)}
	// Keywords the APIs' structured outputs refuse: docs/structured-output.md's
	// verdict.json (minimum), and minLength, uniqueItems, multipleOf,
	// an unsupported format, patternProperties and oneOf. Anthropic gets
	// them in descriptions; OpenAI gets the schema as it is, non-strict.
	fs["output-schema-keywords"] = Request{Model: "model-x", Tools: testTools, Messages: toolTurn, OutputSchema: json.RawMessage(keywordVerdict)}
	// Keywords OpenAI's strict mode takes (minimum, pattern, maxItems):
	// strict there.
	fs["output-schema-strict-keywords"] = Request{Model: "model-x", Tools: testTools, Messages: toolTurn, OutputSchema: json.RawMessage(strictKeywordVerdict)}
	// Tool schemas every API refuses as they are: a root union, no type,
	// a type list, allOf; and one that needs nothing.
	fs["tool-schemas-lowered"] = Request{Model: "model-x", Tools: awkwardTools, Messages: toolTurn}
	// A compaction's second summary request: tools defined, calls forbidden.
	fs["tool-choice-none"] = Request{Model: "model-x", Tools: testTools, Messages: toolTurn, ToolChoice: ToolChoiceNone}
	fs["output-schema-nonstrict"] = Request{Model: "model-x", Tools: testTools, Messages: toolTurn, OutputSchema: json.RawMessage(looseVerdict)}
	// --reasoning in each form the model table names, on every API: the
	// API's own form where it has one, the other forms as the API takes
	// them (Anthropic has no effort form, OpenAI no budget or adaptive).
	for _, form := range []string{ThinkingAdaptive, ThinkingBudget, ThinkingEffort, ThinkingNone} {
		fs["thinking-"+form] = Request{Model: "model-x", Reasoning: "high", Thinking: form, Messages: []conv.Message{
			sys("You are terse."), user(conv.TextBlock("hello")),
		}}
	}
	// Adaptive thinking with a structured answer: one output_config holds
	// the effort and the format.
	fs["thinking-adaptive-output-schema"] = Request{Model: "model-x", Reasoning: "low", Thinking: ThinkingAdaptive, Messages: toolTurn, Tools: testTools, OutputSchema: json.RawMessage(strictVerdict)}
	if provider == NameOpenAI {
		// A reasoning item without a summary (the default when
		// --reasoning is not set) still carries summary: [].
		fs["reasoning-empty-summary"] = Request{Model: "gpt-5", Tools: testTools, Messages: []conv.Message{
			user(conv.TextBlock("read a.txt")),
			assistant(provider, conv.Block{Type: conv.BlockThinking, Signature: "gAAAAABenc", ItemID: "rs_456"}, toolUse("call_1", "read", `{"path":"a.txt"}`)),
			user(toolResult("call_1", "contents of a", false)),
		}}
	}
	if provider == NameAnthropic {
		// Tool ids from another provider that Anthropic's pattern
		// ^[a-zA-Z0-9_-]+$ refuses (Kimi via openai-chat).
		fs["foreign-tool-ids"] = Request{Model: "model-x", Tools: testTools, Messages: []conv.Message{
			user(conv.TextBlock("read both")),
			assistant(NameOpenAIChat, toolUse("functions.read:0", "read", `{"path":"a.txt"}`), toolUse("functions.read:1", "read", `{"path":"b.txt"}`)),
			user(toolResult("functions.read:0", "contents of a", false), toolResult("functions.read:1", "contents of b", false)),
			assistant(provider, toolUse("toolu_01A-b_c", "read", `{"path":"c.txt"}`)),
			user(toolResult("toolu_01A-b_c", "contents of c", false)),
		}}
	}
	return fs
}

// awkwardTools are MCP-style tools whose input schemas need lowering.
var awkwardTools = []Tool{
	{Name: "pick", Description: "Pick by id or by name.", Schema: json.RawMessage(`{"anyOf":[{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]},{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}]}`)},
	{Name: "untyped", Schema: json.RawMessage(`{"properties":{"q":{"type":"string"}},"required":["q"]}`)},
	{Name: "nullable", Schema: json.RawMessage(`{"type":["object","null"],"properties":{"n":{"type":"number"}}}`)},
	{Name: "both", Description: "Both parts.", Schema: json.RawMessage(`{"type":"object","allOf":[{"properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"string"}},"required":["b"]}],"additionalProperties":false}`)},
	{Name: "plain", Schema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string","minLength":1}}}`)},
}

const (
	keywordVerdict       = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"verdict":{"enum":["approve","request_changes"]},"score":{"type":"number","minimum":0,"maximum":10,"multipleOf":0.5},"comments":{"type":"array","uniqueItems":true,"minItems":2,"items":{"type":"object","properties":{"file":{"type":"string","minLength":1,"format":"relative-json-pointer"},"line":{"type":"integer","minimum":1},"body":{"type":"string"}},"required":["file","line","body"],"additionalProperties":false}},"labels":{"type":"object","patternProperties":{"^x-":{"type":"string"}}},"kind":{"oneOf":[{"const":"bug"},{"const":"style"}]}},"required":["verdict","score","comments","labels","kind"],"additionalProperties":false}`
	strictKeywordVerdict = `{"type":"object","properties":{"verdict":{"type":"string","enum":["approve","reject"]},"line":{"type":"integer","minimum":1},"sha":{"type":"string","pattern":"^[0-9a-f]{7,40}$"},"tags":{"type":"array","maxItems":5,"items":{"type":"string","format":"date"}}},"required":["verdict","line","sha","tags"],"additionalProperties":false}`
	strictVerdict        = `{"type":"object","properties":{"verdict":{"enum":["approve","reject"]},"reasons":{"type":"array","items":{"type":"string"}}},"required":["verdict","reasons"],"additionalProperties":false}`
	looseVerdict         = `{"type":"object","properties":{"verdict":{"enum":["approve","reject"]},"notes":{"type":"string"}},"required":["verdict"]}`
)

func encodeFor(t *testing.T, provider string, req Request) []byte {
	t.Helper()
	b, err := EncodeRequest(provider, req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRequestGolden pins the request body of every feature for every
// provider. The golden files are indented for reading; the compact bytes
// are what is sent.
func TestRequestGolden(t *testing.T) {
	for _, name := range wireNames {
		for feature, req := range features(name) {
			t.Run(name+"/"+feature, func(t *testing.T) {
				body := encodeFor(t, name, req)
				if again := encodeFor(t, name, req); !bytes.Equal(body, again) {
					t.Fatal("encoding is not deterministic")
				}
				if !json.Valid(body) {
					t.Fatalf("invalid JSON: %s", body)
				}
				var out bytes.Buffer
				if err := json.Indent(&out, body, "", "  "); err != nil {
					t.Fatal(err)
				}
				out.WriteByte('\n')
				checkGolden(t, filepath.Join("testdata", "golden", "request", name+"__"+feature+".json"), out.Bytes())
			})
		}
	}
}

// messageList returns the request's message/input array elements as raw
// JSON, with Anthropic's moving cache breakpoint removed.
func messageList(t *testing.T, provider string, body []byte) []string {
	t.Helper()
	key := "messages"
	if provider == NameOpenAI {
		key = "input"
	}
	var out []string
	for _, m := range gjson.GetBytes(body, key).Array() {
		raw := m.Raw
		if provider == NameAnthropic {
			n := len(m.Get("content").Array())
			var err error
			raw, err = sjson.Delete(raw, "content."+strconv.Itoa(n-1)+".cache_control")
			if err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, raw)
	}
	return out
}

// TestRequestsExtendPrefix grows each conversation one message at a time
// and requires every request's message list to start with the previous
// one's, byte for byte (so prompt caches hit), except for the last
// message's Anthropic cache breakpoint.
func TestRequestsExtendPrefix(t *testing.T) {
	for _, name := range wireNames {
		for feature, req := range features(name) {
			t.Run(name+"/"+feature, func(t *testing.T) {
				var prev []string
				for n := 1; n <= len(req.Messages); n++ {
					r := req
					r.Messages = req.Messages[:n]
					cur := messageList(t, name, encodeFor(t, name, r))
					if len(cur) < len(prev) {
						t.Fatalf("after %d messages the list shrank from %d to %d", n, len(prev), len(cur))
					}
					for i := range prev {
						if cur[i] != prev[i] {
							t.Fatalf("after %d messages, item %d changed:\n%s\nwas\n%s", n, i, cur[i], prev[i])
						}
					}
					prev = cur
				}
			})
		}
	}
}

// TestAnthropicCacheBreakpoints checks the three breakpoints: last system
// block, last tool and the latest message's last block, and no others.
func TestAnthropicCacheBreakpoints(t *testing.T) {
	body := encodeFor(t, NameAnthropic, features(NameAnthropic)["caching"])
	if n := strings.Count(string(body), `"cache_control"`); n != 3 {
		t.Errorf("%d breakpoints, want 3: %s", n, body)
	}
	for _, path := range []string{"system.1.cache_control.type", "tools.1.cache_control.type", "messages.2.content.0.cache_control.type"} {
		if got := gjson.GetBytes(body, path).String(); got != "ephemeral" {
			t.Errorf("%s = %q", path, got)
		}
	}
}

// TestResponsesReasoningWithoutEncryptedContent checks that a reasoning
// item the server can't resolve (no encrypted content, store false) is
// not sent back, and one with it is.
func TestResponsesReasoningWithoutEncryptedContent(t *testing.T) {
	req := Request{Model: "gpt-5", Messages: []conv.Message{
		user(conv.TextBlock("read a.txt")),
		assistant(NameOpenAI, conv.Block{Type: conv.BlockThinking, Thinking: "plain", ItemID: "rs_plain"}, toolUse("call_1", "read", `{"path":"a.txt"}`)),
		user(toolResult("call_1", "contents of a", false)),
		assistant(NameOpenAI, conv.Block{Type: conv.BlockThinking, Signature: "gAAAAABenc", ItemID: "rs_enc"}, toolUse("call_2", "read", `{"path":"a.txt"}`)),
		user(toolResult("call_2", "contents of a", false)),
	}}
	body := encodeFor(t, NameOpenAI, req)
	var ids []string
	for _, it := range gjson.GetBytes(body, `input.#(type=="reasoning")#.id`).Array() {
		ids = append(ids, it.String())
	}
	if strings.Join(ids, ",") != "rs_enc" {
		t.Errorf("reasoning items sent: %v, want [rs_enc]\n%s", ids, body)
	}
}

func TestReasoningModel(t *testing.T) {
	for model, want := range map[string]bool{
		"gpt-5": true, "gpt-5-mini": true, "gpt-5.1-codex": true, "o3": true, "o4-mini": true, "openai/gpt-5": true,
		"gpt-5-chat-latest": false, "gpt-5-chat": false, "openai/gpt-5-chat": false, "gpt-4.1": false, "gpt-4o": false,
	} {
		if got := reasoningModel(model); got != want {
			t.Errorf("reasoningModel(%q) = %v, want %v", model, got, want)
		}
	}
}

// TestChatReasoningContentBack checks which thinking goes back as
// reasoning_content: only what this API returned as reasoning_content.
func TestChatReasoningContentBack(t *testing.T) {
	rc := func(s string) conv.Block {
		return conv.Block{Type: conv.BlockThinking, Thinking: s, ItemID: reasoningContentID}
	}
	req := Request{Model: "deepseek-chat", Messages: []conv.Message{
		user(conv.TextBlock("go")),
		assistant(NameOpenAIChat, rc("one "), conv.TextBlock("Reading."), rc("two"), toolUse("call_1", "read", `{}`)),
		user(toolResult("call_1", "a", false)),
		// From reasoning (Groq, Ollama, OpenRouter): not sent back.
		assistant(NameOpenAIChat, conv.Block{Type: conv.BlockThinking, Thinking: "groq"}, toolUse("call_2", "read", `{}`)),
		user(toolResult("call_2", "a", false)),
		// From another provider: not sent back.
		assistant(NameAnthropic, rc("elsewhere"), toolUse("call_3", "read", `{}`)),
		user(toolResult("call_3", "a", false)),
	}}
	body := encodeFor(t, NameOpenAIChat, req)
	var got []string
	for _, m := range gjson.GetBytes(body, `messages.#(role=="assistant")#`).Array() {
		got = append(got, m.Get("reasoning_content").String())
	}
	if want := "one two,,"; strings.Join(got, ",") != want {
		t.Errorf("reasoning_content per assistant message = %q, want %q\n%s", strings.Join(got, ","), want, body)
	}
	if n := strings.Count(string(body), "reasoning_content"); n != 1 {
		t.Errorf("reasoning_content %d times, want 1: %s", n, body)
	}
}

func TestAnthToolID(t *testing.T) {
	valid := regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	seen := map[string]string{}
	for _, id := range []string{"functions.bash:0", "functions.bash:1", "functions_bash_0", "functions:bash.0", "", "call 1", "é", "toolu_01XyZ-9"} {
		got := anthToolID(id)
		if !valid.MatchString(got) {
			t.Errorf("anthToolID(%q) = %q, not a valid id", id, got)
		}
		if again := anthToolID(id); again != got {
			t.Errorf("anthToolID(%q) not deterministic: %q, %q", id, got, again)
		}
		if valid.MatchString(id) && got != id {
			t.Errorf("valid id %q changed to %q", id, got)
		}
		if prev, ok := seen[got]; ok {
			t.Errorf("%q and %q both map to %q", prev, id, got)
		}
		seen[got] = id
	}
}

// TestResponsesLongCallID checks that a call_id over the API's 64 bytes is
// shortened, the same on the call and its output, and that others aren't.
func TestResponsesLongCallID(t *testing.T) {
	long := "chatcmpl-tool-" + strings.Repeat("0123456789", 6)
	req := Request{Model: "gpt-5", Messages: []conv.Message{
		user(conv.TextBlock("read")),
		assistant(NameOpenAIChat, toolUse(long, "read", `{}`), toolUse(long+"x", "read", `{}`), toolUse("call_1", "read", `{}`)),
		user(toolResult(long, "a", false), toolResult(long+"x", "b", false), toolResult("call_1", "c", false)),
	}}
	body := encodeFor(t, NameOpenAI, req)
	calls := gjson.GetBytes(body, `input.#(type=="function_call")#.call_id`).Array()
	outs := gjson.GetBytes(body, `input.#(type=="function_call_output")#.call_id`).Array()
	if len(calls) != 3 || len(outs) != 3 {
		t.Fatalf("calls %v outputs %v", calls, outs)
	}
	for i := range calls {
		if c := calls[i].String(); len(c) > 64 || c != outs[i].String() {
			t.Errorf("call %d: call_id %q, output call_id %q", i, c, outs[i].String())
		}
	}
	if calls[0].String() == calls[1].String() || calls[2].String() != "call_1" {
		t.Errorf("call_ids %v", calls)
	}
}

// TestAnthropicStablePrefixBreakpoint: Request.StablePrefix adds a fourth
// breakpoint at the end of the stable messages (counted with the system
// messages, which become the system prompt), none when it is 0 or the
// whole request, and it lands on the message before one that encodes to
// nothing.
func TestAnthropicStablePrefixBreakpoint(t *testing.T) {
	msgs := []conv.Message{
		{Role: conv.RoleSystem, Content: []conv.Block{conv.TextBlock("sys")}},
		{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("task")}},
		{Role: conv.RoleAssistant, Content: []conv.Block{conv.TextBlock("a"), {Type: conv.BlockToolUse, ID: "c1", Name: "bash", Input: `{}`}}},
		{Role: conv.RoleUser, Content: []conv.Block{{Type: conv.BlockToolResult, ToolUseID: "c1", Content: "out"}}},
		{Role: conv.RoleAssistant},
		{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("more")}},
	}
	tools := []Tool{{Name: "bash", Schema: json.RawMessage(`{"type":"object"}`)}}
	for _, tc := range []struct {
		stable int
		marked []string // besides system, tools and the last message
	}{
		{0, nil},
		{3, []string{"messages.1.content.1"}},
		{4, []string{"messages.2.content.0"}},
		{5, []string{"messages.2.content.0"}}, // message 4 encodes to nothing
		{6, nil},
		{9, nil},
	} {
		body, err := EncodeRequest(NameAnthropic, Request{Model: "m", Messages: msgs, Tools: tools, StablePrefix: tc.stable})
		if err != nil {
			t.Fatal(err)
		}
		want := append([]string{"system.0", "tools.0", "messages.3.content.0"}, tc.marked...)
		if n := strings.Count(string(body), `"cache_control"`); n != len(want) {
			t.Errorf("StablePrefix %d: %d breakpoints, want %d: %s", tc.stable, n, len(want), body)
		}
		for _, p := range want {
			if gjson.GetBytes(body, p+".cache_control.type").Str != "ephemeral" {
				t.Errorf("StablePrefix %d: no breakpoint on %s: %s", tc.stable, p, body)
			}
		}
	}
}

// TestAnthropicSharedPrefixBreakpoint: Request.SharedPrefix marks the end
// of the messages the requests before a prune began with, in place of the
// breakpoint after the tools when a system prompt follows them (a request
// may mark four), beside the tools' when there is none; and nothing when
// it does not end before the stable prefix, or on a message that ends in
// thinking, which cannot carry a breakpoint.
func TestAnthropicSharedPrefixBreakpoint(t *testing.T) {
	result := func(id string) conv.Message {
		return conv.Message{Role: conv.RoleUser, Content: []conv.Block{{Type: conv.BlockToolResult, ToolUseID: id, Content: "out"}}}
	}
	call := func(id string) conv.Message {
		return conv.Message{Role: conv.RoleAssistant, Content: []conv.Block{{Type: conv.BlockToolUse, ID: id, Name: "bash", Input: `{}`}}}
	}
	sys := conv.Message{Role: conv.RoleSystem, Content: []conv.Block{conv.TextBlock("sys")}}
	task := conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("task")}}
	thought := conv.Message{Role: conv.RoleAssistant, Provider: NameAnthropic, Content: []conv.Block{{Type: conv.BlockToolUse, ID: "c2", Name: "bash", Input: `{}`}, {Type: conv.BlockThinking, Thinking: "hm", Signature: "s"}}}
	convo := []conv.Message{task, call("c1"), result("c1"), call("c2"), result("c2"), call("c3"), result("c3")}
	tools := []Tool{{Name: "bash", Schema: json.RawMessage(`{"type":"object"}`)}}
	for _, tc := range []struct {
		name           string
		msgs           []conv.Message
		stable, shared int
		want           []string
	}{
		{"system", append([]conv.Message{sys}, convo...), 6, 3, []string{"system.0", "messages.1.content.0", "messages.4.content.0", "messages.6.content.0"}},
		{"no system", convo, 5, 2, []string{"tools.0", "messages.1.content.0", "messages.4.content.0", "messages.6.content.0"}},
		{"not before the stable prefix", append([]conv.Message{sys}, convo...), 4, 4, []string{"system.0", "tools.0", "messages.2.content.0", "messages.6.content.0"}},
		{"no stable prefix", append([]conv.Message{sys}, convo...), 0, 3, []string{"system.0", "tools.0", "messages.6.content.0"}},
		{"thinking", []conv.Message{sys, task, call("c1"), result("c1"), thought, result("c2"), call("c3"), result("c3")}, 6, 5, []string{"system.0", "tools.0", "messages.4.content.0", "messages.6.content.0"}},
	} {
		body, err := EncodeRequest(NameAnthropic, Request{Model: "m", Messages: tc.msgs, Tools: tools, StablePrefix: tc.stable, SharedPrefix: tc.shared})
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(body), `"cache_control"`); n != len(tc.want) {
			t.Errorf("%s: %d breakpoints, want %d: %s", tc.name, n, len(tc.want), body)
		}
		for _, p := range tc.want {
			if gjson.GetBytes(body, p+".cache_control.type").Str != "ephemeral" {
				t.Errorf("%s: no breakpoint on %s: %s", tc.name, p, body)
			}
		}
	}
}

// TestCacheTTLAndKey: --cache-ttl 1h puts the 1-hour TTL on every
// Anthropic breakpoint (a 1-hour one may not follow a 5-minute one); 24h
// is OpenAI's prompt_cache_retention on both APIs; the cache key goes to
// Responses only, since Chat Completions servers are often not OpenAI's.
func TestCacheTTLAndKey(t *testing.T) {
	msgs := []conv.Message{
		{Role: conv.RoleSystem, Content: []conv.Block{conv.TextBlock("sys")}},
		{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("task")}},
	}
	tools := []Tool{{Name: "bash", Schema: json.RawMessage(`{"type":"object"}`)}}
	enc := func(name, ttl, key string) []byte {
		t.Helper()
		body, err := EncodeRequest(name, Request{Model: "m", Messages: msgs, Tools: tools, CacheTTL: ttl, CacheKey: key})
		if err != nil {
			t.Fatal(err)
		}
		return body
	}
	body := enc(NameAnthropic, "1h", "k")
	if n, n1h := strings.Count(string(body), `"cache_control"`), strings.Count(string(body), `"cache_control":{"type":"ephemeral","ttl":"1h"}`); n != 3 || n1h != 3 {
		t.Errorf("%d breakpoints, %d of them for an hour; want 3 and 3: %s", n, n1h, body)
	}
	if body := enc(NameAnthropic, "5m", ""); strings.Contains(string(body), "ttl") {
		t.Errorf("5m sent a ttl: %s", body)
	}
	body = enc(NameOpenAI, "24h", "awl-1")
	if gjson.GetBytes(body, "prompt_cache_retention").Str != "24h" || gjson.GetBytes(body, "prompt_cache_key").Str != "awl-1" {
		t.Errorf("responses: %s", body)
	}
	if body := enc(NameOpenAI, "", "awl-1"); gjson.GetBytes(body, "prompt_cache_retention").Exists() {
		t.Errorf("responses without a TTL asked for a retention: %s", body)
	}
	body = enc(NameOpenAIChat, "24h", "awl-1")
	if gjson.GetBytes(body, "prompt_cache_retention").Str != "24h" || gjson.GetBytes(body, "prompt_cache_key").Exists() {
		t.Errorf("chat: %s", body)
	}
}

func TestExtendedCache(t *testing.T) {
	for _, tc := range []struct {
		provider, model, ttl string
		ok                   bool
	}{
		{NameAnthropic, "claude-sonnet-4-5", "", true},
		{NameAnthropic, "claude-sonnet-4-5", "5m", true},
		{NameAnthropic, "claude-haiku-4-5", "1h", true},
		{NameAnthropic, "claude-sonnet-4-5", "24h", false},
		{NameOpenAI, "gpt-5.4", "1h", false},
		{NameOpenAI, "gpt-5.4", "24h", true},
		{NameOpenAI, "gpt-5.5", "24h", true},
		{NameOpenAI, "gpt-5.1-codex-mini", "24h", true},
		{NameOpenAI, "gpt-4.1", "24h", true},
		{NameOpenAI, "gpt-4.1-mini", "24h", false},
		{NameOpenAI, "gpt-5-mini", "24h", false},
		{NameOpenAI, "gpt-4o", "24h", false},
		{NameOpenAI, "o3", "24h", false},
		{NameOpenAIChat, "openai/gpt-4o-mini", "24h", false},
		{NameOpenAIChat, "deepseek-chat", "24h", true},
		{NameOpenAI, "gpt-4o", "5m", true},
	} {
		ok, why := ExtendedCache(tc.provider, tc.model, tc.ttl)
		if ok != tc.ok || ok != (why == "") {
			t.Errorf("ExtendedCache(%s, %s, %s) = %v %q, want %v", tc.provider, tc.model, tc.ttl, ok, why, tc.ok)
		}
	}
}

// TestServiceTierEncoding: --service-tier goes out as each API names it,
// and nothing is sent without it.
func TestServiceTierEncoding(t *testing.T) {
	msgs := []conv.Message{{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("hi")}}}
	for _, tc := range []struct{ api, tier, want string }{
		{NameAnthropic, "default", "standard_only"},
		{NameAnthropic, "auto", "auto"},
		{NameAnthropic, "", ""},
		{NameOpenAI, "flex", "flex"},
		{NameOpenAI, "", ""},
		{NameOpenAIChat, "priority", "priority"},
		{NameOpenAIChat, "", ""},
	} {
		body, err := EncodeRequest(tc.api, Request{Model: "m", Messages: msgs, ServiceTier: tc.tier})
		if err != nil {
			t.Fatal(err)
		}
		if got := gjson.GetBytes(body, "service_tier"); got.Str != tc.want || tc.want == "" && got.Exists() {
			t.Errorf("%s %q: service_tier %s", tc.api, tc.tier, got.Raw)
		}
	}
	for _, tc := range []struct {
		provider, tier string
		ok             bool
	}{{NameAnthropic, "auto", true}, {NameAnthropic, "default", true}, {NameAnthropic, "flex", false}, {NameAnthropic, "priority", false},
		{NameOpenAI, "flex", true}, {NameOpenAIChat, "priority", true}, {NameOpenAI, "scale", false}, {NameOpenAI, "", true}} {
		if ok, why := ServiceTierOffered(tc.provider, tc.tier); ok != tc.ok || ok != (why == "") {
			t.Errorf("ServiceTierOffered(%s, %q) = %v %q", tc.provider, tc.tier, ok, why)
		}
	}
}
