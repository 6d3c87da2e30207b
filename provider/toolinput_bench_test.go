package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// toolInputSizes are the tool inputs of BenchmarkToolInputDeltas: a small
// edit, a 160 KB file written in one call, and ten times that.
var toolInputSizes = []int{1 << 10, 160 << 10, 1600 << 10}

// toolInput is a write call's input of about size bytes of JSON.
func toolInput(size int) string {
	line := "func f() { return \"a line of a generated file\" }\n"
	content := strings.Repeat(line, size/len(line)+1)[:size-40]
	b, _ := json.Marshal(map[string]string{"path": "gen.go", "content": content})
	return string(b)
}

// toolInputStream is one tool call whose input arrives as deltas of about
// 40 bytes of its JSON text, as the APIs stream it, in provider's wire
// format. Responses repeats the whole input in output_item.done and in
// response.completed, as the API does.
func toolInputStream(provider, input string) []byte {
	var pieces []string
	for s := input; s != ""; {
		n := min(40, len(s))
		pieces, s = append(pieces, s[:n]), s[n:]
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	var b bytes.Buffer
	switch provider {
	case NameAnthropic:
		b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4-5\",\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n")
		b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"write\",\"input\":{}}}\n\n")
		for _, p := range pieces {
			fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":%s}}\n\n", q(p))
		}
		b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
		b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":10000}}\n\n")
		b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	case NameOpenAI:
		item := fmt.Sprintf(`{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"write","arguments":%s}`, q(input))
		b.WriteString("event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"model\":\"gpt-5\",\"output\":[]}}\n\n")
		b.WriteString("event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"fc_1\",\"type\":\"function_call\",\"status\":\"in_progress\",\"call_id\":\"call_1\",\"name\":\"write\",\"arguments\":\"\"}}\n\n")
		for i, p := range pieces {
			fmt.Fprintf(&b, "event: response.function_call_arguments.delta\ndata: {\"type\":\"response.function_call_arguments.delta\",\"sequence_number\":%d,\"item_id\":\"fc_1\",\"output_index\":0,\"delta\":%s}\n\n", i, q(p))
		}
		fmt.Fprintf(&b, "event: response.function_call_arguments.done\ndata: {\"type\":\"response.function_call_arguments.done\",\"item_id\":\"fc_1\",\"output_index\":0,\"arguments\":%s}\n\n", q(input))
		fmt.Fprintf(&b, "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":%s}\n\n", item)
		fmt.Fprintf(&b, "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"model\":\"gpt-5\",\"output\":[%s],\"usage\":{\"input_tokens\":10,\"output_tokens\":10000}}}\n\n", item)
	case NameOpenAIChat:
		b.WriteString("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-5\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"write\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n")
		for _, p := range pieces {
			fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-5\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":%s}}]},\"finish_reason\":null}]}\n\n", q(p))
		}
		b.WriteString("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-5\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n")
		b.WriteString("data: {\"id\":\"chatcmpl-1\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":10000}}\n\ndata: [DONE]\n\n")
	}
	return b.Bytes()
}

// chunkedReader returns at most n bytes a Read, as a network connection
// hands over a stream a packet at a time.
type chunkedReader struct {
	r *bytes.Reader
	n int
}

func (c *chunkedReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// TestToolInputStream: the benchmark's streams decode to their input, in
// one piece, for every API.
func TestToolInputStream(t *testing.T) {
	for _, name := range wireNames {
		for _, size := range toolInputSizes[:2] {
			in := toolInput(size)
			msg, err := decodeAll(name, true, &chunkedReader{bytes.NewReader(toolInputStream(name, in)), 1400})
			if err != nil {
				t.Fatalf("%s %d: %v", name, size, err)
			}
			calls := msg.ToolUses()
			if len(calls) != 1 || calls[0].Input != in {
				t.Fatalf("%s %d: %d calls, input intact %v", name, size, len(calls), len(calls) == 1 && calls[0].Input == in)
			}
		}
	}
}

// BenchmarkToolInputDeltas decodes one tool call of 1 KB, 160 KB and
// 1.6 MB streamed in 40-byte deltas, read 1400 bytes at a time, through
// each API's stream parser. Bytes/s is the tool input's size: linear
// decoding keeps it about the same at every size.
func BenchmarkToolInputDeltas(b *testing.B) {
	for _, name := range wireNames {
		for _, size := range toolInputSizes {
			in := toolInput(size)
			data := toolInputStream(name, in)
			b.Run(fmt.Sprintf("%s/%dKB", name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				b.ReportAllocs()
				p, _ := New(name, Options{})
				w := p.(*client).w
				for b.Loop() {
					r := &chunkedReader{bytes.NewReader(data), 1400}
					if _, err := decodeStream(r, w.decoder(name, func(Event) {}), maxEventBytes); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
