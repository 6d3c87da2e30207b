package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider/providertest"
)

// fixture is one recorded response under testdata/wire.
type fixture struct {
	name     string // e.g. anthropic/parallel-tool-use
	provider string
	path     string
	sse      bool
	status   int
	header   http.Header
}

// wireProvider maps a fixture directory to the provider that speaks it.
var wireProvider = map[string]string{
	"anthropic":         NameAnthropic,
	"openai-chat":       NameOpenAIChat,
	"openai-compatible": NameOpenAIChat,
	"openai-responses":  NameOpenAI,
}

func fixtures(t testing.TB) []fixture {
	t.Helper()
	var out []fixture
	for dir, prov := range wireProvider {
		files, err := filepath.Glob(filepath.Join("testdata", "wire", dir, "*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			base := filepath.Base(f)
			if strings.HasSuffix(base, ".request.json") || strings.HasSuffix(base, ".response-headers.json") {
				continue
			}
			ext := filepath.Ext(base)
			if ext != ".sse" && ext != ".json" {
				continue
			}
			stem := strings.TrimSuffix(f, ext)
			fx := fixture{name: dir + "/" + strings.TrimSuffix(base, ext), provider: prov, path: f, sse: ext == ".sse", status: 200, header: http.Header{}}
			if b, err := os.ReadFile(stem + ".response-headers.json"); err == nil {
				var h struct {
					Status  int               `json:"status"`
					Headers map[string]string `json:"headers"`
				}
				if err := json.Unmarshal(b, &h); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				fx.status = h.Status
				for k, v := range h.Headers {
					fx.header.Set(k, v)
				}
			}
			if fx.sse {
				fx.header.Set("Content-Type", "text/event-stream")
			} else {
				fx.header.Set("Content-Type", "application/json")
			}
			out = append(out, fx)
		}
	}
	if len(out) < 30 {
		t.Fatalf("found only %d fixtures", len(out))
	}
	return out
}

// outcome is what a golden file records for one fixture.
type outcome struct {
	Message *conv.Message  `json:",omitempty"`
	Error   *Error         `json:",omitempty"`
	Events  map[string]int `json:",omitempty"`
}

var kindNames = map[EventKind]string{
	EventTextDelta: "text", EventThinkingDelta: "thinking", EventToolCallStart: "toolStart",
	EventToolCallDelta: "toolDelta", EventToolCallEnd: "toolEnd", EventUsage: "usage", EventRetry: "retry",
}

// eventLog records events and checks they agree with the final message.
type eventLog struct {
	counts map[string]int
	text   map[int]*strings.Builder
	think  map[int]*strings.Builder
	args   map[int]*strings.Builder
}

func newEventLog() *eventLog {
	return &eventLog{counts: map[string]int{}, text: map[int]*strings.Builder{}, think: map[int]*strings.Builder{}, args: map[int]*strings.Builder{}}
}

func (l *eventLog) emit(e Event) {
	l.counts[kindNames[e.Kind]]++
	add := func(m map[int]*strings.Builder) {
		if m[e.Index] == nil {
			m[e.Index] = &strings.Builder{}
		}
		m[e.Index].WriteString(e.Text)
	}
	switch e.Kind {
	case EventTextDelta:
		add(l.text)
	case EventThinkingDelta:
		add(l.think)
	case EventToolCallDelta:
		add(l.args)
	}
}

// check verifies the streamed deltas rebuild the message's blocks.
func (l *eventLog) check(t *testing.T, m conv.Message) {
	t.Helper()
	for i, b := range m.Content {
		switch b.Type {
		case conv.BlockText:
			if got := l.text[i]; got != nil && got.String() != b.Text {
				t.Errorf("block %d: text deltas %q != text %q", i, got.String(), b.Text)
			}
		case conv.BlockThinking:
			if got := l.think[i]; got != nil && got.String() != b.Thinking {
				t.Errorf("block %d: thinking deltas %q != thinking %q", i, got.String(), b.Thinking)
			}
		case conv.BlockToolUse:
			got := ""
			if l.args[i] != nil {
				got = l.args[i].String()
			}
			if strings.TrimSpace(got) != b.Input && !(got == "" && b.Input == "{}") {
				t.Errorf("block %d: argument deltas %q != input %q", i, got, b.Input)
			}
		}
	}
}

func goldenPath(name string) string {
	return filepath.Join("testdata", "golden", "decode", strings.ReplaceAll(name, "/", "__")+".json")
}

// checkGolden compares got with the golden file, or rewrites it when
// UPDATE_GOLDEN is set.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file (UPDATE_GOLDEN=1 rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func encodeOutcome(t *testing.T, o outcome) []byte {
	t.Helper()
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestConformance sends every recorded response through the fake server to
// its provider and compares the completed message (or the error) with a
// golden file. Errors are not retried here: MaxRetries is 0.
func TestConformance(t *testing.T) {
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			body, err := os.ReadFile(fx.path)
			if err != nil {
				t.Fatal(err)
			}
			srv := providertest.New()
			defer srv.Close()
			srv.Enqueue(providertest.Response{Status: fx.status, Header: fx.header, Body: body})
			p, err := New(fx.provider, Options{APIKey: "k", BaseURL: srv.URL, MaxRetries: 0})
			if err != nil {
				t.Fatal(err)
			}
			log := newEventLog()
			msg, err := p.Stream(context.Background(), Request{Messages: []conv.Message{{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("hi")}}}}, log.emit)
			o := outcome{Events: log.counts}
			if err != nil {
				var pe *Error
				if !errors.As(err, &pe) {
					t.Fatalf("error %v (%T) is not a *provider.Error", err, err)
				}
				o.Error = pe
			} else {
				o.Message = &msg
				log.check(t, msg)
				if msg.Provider != fx.provider {
					t.Errorf("Provider = %q, want %q", msg.Provider, fx.provider)
				}
			}
			checkGolden(t, goldenPath(fx.name), encodeOutcome(t, o))
		})
	}
}

