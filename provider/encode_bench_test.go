package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
)

// bigConversation is a ~100 MB tool loop: rounds of an assistant message
// (a short text and one tool call) and a tool result of resultSize bytes of
// multi-line output with quotes, tabs and some non-ASCII text, as a
// resumed long session is.
func bigConversation(provider string, rounds, resultSize int) Request {
	var sb strings.Builder
	for i := 0; sb.Len() < resultSize; i++ {
		fmt.Fprintf(&sb, "%06d\tfunc main() { fmt.Println(\"héllo, wörld\") } // <tag> & more text to fill the line\n", i)
	}
	out := sb.String()[:resultSize]
	msgs := []conv.Message{sys("You are terse."), user(conv.TextBlock("refactor the package"))}
	for i := range rounds {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs,
			assistant(provider, conv.TextBlock("Reading the next file."), toolUse(id, "read", fmt.Sprintf(`{"path":"file%d.go"}`, i))),
			user(toolResult(id, out, false)))
	}
	return Request{Model: "model-x", Tools: testTools, Messages: msgs}
}

// BenchmarkEncodeRequest encodes a 100 MB conversation (2,000 tool results of
// 50 KB), as every turn of a resumed long session does.
func BenchmarkEncodeRequest(b *testing.B) {
	for _, name := range wireNames {
		b.Run(name, func(b *testing.B) {
			req := bigConversation(name, 2000, 50_000)
			body, err := EncodeRequest(name, req)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := EncodeRequest(name, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
