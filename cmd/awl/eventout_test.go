package main

import (
	"bytes"
	"testing"
)

// The event writers give the same lines as a plain write of the joined
// parts; --output json drops everything but the result on its head alone,
// and ndjson writes a large entry from its parts, a small one in one Write.
func TestEventWritersParts(t *testing.T) {
	big := bytes.Repeat([]byte("x"), joinBelow)
	for _, parts := range [][][]byte{
		{[]byte(`{"type":"entry","entry":`), []byte(`{"type":"message"}`), []byte("}\n")},
		{[]byte(`{"type":"entry","entry":`), append(append([]byte(`{"t":"`), big...), `"}`...), []byte("}\n")},
		{[]byte(`{"type":"result","exit_code":0}` + "\n")},
	} {
		line := bytes.Join(parts, nil)
		var w countWriter
		if err := (lines{&w}).WriteParts(parts...); err != nil || !bytes.Equal(w.b.Bytes(), line) {
			t.Errorf("ndjson: %q, %v", w.b.Bytes(), err)
		}
		want := 1
		if len(line) >= joinBelow {
			want = len(parts)
		}
		if w.writes != want {
			t.Errorf("ndjson, %d bytes: %d writes, want %d", len(line), w.writes, want)
		}
		var r countWriter
		if err := (resultOnly{&r}).WriteParts(parts...); err != nil {
			t.Fatal(err)
		}
		if isResult := bytes.HasPrefix(line, resultPrefix); isResult != bytes.Equal(r.b.Bytes(), line) || !isResult && r.b.Len() > 0 {
			t.Errorf("json: %q passed for %.40q", r.b.Bytes(), line)
		}
	}
}

type countWriter struct {
	b      bytes.Buffer
	writes int
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.writes++
	return c.b.Write(p)
}
