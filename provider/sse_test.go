package provider

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/awlrun/awl/conv"
)

type sseEvent struct{ event, data string }

func readAllEvents(r io.Reader) ([]sseEvent, error) {
	d := newSSEDecoder(r)
	var out []sseEvent
	for {
		ev, data, err := d.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, sseEvent{string(ev), string(data)})
	}
}

func TestSSEDecoder(t *testing.T) {
	cases := []struct {
		name, in string
		want     []sseEvent
	}{
		{"lf", "event: a\ndata: 1\n\ndata: 2\n\n", []sseEvent{{"a", "1"}, {"", "2"}}},
		{"crlf", "event: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n", []sseEvent{{"a", "1"}, {"", "2"}}},
		{"cr", "event: a\rdata: 1\r\rdata: 2\r\r", []sseEvent{{"a", "1"}, {"", "2"}}},
		{"multi-line data", "data: one\ndata:two\ndata\n\n", []sseEvent{{"", "one\ntwo\n"}}},
		{"comments, id and retry skipped", ": OPENROUTER PROCESSING\n\nretry: 10\nid: 7\n: x\ndata: {}\n\n", []sseEvent{{"", "{}"}}},
		{"event without data is not dispatched", "event: ping\n\ndata: x\n\n", []sseEvent{{"", "x"}}},
		{"padding kept", "data: {\"a\":1}     \n\n", []sseEvent{{"", "{\"a\":1}     "}}},
		{"only one space stripped", "data:  two spaces\n\n", []sseEvent{{"", " two spaces"}}},
		{"no final blank line", "data: [DONE]\n", []sseEvent{{"", "[DONE]"}}},
		{"no final line ending", "data: a\n\ndata: [DONE]", []sseEvent{{"", "a"}, {"", "[DONE]"}}},
		{"empty", "", nil},
		{"blank lines only", "\n\n\r\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(c.in), iotest.OneByteReader(strings.NewReader(c.in)), iotest.HalfReader(strings.NewReader(c.in))} {
				got, err := readAllEvents(r)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(c.want) {
					t.Errorf("got %q, want %q", got, c.want)
				}
			}
		})
	}
}

func TestSSELongLine(t *testing.T) {
	big := strings.Repeat("x", 3<<20) // well past the initial buffer
	got, err := readAllEvents(strings.NewReader("data: " + big + "\n\ndata: after\n\n"))
	if err != nil || len(got) != 2 || got[0].data != big || got[1].data != "after" {
		t.Fatalf("got %d events, err %v", len(got), err)
	}
}

// TestSSELineLimitText: the constant text of the too-long-line error names
// the limit the decoder applies, as tooLarge would write it.
func TestSSELineLimitText(t *testing.T) {
	if want := tooLarge("an SSE line", sseMaxLine).msg; errSSELineTooLong.msg != want {
		t.Errorf("errSSELineTooLong says %q; the limit is %s, which reads %q", errSSELineTooLong.msg, sizeText(sseMaxLine), want)
	}
}

func TestSSEReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: 1\n\n"), iotest.ErrReader(boom))
	got, err := readAllEvents(r)
	if !errors.Is(err, boom) || len(got) != 1 {
		t.Fatalf("got %v, %v", got, err)
	}
}

// FuzzSSE feeds arbitrary bytes to the SSE decoder: it must terminate
// without panicking, and event data must not depend on how reads split.
func FuzzSSE(f *testing.F) {
	f.Add([]byte("event: a\ndata: 1\n\n"))
	f.Add([]byte("data: x\r\ndata: y\r\n\r\n: c\rdata: z\r\r"))
	f.Add([]byte("data\n\ndata:\n\nevent\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		whole, err1 := readAllEvents(bytes.NewReader(in))
		split, err2 := readAllEvents(iotest.OneByteReader(bytes.NewReader(in)))
		if (err1 == nil) != (err2 == nil) || fmt.Sprint(whole) != fmt.Sprint(split) {
			t.Fatalf("whole %q (%v) != one byte at a time %q (%v)", whole, err1, split, err2)
		}
	})
}

