package cloud

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/awlrun/awl/provider/cloud/cloudtest"
)

// FuzzBedrockEventStream: whatever bytes come as Bedrock's event stream,
// decoding them neither panics nor writes more than it read allows: it
// ends in io.EOF or an error, and every event it gives is a complete
// server-sent event.
func FuzzBedrockEventStream(f *testing.F) {
	sse, err := os.ReadFile(filepath.Join("..", "testdata", "wire", "anthropic", "thinking-text.sse"))
	if err != nil {
		f.Fatal(err)
	}
	good := bytes.Join(cloudtest.Frames(sse), nil)
	f.Add(good)
	f.Add(good[:len(good)-5])
	f.Add(append(append([]byte(nil), good[:40]...), 0xff))
	f.Add(cloudtest.Exception("throttlingException", "slow down"))
	f.Add([]byte{0, 0, 0, 16, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := &eventStreamSSE{src: bufio.NewReader(bytes.NewReader(in)), dec: eventstream.NewDecoder()}
		out, _ := io.ReadAll(io.LimitReader(r, 8<<20))
		if len(out) > 8*len(in)+256 {
			t.Fatalf("%d bytes out of %d in", len(out), len(in))
		}
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n\n")) {
			t.Fatalf("an event cut short: %q", out[max(0, len(out)-80):])
		}
	})
}
