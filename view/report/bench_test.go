package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/awlrun/awl/internal/benchtext"
	"github.com/awlrun/awl/internal/cputime"
)

// writeBigSession writes a session file of at least size bytes in the mix
// of a coding agent: per round an assistant message (a short text, one bash
// call) and its ~20 KiB multi-line tool output; a prompt every 20 rounds.
func writeBigSession(tb testing.TB, size int64) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "big.jsonl")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	rng := rand.New(rand.NewPCG(1, 2))
	line := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(b)
		w.WriteByte('\n')
	}
	line(map[string]any{"type": "session", "version": 1, "id": "019dc5ba-53f6-71a5-ab8f-b1f8709c2572", "timestamp": "2026-12-01T10:00:00.000Z", "cwd": "/ci", "provider": "anthropic", "model": "claude-sonnet-4-5"})
	parent := any(nil)
	n := 0
	entry := func(m map[string]any) {
		n++
		id := fmt.Sprintf("%08x", n)
		m["id"], m["parentId"], m["timestamp"] = id, parent, "2026-12-01T10:00:00.000Z"
		line(m)
		parent = id
	}
	var written int64
	for round := 0; written < size; round++ {
		if round%20 == 0 {
			entry(map[string]any{"type": "message", "provider": "anthropic", "model": "claude-sonnet-4-5",
				"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": benchtext.Code(rng, 300, 80)}}}})
		}
		call := fmt.Sprintf("toolu_%08d", round)
		entry(map[string]any{"type": "message", "message": map[string]any{"role": "assistant", "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "toolUse",
			"content": []any{map[string]any{"type": "text", "text": benchtext.Code(rng, 150, 200)},
				map[string]any{"type": "toolUse", "id": call, "name": "bash", "input": `{"command":"go test ./... 2>&1 | tail -n 400"}`}},
			"usage": map[string]any{"input": 1000 + round, "output": 85, "cacheRead": 900 * round}, "costUsd": 0.01}})
		entry(map[string]any{"type": "message", "provider": "anthropic", "model": "claude-sonnet-4-5",
			"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "toolResult", "toolUseId": call, "content": benchtext.Code(rng, 20<<10, 100)}}}})
		w.Flush()
		st, _ := f.Stat()
		written = st.Size()
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	return path
}

// BenchmarkReport50MB is `awl sessions report` of a 50 MB session: loading
// it and writing the page (target: under 5 s; docs/performance.md).
func BenchmarkReport50MB(b *testing.B) {
	path := writeBigSession(b, 50<<20)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	cpu0 := cputime.Process()
	for b.Loop() {
		if err := writePath(io.Discard, path); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time, beside the wall time that on a shared machine also counts
	// the wait for a core.
	b.ReportMetric((cputime.Process()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// A large session's page stays usable: every long output is cut, so what
// the browser lays out (outside the closed "show all" parts) is a small
// share of the session.
func TestLargeSessionIsCut(t *testing.T) {
	path := writeBigSession(t, 2<<20)
	var page countingWriter
	if err := writePath(&page, path); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if page.n < st.Size()/2 || page.n > 3*st.Size() {
		t.Errorf("page %d bytes for a %d-byte session", page.n, st.Size())
	}
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