// decodeAll decodes a fixture body read through r, as attempt does once the
// headers are in.
func decodeAll(provider string, sse bool, r io.Reader) (conv.Message, error) {
	p, err := New(provider, Options{})
	if err != nil {
		return conv.Message{}, err
	}
	dec := p.(*client).w.decoder(provider, func(Event) {})
	if !sse {
		b, err := io.ReadAll(r)
		if err != nil {
			return conv.Message{}, err
		}
		if err := dec.whole(b); err != nil {
			return conv.Message{}, err
		}
		return dec.message(), nil
	}
	return decodeStream(r, dec, maxEventBytes)
}

// decodeScribbled decodes like decodeStream but overwrites each event's
// name and data after the decoder has seen them, so any string the decoder
// kept without copying shows up as garbage.
func decodeScribbled(provider string, data []byte) (conv.Message, error) {
	p, err := New(provider, Options{})
	if err != nil {
		return conv.Message{}, err
	}
	dec := p.(*client).w.decoder(provider, func(Event) {})
	sse := newSSEDecoder(bytes.NewReader(data))
	for {
		name, payload, err := sse.Next()
		if err != nil {
			return conv.Message{}, &wireError{retry: true, msg: "stream ended before its terminal event"}
		}
		done, err := dec.event(name, payload)
		for i := range payload[:cap(payload)] {
			payload[:cap(payload)][i] = '#'
		}
		for i := range name {
			name[i] = '#'
		}
		if err != nil || done {
			if err != nil {
				return conv.Message{}, err
			}
			return dec.message(), nil
		}
	}
}

// splitReader returns data in two reads split at k.
type splitReader struct {
	data []byte
	k    int
	off  int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if r.off >= len(r.data) {
		return 0, io.EOF
	}
	end := len(r.data)
	if r.off < r.k {
		end = r.k
	}
	n := copy(p, r.data[r.off:end])
	r.off += n
	return n, nil
}

// TestConformanceSplit decodes every streamed fixture one byte per read and
// split in two at every byte boundary (a sample of them for the largest
// fixtures), and requires the same message each time.
func TestConformanceSplit(t *testing.T) {
	for _, fx := range fixtures(t) {
		if !fx.sse || fx.status != 200 {
			continue
		}
		t.Run(fx.name, func(t *testing.T) {
			data, err := os.ReadFile(fx.path)
			if err != nil {
				t.Fatal(err)
			}
			want, wantErr := decodeAll(fx.provider, true, bytes.NewReader(data))
			same := func(how string, got conv.Message, err error) {
				t.Helper()
				if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
					t.Fatalf("%s: error %v, want %v", how, err, wantErr)
				}
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				if !bytes.Equal(g, w) {
					t.Fatalf("%s: message differs:\n%s\nwant\n%s", how, g, w)
				}
			}
			got, err := decodeAll(fx.provider, true, iotest.OneByteReader(bytes.NewReader(data)))
			same("one byte per read", got, err)
			got, err = decodeScribbled(fx.provider, data)
			same("event buffer overwritten after each event", got, err)
			step := 1
			if testing.Short() || len(data) > 4096 {
				step = max(1, len(data)/150)
			}
			for k := 1; k < len(data); k += step {
				got, err := decodeAll(fx.provider, true, &splitReader{data: data, k: k})
				same("split at "+strconv.Itoa(k), got, err)
			}
		})
	}
}
