package provider

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider/providertest"
)

func sseBody(events ...string) []byte {
	var b bytes.Buffer
	for _, e := range events {
		b.WriteString("data: " + e + "\n\n")
	}
	return b.Bytes()
}

// TestAnthropicLateDelta sends deltas for blocks that already stopped: they
// must be ignored, not crash awl (the builder of a stopped block is gone).
func TestAnthropicLateDelta(t *testing.T) {
	body := sseBody(
		`{"type":"message_start","message":{"model":"claude-x","usage":{"input_tokens":3}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" late"}}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" late"}}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t1","name":"ls"}}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"x\":1}"}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`,
		`{"type":"message_stop"}`,
	)
	var text strings.Builder
	emit := func(e Event) {
		if e.Kind == EventTextDelta {
			text.WriteString(e.Text)
		}
	}
	msg, err := decodeStream(bytes.NewReader(body), anthropicWire{}.decoder(NameAnthropic, emit), maxEventBytes)
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 3 || msg.Content[0].Thinking != "hmm" || msg.Content[1].Text != "Hi" || msg.Content[2].Input != "{}" {
		t.Errorf("message %+v", msg.Content)
	}
	if text.String() != "Hi" {
		t.Errorf("streamed text %q, want the text of the message", text.String())
	}
}

// panicWire is a wire API whose decoder panics on the first event.
type panicWire struct{ anthropicWire }

type panicDecoder struct{ decoder }

func (panicWire) decoder(p string, emit func(Event)) decoder {
	return panicDecoder{anthropicWire{}.decoder(p, emit)}
}

func (panicDecoder) event(_, _ []byte) (bool, error) {
	panic("decoder bug")
}

// TestStreamPanicIsProviderError checks the last line of defence: a panic
// while decoding is a provider error (exit 5), not a crash.
func TestStreamPanicIsProviderError(t *testing.T) {
	srv := providertest.New()
	defer srv.Close()
	srv.Enqueue(providertest.Stream(NameAnthropic, providertest.Turn{Text: "hi"}))
	rec := &recorder{}
	p := newTestProvider(t, NameAnthropic, srv, rec)
	p.(*client).w = panicWire{}
	_, err := p.Stream(context.Background(), hello, rec.emit)
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind == KindConfig || pe.Kind == KindAuth {
		t.Fatalf("err = %#v, want a provider error of a kind that exits 5", err)
	}
	if !strings.Contains(pe.Message, "decoder bug") {
		t.Errorf("message %q does not say what went wrong", pe.Message)
	}
}

// TestEventSizeCap: a server that sends data lines and never ends the
// event, or a JSON body over the cap, fails with an error naming the limit
// and is not retried.
func TestEventSizeCap(t *testing.T) {
	line := "data: " + strings.Repeat("x", 1000) + "\n"
	endless := []byte(strings.Repeat(line, 200)) // 200 kB in one event
	for _, c := range []struct {
		name string
		resp providertest.Response
		want string
	}{
		{"sse", providertest.Response{Body: endless}, "one SSE event over the 64 KiB limit"},
		{"json", providertest.Response{Body: append([]byte(`{"a":"`), append(bytes.Repeat([]byte("y"), 100<<10), `"}`...)...)},
			"a JSON response body over the 64 KiB limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			srv.Enqueue(c.resp, c.resp)
			rec := &recorder{}
			p := newTestProvider(t, NameOpenAIChat, srv, rec)
			p.(*client).maxEvent = 64 << 10
			_, err := p.Stream(context.Background(), hello, rec.emit)
			var pe *Error
			if !errors.As(err, &pe) || pe.Kind != KindRequest || !strings.Contains(pe.Message, c.want) {
				t.Fatalf("err = %v, want a request error containing %q", err, c.want)
			}
			if len(rec.retries()) != 0 || len(srv.Requests()) != 1 {
				t.Errorf("retried %d times", len(srv.Requests())-1)
			}
		})
	}
	// Within the cap, a large event still decodes.
	d := newSSEDecoder(strings.NewReader(strings.Repeat(line, 60) + "\n"))
	d.maxEvent = 64 << 10
	if _, data, err := d.Next(); err != nil || len(data) != 60*1001-1 {
		t.Errorf("event under the cap: %d bytes, %v", len(data), err)
	}
}

// TestChatIDsUniqueInSession: a server that sends neither tool call ids
// nor a response id still gets distinct ids on every turn of a session.
func TestChatIDsUniqueInSession(t *testing.T) {
	body := sseBody(
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"ls","arguments":"{}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`[DONE]`,
	)
	srv := providertest.New()
	defer srv.Close()
	rec := &recorder{}
	p := newTestProvider(t, NameOpenAIChat, srv, rec)
	req := hello
	seen := map[string]bool{}
	for turn := range 3 {
		srv.Enqueue(providertest.Response{Body: body})
		msg, err := p.Stream(context.Background(), req, rec.emit)
		if err != nil {
			t.Fatal(err)
		}
		id := msg.ToolUses()[0].ID
		if seen[id] || id == "" || len(id) > 40 {
			t.Fatalf("turn %d: tool call id %q is empty, too long or already used", turn, id)
		}
		seen[id] = true
		req.Messages = append(req.Messages, msg, conv.Message{Role: conv.RoleUser,
			Content: []conv.Block{{Type: conv.BlockToolResult, ToolUseID: id, Content: "ok"}}})
	}
}

// TestChatLongToolID: ids over OpenAI's 40 characters are mapped the same
// way on the call and its result, in every request; others are kept.
func TestChatLongToolID(t *testing.T) {
	long := "toolu_" + strings.Repeat("0123456789", 5)
	req := Request{Model: "gpt-5", Messages: []conv.Message{
		user(conv.TextBlock("read")),
		assistant(NameAnthropic, toolUse(long, "read", `{}`), toolUse(long+"x", "read", `{}`), toolUse("call_1", "read", `{}`)),
		user(toolResult(long, "a", false), toolResult(long+"x", "b", false), toolResult("call_1", "c", false)),
	}}
	body := encodeFor(t, NameOpenAIChat, req)
	calls := gjson.GetBytes(body, `messages.#(role=="assistant").tool_calls.#.id`).Array()
	outs := gjson.GetBytes(body, `messages.#(role=="tool")#.tool_call_id`).Array()
	if len(calls) != 3 || len(outs) != 3 {
		t.Fatalf("calls %v outputs %v", calls, outs)
	}
	for i := range calls {
		if c := calls[i].String(); len(c) > 40 || c != outs[i].String() || c != fitToolID(req.Messages[1].Content[i].ID, 40, nil) {
			t.Errorf("call %d: id %q, result id %q", i, c, outs[i].String())
		}
	}
	if calls[0].String() == calls[1].String() || calls[2].String() != "call_1" {
		t.Errorf("ids %v", calls)
	}
	if again := encodeFor(t, NameOpenAIChat, req); !bytes.Equal(again, body) {
		t.Error("the projection is not deterministic")
	}
}
