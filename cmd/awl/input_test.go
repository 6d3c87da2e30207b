package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/runner/event"
)

// onePixelPNG is a 1×1 PNG, in base64.
const onePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

// TestInputSchemaAgrees holds `awl schema input` to what the reader
// takes: every line the schema accepts is taken, every line it refuses is
// an error event.
func TestInputSchemaAgrees(t *testing.T) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(inputSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("input.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("input.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`{"type":"user","text":"hello"}`,
		`{"type":"user","text":"hello","id":"q1"}`,
		`{"type":"user","text":" \t\n"}`,
		`{"type":"user","text":""}`,
		`{"type":"user"}`,
		`{"type":"user","text":7}`,
		`{"type":"user","text":"hi","id":7}`,
		`{"type":"user","text":"hi","colour":"red"}`,
		`{"type":"user","text":"hi","images":[]}`,
		`{"type":"user","images":[]}`,
		`{"type":"user","images":[{"data":"PNG"}]}`,
		`{"type":"user","text":"hi","images":[{"data":"PNG","mimeType":"image/png"}]}`,
		`{"type":"user","text":"hi","images":[{"data":"PNG","mimeType":"image/bmp"}]}`,
		`{"type":"user","text":"hi","images":[{"data":"PNG","path":"a.png"}]}`,
		`{"type":"user","text":"hi","images":[{}]}`,
		`{"type":"user","text":"hi","images":[{"path":""}]}`,
		`{"type":"user","text":"hi","images":[{"data":"PNG","colour":"red"}]}`,
		`{"type":"user","text":"hi","images":{"data":"PNG"}}`,
		`{"type":"user","text":" ","images":[{"data":"PNG"}]}`,
		`{"type":"user","images":[` + strings.Repeat(`{"data":"PNG"},`, 20) + `{"data":"PNG"}]}`,
		`{"type":"end"}`,
		`{"type":"end","id":"e"}`,
		`{"type":"end","text":"bye"}`,
		`{"type":"interrupt","id":"i"}`,
		`{"type":"interrupt","text":"stop"}`,
		`{"type":"Interrupt"}`,
		`{"type":""}`,
		`{}`,
		`[]`,
		`"user"`,
		`{"type":"user","text":"a"} {"type":"end"}`,
		`{"type":"user","text":"a"`,
		`null`,
	} {
		line := strings.ReplaceAll(line, `"PNG"`, `"`+onePixelPNG+`"`)
		var v any
		schemaOK := json.Unmarshal([]byte(line), &v) == nil && sch.Validate(v) == nil
		var out bytes.Buffer
		in := startInput(strings.NewReader(line+"\n"), event.NewEmitter(&out, nil), false, t.TempDir())
		in.Start("s")
		drainInput(t, in)
		in.Stop()
		taken := !strings.Contains(out.String(), `"type":"error"`)
		if taken != schemaOK {
			t.Errorf("%s: the schema says valid=%v, the reader took it=%v (%s)", line, schemaOK, taken, out.String())
		}
	}
}

// drainInput takes the input's prompts until its queue is closed: the
// reader has then read, and reported, every line.
func drainInput(t *testing.T, in *ndjsonInput) {
	t.Helper()
	for {
		_, ok, err := in.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return
		}
	}
}

// TestInputSilentAfterStop: once the run has stopped the input (before
// its result event), nothing the input reads is reported: not a refused
// line, not an interrupt with no turn, not an accepted end, so the result
// stays the last event. Before Stop the same lines are reported.
func TestInputSilentAfterStop(t *testing.T) {
	pr, pw := io.Pipe()
	var out testenv.Buffer
	in := startInput(pr, event.NewEmitter(&out, nil), false, t.TempDir())
	in.Start("s")
	write := func(line string) {
		t.Helper()
		if _, err := io.WriteString(pw, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// Before Stop: a bad line is an error event, and a user message is
	// queued (the reader has then read past the bad line).
	write(`not json`)
	write(`{"type":"user","text":"go on"}`)
	if _, ok, err := in.Next(context.Background()); !ok || err != nil {
		t.Fatalf("the user message: %v %v", ok, err)
	}
	before := out.String()
	if strings.Count(before, "\n") != 1 || !strings.Contains(before, `"type":"error"`) {
		t.Fatalf("before Stop: %q", before)
	}
	in.Stop()
	write(`still not json`)
	write(`{"type":"interrupt","id":"i1"}`)
	write(`{"type":"user","text":"x","id":"u1"}`)
	write(`{"type":"end","id":"e1"}`)
	pw.Close()
	drainInput(t, in)
	if got := out.String(); got != before {
		t.Errorf("events after Stop:\n%s", strings.TrimPrefix(got, before))
	}
}
