package jsonrpc

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/runner/tool"
)

// readAll passes the server's stdout through Lines and returns the
// lines the MCP client gets, and what awl said on stderr.
func readAll(t *testing.T, stdout string) ([]string, string) {
	t.Helper()
	stderr := &testenv.Buffer{}
	j := NewLines(io.NopCloser(strings.NewReader(stdout)), stderr, stderr)
	b, err := io.ReadAll(j)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for _, l := range lines {
		if len(l) > MaxMessage {
			t.Errorf("a line of %d bytes passed on", len(l))
		}
	}
	return lines, stderr.String()
}

// big is a text over MaxMessage whose cut points fall in escapes and in
// two-byte characters, between BEGIN and END.
func big() string {
	return "BEGIN é\n" + strings.Repeat("0123456789abcdé\"\n\\", (MaxMessage+4<<20)/20) + "END"
}

func TestBigResultIsCut(t *testing.T) {
	text := big()
	for _, c := range []struct{ name, line string }{
		// The TypeScript SDK writes the id last, the Go SDK first.
		{"id last", `{"result":{"content":[{"type":"text","text":` + quote(text) + `},{"type":"image","data":"AAAA","mimeType":"image/png"}],"isError":true},"jsonrpc":"2.0","id":7}`},
		{"id first", `{"jsonrpc":"2.0","id":"call-7","result":{"content":[{"type":"text","text":"first"},{"type":"text","text":` + quote(text) + `}],"structuredContent":{"id":99,"text":"x"}}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			after := `{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"next"}]}}`
			lines, stderr := readAll(t, c.line+"\n"+after+"\n")
			if len(lines) != 2 || lines[1] != after {
				t.Fatalf("got %d lines; the next message must pass as it is", len(lines))
			}
			var msg struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Result  struct {
					Content []struct{ Type, Text string }
					IsError bool
				}
			}
			if err := json.Unmarshal([]byte(lines[0]), &msg); err != nil {
				t.Fatalf("the replacement is not JSON: %v", err)
			}
			wantID := "7"
			if c.name == "id first" {
				wantID = `"call-7"`
			}
			if msg.JSONRPC != "2.0" || string(msg.ID) != wantID || len(msg.Result.Content) != 1 {
				t.Fatalf("replacement %s", lines[0][:min(len(lines[0]), 300)])
			}
			got := msg.Result.Content[0].Text
			if msg.Result.IsError != (c.name == "id last") {
				t.Errorf("isError %v", msg.Result.IsError)
			}
			wantHead := "BEGIN é\n"
			if c.name == "id first" {
				wantHead = "first\nBEGIN é\n"
			}
			if !strings.HasPrefix(got, wantHead) || !strings.HasSuffix(got, "\\END") || !utf8.ValidString(got) || strings.Contains(got, "\uFFFD") {
				t.Errorf("text head %q, tail %q", got[:40], got[len(got)-40:])
			}
			if len(got) > tool.OutputHeadBytes+tool.OutputTailBytes {
				t.Errorf("text of %d bytes: the tool result would be cut again", len(got))
			}
			if !strings.Contains(got, "MiB result, over the 16 MiB a stdio message may hold: cut as it was read;") {
				t.Errorf("no note in %q", got[headKeep-100:headKeep+400])
			}
			if strings.Contains(got, "not text") != (c.name == "id last") {
				t.Errorf("the image item: %q", got[headKeep-100:headKeep+400])
			}
			if !strings.Contains(stderr, "MiB result cut to its text's first and last") {
				t.Errorf("stderr: %q", stderr)
			}
		})
	}
}

func TestBigErrorAndNotification(t *testing.T) {
	text := big()
	errLine := `{"jsonrpc":"2.0","error":{"code":-32000,"message":` + quote(text) + `},"id":3}`
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":` + quote(text) + `}}`
	after := `{"jsonrpc":"2.0","id":4,"result":{}}`
	lines, stderr := readAll(t, errLine+"\n"+note+"\n"+after+"\n")
	if len(lines) != 2 || lines[1] != after {
		t.Fatalf("got %d lines: the notification must be dropped, the next message passed", len(lines))
	}
	var msg struct {
		ID    int
		Error struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal([]byte(lines[0]), &msg); err != nil || msg.ID != 3 || msg.Error.Code != -32000 || !strings.HasPrefix(msg.Error.Message, "BEGIN é\n") || !strings.HasSuffix(msg.Error.Message, "error response, cut]") || len(msg.Error.Message) > 2048 {
		t.Errorf("error replacement %v: %+v", err, msg)
	}
	if !strings.Contains(stderr, "error response cut") || !strings.Contains(stderr, "message that is not a response dropped") {
		t.Errorf("stderr: %q", stderr)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
