package event

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

func TestEchoLineReplacesImageBytesWithMetadata(t *testing.T) {
	raw := []byte("\x89PNG\r\n\x1a\nfake pixels")
	data := base64.StdEncoding.EncodeToString(raw)
	sum := sha256.Sum256(raw)
	line := []byte(`{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-11-29T12:00:00.000Z","message":{"role":"user","content":[` +
		`{"type":"text","text":"look"},{"type":"image","mimeType":"image/png","data":"` + data + `"},` +
		`{"type":"toolResult","toolUseId":"t1","content":"ok","attachments":[{"type":"image","mimeType":"image/png","data":"` + data + `"}]}]}}`)
	out := EchoLine(line)
	if bytes.Contains(out, []byte(data)) {
		t.Fatalf("echo still carries the image bytes: %s", out)
	}
	for _, p := range []string{"message.content.1", "message.content.2.attachments.0"} {
		g := gjson.GetBytes(out, p)
		if g.Get("size").Int() != int64(len(raw)) || g.Get("sha256").String() != hex.EncodeToString(sum[:]) || g.Get("mimeType").String() != "image/png" {
			t.Errorf("%s = %s, want size %d and sha256", p, g.Raw, len(raw))
		}
		if g.Get("data").Exists() {
			t.Errorf("%s still has data", p)
		}
	}
	if gjson.GetBytes(out, "message.content.0.text").String() != "look" {
		t.Errorf("text block changed: %s", out)
	}
	plain := []byte(`{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"no images"}]}}`)
	if got := EchoLine(plain); !bytes.Equal(got, plain) {
		t.Errorf("a line without images changed: %s", got)
	}
}

func TestEmitterWritesWholeLinesAndSurvivesAClosedPipe(t *testing.T) {
	var buf bytes.Buffer
	now := func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 5e6, time.UTC) }
	em := NewEmitter(&buf, now)
	em.Emit(Retry{Base: em.Stamp("retry", "sid"), Attempt: 1, Status: 529, WaitMS: 10, Error: "overloaded"})
	want := `{"type":"retry","session_id":"sid","timestamp":"2026-11-29T12:00:00.005Z","attempt":1,"status":529,"wait_ms":10,"error":"overloaded"}` + "\n"
	if buf.String() != want {
		t.Fatalf("got %q\nwant %q", buf.String(), want)
	}
	fw := &failWriter{}
	em = NewEmitter(fw, now)
	em.Emit(Retry{Base: em.Stamp("retry", "sid")})
	em.Emit(Retry{Base: em.Stamp("retry", "sid")})
	if fw.calls != 1 || em.Err() == nil || !strings.Contains(em.Err().Error(), "closed") {
		t.Fatalf("calls=%d err=%v: want one failed write remembered", fw.calls, em.Err())
	}
}

type failWriter struct{ calls int }

func (f *failWriter) Write(p []byte) (int, error) {
	f.calls++
	return 0, errClosed
}

var errClosed = &closedErr{}

type closedErr struct{}

func (*closedErr) Error() string { return "pipe closed" }

// TestEventsNotHTMLEscaped: an entry event carries its session line's text
// as the session has it, "<stdin>" and "&" included, and so do the other
// events.
func TestEventsNotHTMLEscaped(t *testing.T) {
	line := []byte(`{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"why?\n\n<stdin>\na && b > c\n</stdin>"}]}}`)
	var buf bytes.Buffer
	em := NewEmitter(&buf, func() time.Time { return time.Unix(0, 0) })
	em.Emit(Entry{Base: em.Stamp("entry", "s"), Entry: EchoLine(line)})
	em.Emit(Result{Base: em.Stamp("result", "s"), Text: "<b>done</b> & dusted"})
	out := buf.String()
	if strings.Contains(out, `\u003c`) || strings.Contains(out, `\u0026`) || strings.Contains(out, `\u003e`) {
		t.Fatalf("events are HTML-escaped:\n%s", out)
	}
	first, rest, _ := strings.Cut(out, "\n")
	if !strings.Contains(first, string(line)) {
		t.Errorf("entry event does not carry the session line byte for byte:\n%s\n%s", first, line)
	}
	if !strings.Contains(rest, `"text":"<b>done</b> & dusted"`) || !strings.HasSuffix(rest, "}\n") || strings.Count(out, "\n") != 2 {
		t.Errorf("result event = %q", rest)
	}
}

// TestSetRedactCoversEveryEvent: with a redactor set, every string of
// every event written is redacted (a tool name, a call id, a notice), and
// a stored entry's line, redacted before it was stored, is written as it
// is, byte for byte.
func TestSetRedactCoversEveryEvent(t *testing.T) {
	const key = "sk-SENTINEL-abcdefgh"
	var out bytes.Buffer
	em := NewEmitter(&out, func() time.Time { return time.Unix(0, 0) })
	em.SetRedact(func(s string) string { return strings.ReplaceAll(s, key, "[redacted:KEY]") })
	em.Emit(ToolStart{Base: em.Stamp("tool_start", "s"), Name: key, CallID: "c-" + key, Input: []byte(`{"a":"` + key + `"}`)})
	em.Emit(Notice{Base: em.Stamp("notice", "s"), Message: "saw " + key})
	stored := `{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-11-29T12:00:00.000Z","note":"` + key + `"}`
	em.Emit(Entry{Base: em.Stamp("entry", "s"), Entry: []byte(stored), Stored: true})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), out.String())
	}
	for _, l := range lines[:2] {
		if strings.Contains(l, key) || !strings.Contains(l, "[redacted:KEY]") {
			t.Errorf("not redacted: %s", l)
		}
	}
	if gjson.Get(lines[0], "name").String() != "[redacted:KEY]" || gjson.Get(lines[0], "call_id").String() != "c-[redacted:KEY]" {
		t.Errorf("tool_start: %s", lines[0])
	}
	if !strings.Contains(lines[2], stored) {
		t.Errorf("the stored entry's line was changed: %s", lines[2])
	}
}
