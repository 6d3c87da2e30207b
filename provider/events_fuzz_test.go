package provider

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/awlrun/awl/conv"
)

// The Fuzz*Events targets feed a decoder arbitrary sequences of well-formed
// events, where the byte-level fuzzers (Fuzz*Decoder) mostly produce JSON
// that doesn't parse. A fuzz input is a program: each pair of bytes picks an
// event from the wire API's vocabulary and a block index (0-3) for its %d.
// The vocabulary is the templates below, then every distinct event of the
// recorded streams; templates come first so committed corpus entries keep
// their meaning when recordings are added.

var anthropicTemplates = []string{
	/* 0 */ `{"type":"message_start","message":{"model":"claude-x","usage":{"input_tokens":5,"output_tokens":1}}}`,
	/* 1 */ `{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`,
	/* 2 */ `{"type":"content_block_start","index":%d,"content_block":{"type":"thinking","thinking":""}}`,
	/* 3 */ `{"type":"content_block_start","index":%d,"content_block":{"type":"redacted_thinking","data":"EmwK"}}`,
	/* 4 */ `{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":"toolu_%d","name":"ls","input":{}}}`,
	/* 5 */ `{"type":"content_block_start","index":%d,"content_block":{"type":"server_tool_use","id":"srv_%d","name":"web_search"}}`,
	/* 6 */ `{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":"hi"}}`,
	/* 7 */ `{"type":"content_block_delta","index":%d,"delta":{"type":"thinking_delta","thinking":"hmm"}}`,
	/* 8 */ `{"type":"content_block_delta","index":%d,"delta":{"type":"signature_delta","signature":"sig"}}`,
	/* 9 */ `{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":"{\"a\":1}"}}`,
	/* 10 */ `{"type":"content_block_stop","index":%d}`,
	/* 11 */ `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":7}}`,
	/* 12 */ `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}`,
	/* 13 */ `{"type":"message_stop"}`,
	/* 14 */ `{"type":"ping"}`,
	/* 15 */ `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
}

var responsesTemplates = []string{
	/* 0 */ `{"type":"response.created","response":{"model":"gpt-x","status":"in_progress"}}`,
	/* 1 */ `{"type":"response.output_item.added","output_index":%d,"item":{"type":"message","id":"msg_%d","content":[]}}`,
	/* 2 */ `{"type":"response.output_item.added","output_index":%d,"item":{"type":"reasoning","id":"rs_%d","summary":[]}}`,
	/* 3 */ `{"type":"response.output_item.added","output_index":%d,"item":{"type":"function_call","call_id":"call_%d","name":"ls","arguments":""}}`,
	/* 4 */ `{"type":"response.output_text.delta","output_index":%d,"delta":"hi"}`,
	/* 5 */ `{"type":"response.refusal.delta","output_index":%d,"delta":"no"}`,
	/* 6 */ `{"type":"response.reasoning_summary_text.delta","output_index":%d,"summary_index":0,"delta":"hmm"}`,
	/* 7 */ `{"type":"response.reasoning_text.delta","output_index":%d,"delta":"hmm"}`,
	/* 8 */ `{"type":"response.reasoning_summary_part.added","output_index":%d,"summary_index":1}`,
	/* 9 */ `{"type":"response.function_call_arguments.delta","output_index":%d,"delta":"{\"a\":1}"}`,
	/* 10 */ `{"type":"response.output_item.done","output_index":%d,"item":{"type":"message","content":[{"type":"output_text","text":"hi"}]}}`,
	/* 11 */ `{"type":"response.output_item.done","output_index":%d,"item":{"type":"reasoning","id":"rs_%d","encrypted_content":"gAAA","summary":[{"type":"summary_text","text":"hmm"}]}}`,
	/* 12 */ `{"type":"response.output_item.done","output_index":%d,"item":{"type":"function_call","call_id":"call_%d","name":"ls","arguments":"{}"}}`,
	/* 13 */ `{"type":"response.completed","response":{"model":"gpt-x","status":"completed","output":[],"usage":{"input_tokens":5,"output_tokens":2}}}`,
	/* 14 */ `{"type":"response.completed","response":{"status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"x"}]},{"type":"function_call","call_id":"c","name":"ls","arguments":"{}"}]}}`,
	/* 15 */ `{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}}`,
	/* 16 */ `{"type":"response.failed","response":{"error":{"code":"server_error","message":"boom"}}}`,
	/* 17 */ `{"type":"error","code":"rate_limit_exceeded","message":"slow down"}`,
	/* 18 */ `{"type":"response.output_item.done","output_index":%d,"item":{"type":"web_search_call","id":"ws_%d"}}`,
}

var chatTemplates = []string{
	/* 0 */ `{"id":"","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
	/* 1 */ `{"choices":[{"index":0,"delta":{"content":"hi"}}]}`,
	/* 2 */ `{"choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]}`,
	/* 3 */ `{"choices":[{"index":0,"delta":{"reasoning":"hmm"}}]}`,
	/* 4 */ `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"id":"call_%d","type":"function","function":{"name":"ls","arguments":""}}]}}]}`,
	/* 5 */ `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"function":{"arguments":"{\"a\":1}"}}]}}]}`,
	/* 6 */ `{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"ls"}}]}}]}`,
	/* 7 */ `{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"{}"}}]}}]}`,
	/* 8 */ `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"function":{"name":"ls","arguments":{"a":1}}}]}}]}`,
	/* 9 */ `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	/* 10 */ `{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`,
	/* 11 */ `{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":4}}}`,
	/* 12 */ `{"error":{"message":"overloaded","code":529}}`,
	/* 13 */ `[DONE]`,
	/* 14 */ `{"choices":[]}`,
	/* 15 */ `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"function":{"name":"read"}}]}}]}`,
}

// eventVocab is the templates, then every distinct event of the recorded
// streams in testdata/wire/<dir> for each dir, in file order.
func eventVocab(t testing.TB, templates []string, dirs ...string) [][]byte {
	var out [][]byte
	seen := map[string]bool{}
	add := func(ev []byte) {
		if !seen[string(ev)] {
			seen[string(ev)] = true
			out = append(out, ev)
		}
	}
	for _, s := range templates {
		add([]byte(s))
	}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join("testdata", "wire", dir, "*.sse"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no recordings in %s: %v", dir, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			d := newSSEDecoder(bytes.NewReader(b))
			for {
				_, data, err := d.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				add(bytes.Clone(data))
			}
		}
	}
	return out
}

// addRecordedPrograms seeds f with the programs that replay each recorded
// stream, whose events are in the vocabulary by construction.
func addRecordedPrograms(f *testing.F, vocab [][]byte, dirs ...string) {
	index := map[string]int{}
	for i, ev := range vocab {
		index[string(ev)] = i
	}
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join("testdata", "wire", dir, "*.sse"))
		for _, file := range files {
			b, _ := os.ReadFile(file)
			var prog []byte
			d := newSSEDecoder(bytes.NewReader(b))
			for {
				_, data, err := d.Next()
				if err != nil {
					break
				}
				if i, ok := index[string(data)]; ok && i < 256 {
					prog = append(prog, byte(i), 0)
				}
			}
			f.Add(prog)
		}
	}
}

// runEvents runs prog on a fresh decoder of provider. It must not panic;
// a completed message must be whole, and every tool call must have an id
// unique in the message when check is set (Chat synthesizes missing ones).
func runEvents(t *testing.T, provider string, vocab [][]byte, prog []byte, checkIDs bool) {
	p, err := New(provider, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var emitted int
	dec := p.(*client).w.decoder(provider, func(Event) { emitted++ })
	if rd, ok := dec.(interface{ setRequest(reqBody) }); ok {
		rd.setRequest(reqBody{prog})
	}
	for i := 0; i+1 < len(prog); i += 2 {
		idx := []byte(strconv.Itoa(int(prog[i+1] % 4)))
		ev := bytes.ReplaceAll(vocab[int(prog[i])%len(vocab)], []byte("%d"), idx)
		done, err := dec.event(nil, ev)
		if err != nil {
			return
		}
		if !done {
			continue
		}
		m := dec.message()
		checkDecoded(t, m)
		ids := map[string]bool{}
		for _, b := range m.Content {
			if b.Type != conv.BlockToolUse || !checkIDs {
				continue
			}
			if b.ID == "" || ids[b.ID] {
				t.Fatalf("tool call id %q empty or repeated in %+v", b.ID, m.Content)
			}
			ids[b.ID] = true
		}
		return
	}
}

func FuzzAnthropicEvents(f *testing.F) {
	vocab := eventVocab(f, anthropicTemplates, "anthropic")
	addRecordedPrograms(f, vocab, "anthropic")
	f.Fuzz(func(t *testing.T, prog []byte) { runEvents(t, NameAnthropic, vocab, prog, false) })
}

func FuzzResponsesEvents(f *testing.F) {
	vocab := eventVocab(f, responsesTemplates, "openai-responses")
	addRecordedPrograms(f, vocab, "openai-responses")
	f.Fuzz(func(t *testing.T, prog []byte) { runEvents(t, NameOpenAI, vocab, prog, false) })
}

func FuzzChatEvents(f *testing.F) {
	vocab := eventVocab(f, chatTemplates, "openai-chat", "openai-compatible")
	addRecordedPrograms(f, vocab, "openai-chat", "openai-compatible")
	f.Fuzz(func(t *testing.T, prog []byte) { runEvents(t, NameOpenAIChat, vocab, prog, true) })
}
