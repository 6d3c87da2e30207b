package provider

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
)

// wireBodies build each provider's request struct, which encoding/json
// encodes as the reference for the hand-written writer.
var wireBodies = map[string]func(Request) any{
	NameAnthropic:  func(r Request) any { return anthropicRequest(r, NameAnthropic) },
	NameOpenAI:     func(r Request) any { return responsesRequest(r) },
	NameOpenAIChat: func(r Request) any { return chatCompletionsRequest(r, NameOpenAIChat) },
}

// awkward strings exercise every escape encoding/json makes.
var awkward = []string{
	"", "plain", `quote " and \ backslash`, "<html> & 'single'", "ctl \x00\x01\x07\b\f\n\r\t\x1f\x7f end",
	"héllo wörld ✓ 日本語 🙂", "line\u2028sep\u2029par", "bad utf8 \xff\xfe and \xe2\x80 cut", "\xe2\x80\xa8",
	strings.Repeat("abcdefg\"", 9), strings.Repeat("x", 17) + "\n" + strings.Repeat("é", 9),
}

// checkSame requires the writer's body for req to be byte for byte what
// encoding/json makes of the same struct.
func checkSame(t *testing.T, name string, req Request) {
	t.Helper()
	got, err := EncodeRequest(name, req)
	if err != nil {
		t.Fatal(err)
	}
	want, err := marshal(wireBodies[name](req))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%s: body differs from encoding/json at byte %d:\ngot  %.200s\nwant %.200s", name, i, got[i:], want[i:])
	}
}

// TestWriterMatchesEncodingJSON compares every golden feature, and the
// features with awkward text everywhere, with encoding/json's output.
func TestWriterMatchesEncodingJSON(t *testing.T) {
	for _, name := range wireNames {
		for feature, req := range features(name) {
			t.Run(name+"/"+feature, func(t *testing.T) {
				checkSame(t, name, req)
				for _, s := range awkward {
					checkSame(t, name, mangle(req, s))
				}
			})
		}
		t.Run(name+"/big", func(t *testing.T) { checkSame(t, name, bigConversation(name, 3, 5000)) })
		t.Run(name+"/spaced-schema", func(t *testing.T) {
			req := features(name)["tools"]
			req.Tools = []Tool{{Name: "x", Schema: json.RawMessage(" {\n \"type\" : \"object\" ,\"properties\":{ } }\n")}, {Name: "y"}}
			checkSame(t, name, req)
		})
	}
}

// mangle returns req with s appended to every string a block carries.
func mangle(req Request, s string) Request {
	out := req
	out.Model += s
	out.Messages = nil
	for _, m := range req.Messages {
		m.Content = append([]conv.Block(nil), m.Content...)
		for i := range m.Content {
			b := &m.Content[i]
			for _, f := range []*string{&b.Text, &b.Thinking, &b.Signature, &b.Redacted, &b.ItemID, &b.ID, &b.Name, &b.ToolUseID, &b.Content} {
				if *f != "" {
					*f += s
				}
			}
		}
		out.Messages = append(out.Messages, m)
	}
	return out
}