// fuzzDecoder runs one provider's decoder over arbitrary SSE input, then
// over the same input as a non-streamed body.
func fuzzDecoder(t *testing.T, provider string, in []byte) {
	var events int
	emit := func(Event) { events++ }
	p, err := New(provider, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := p.(*client).w
	msg, err := decodeStream(bytes.NewReader(in), w.decoder(provider, emit), maxEventBytes)
	if err == nil {
		checkDecoded(t, msg)
	}
	d := w.decoder(provider, emit)
	if err := d.whole(in); err == nil {
		checkDecoded(t, d.message())
	}
}

func checkDecoded(t *testing.T, m conv.Message) {
	t.Helper()
	if m.Role != conv.RoleAssistant || m.StopReason == "" {
		t.Fatalf("completed message without role or stop reason: %+v", m)
	}
	for _, b := range m.Content {
		if b.Type == conv.BlockToolUse && b.Input == "" {
			t.Fatalf("tool call with empty input: %+v", b)
		}
	}
}

func addFixtureSeeds(f *testing.F, dir string) {
	for _, fx := range fixtures(f) {
		if strings.HasPrefix(fx.name, dir+"/") || (dir == "openai-chat" && strings.HasPrefix(fx.name, "openai-compatible/")) {
			if b, err := os.ReadFile(fx.path); err == nil && len(b) < 20000 {
				f.Add(b)
			}
		}
	}
}

func FuzzAnthropicDecoder(f *testing.F) {
	addFixtureSeeds(f, "anthropic")
	f.Fuzz(func(t *testing.T, in []byte) { fuzzDecoder(t, NameAnthropic, in) })
}

func FuzzResponsesDecoder(f *testing.F) {
	addFixtureSeeds(f, "openai-responses")
	f.Fuzz(func(t *testing.T, in []byte) { fuzzDecoder(t, NameOpenAI, in) })
}

func FuzzChatDecoder(f *testing.F) {
	addFixtureSeeds(f, "openai-chat")
	f.Fuzz(func(t *testing.T, in []byte) { fuzzDecoder(t, NameOpenAIChat, in) })
}

// longStream builds an SSE body with n text deltas in provider's format.
func longStream(provider string, n int) []byte {
	var b bytes.Buffer
	switch provider {
	case NameAnthropic:
		b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4-5\",\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n")
		b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
		for i := range n {
			fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"token %d of a fairly ordinary sentence \"}}   \n\n", i)
		}
		b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
		b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":10000}}\n\n")
		b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	case NameOpenAI:
		b.WriteString("event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"model\":\"gpt-5\",\"output\":[]}}\n\n")
		b.WriteString("event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\n")
		for i := range n {
			fmt.Fprintf(&b, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":%d,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"token %d of a fairly ordinary sentence \",\"logprobs\":[]}\n\n", i, i)
		}
		b.WriteString("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"model\":\"gpt-5\",\"usage\":{\"input_tokens\":10,\"output_tokens\":10000}}}\n\n")
	case NameOpenAIChat:
		for i := range n {
			fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-5\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"token %d of a fairly ordinary sentence \"},\"finish_reason\":null}]}\n\n", i)
		}
		b.WriteString("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-5\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
		b.WriteString("data: {\"id\":\"chatcmpl-1\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":10000}}\n\ndata: [DONE]\n\n")
	}
	return b.Bytes()
}

func TestLongStream(t *testing.T) {
	for _, name := range wireNames {
		msg, err := decodeAll(name, true, bytes.NewReader(longStream(name, 10000)))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(msg.Text(), "fairly ordinary"); n != 10000 || msg.StopReason != conv.StopEnd {
			t.Errorf("%s: %d deltas in the text, stop %q", name, n, msg.StopReason)
		}
	}
}

// BenchmarkDecode decodes a 10k-delta stream per provider, with an emit
// callback that does nothing. Bytes/s is the stream's size.
func BenchmarkDecode(b *testing.B) {
	for _, name := range wireNames {
		data := longStream(name, 10000)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			p, _ := New(name, Options{})
			w := p.(*client).w
			for b.Loop() {
				if _, err := decodeStream(bytes.NewReader(data), w.decoder(name, func(Event) {}), maxEventBytes); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSSE is the SSE layer alone: it must not allocate per line.
func BenchmarkSSE(b *testing.B) {
	data := longStream(NameAnthropic, 10000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		d := newSSEDecoder(bytes.NewReader(data))
		for {
			if _, _, err := d.Next(); err != nil {
				break
			}
		}
	}
}

// TestSSENoAllocPerLine checks the SSE layer's steady state: once its
// buffers have grown, reading more events allocates nothing.
func TestSSENoAllocPerLine(t *testing.T) {
	data := longStream(NameAnthropic, 2000)
	d := newSSEDecoder(bytes.NewReader(bytes.Repeat(data, 30)))
	for range 100 {
		d.Next()
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if _, _, err := d.Next(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.2f allocations per event, want 0", allocs)
	}
}

// TestDecodedStringsOutliveEventBuffer: strings kept from one event must
// not alias the SSE buffer that the next events overwrite.
func TestDecodedStringsOutliveEventBuffer(t *testing.T) {
	pad := strings.Repeat("x", 200)
	// The first event is the longest, so later ones reuse its buffer.
	in := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-x\",\"usage\":{\"input_tokens\":1}},\"pad\":\"" + pad + pad + "\"}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"read\",\"input\":{}}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":3}}\n\n" +
		"event: ping\ndata: {\"type\":\"ping\",\"pad\":\"" + pad + "\"}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\",\"pad\":\"" + pad + "\"}\n\n"
	msg, err := decodeAll(NameAnthropic, true, strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if msg.StopReason != conv.StopToolUse || msg.Model != "claude-x" || msg.Content[0].ID != "toolu_1" || msg.Content[0].Name != "read" {
		t.Errorf("got %+v", msg)
	}
}

// TestSSELongLineSearchedOnce: a line of 1 MiB read 1400 bytes at a time,
// as the network hands it over (a Responses terminal event repeating a
// large tool input), is searched for its ending once, not again from its
// start after each read, which made decoding quadratic in the line's
// length.
func TestSSELongLineSearchedOnce(t *testing.T) {
	line := "data: " + strings.Repeat("x", 1<<20)
	in := line + "\r\n\r\n" + line + "\n\n"
	d := newSSEDecoder(iotest.HalfReader(&chunkedReader{bytes.NewReader([]byte(in)), 1400}))
	for range 2 {
		_, data, err := d.Next()
		if err != nil || len(data) != 1<<20 {
			t.Fatalf("event of %d bytes, %v", len(data), err)
		}
	}
	if d.searched > 3*len(in) {
		t.Errorf("%d bytes searched for line endings in a %d-byte stream", d.searched, len(in))
	}
}
