//go:build unix

package projection

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/internal/benchtext"
	"github.com/awlrun/awl/internal/cputime"
	"github.com/awlrun/awl/session"
)

// BenchmarkProjectCompacted measures what a resume of a long, compacted
// session costs before its first request: opening the file (lock, read,
// parse every line) and projecting the active path into request messages.
// The session has 100k entries, one compaction in the middle and three
// prune boundaries (one before the compaction, two after), so the
// projection skips what the compaction replaced and stubs the pruned tool
// results. MB/s is of session file, comparable with the session package's
// BenchmarkOpen. Sub-benchmarks:
//
//   - resume: session.Open, then Project of the active path;
//   - open: session.Open, then the plain conversation, as BenchmarkOpen
//     does, on the same file: the difference is the projection's cost.
//
// cpu-MB/s is MB of file per second of this process's CPU time, the
// collector's included: on a shared machine, wall time also counts the
// wait for a core.
//
// Run each sub-benchmark in a process of its own, as BenchmarkOpen/100k
// runs alone: the first rounds in a process pay for growing the heap
// (page faults), which would count against whichever runs first.
func BenchmarkProjectCompacted(b *testing.B) {
	run := func(b *testing.B, open func(path string) int, messages func(compactedShape) int) {
		// The file is made for each sub-benchmark and its bytes dropped
		// before timing: a heap holding them grows the collector's goal,
		// and each round would touch that much more fresh memory.
		data, want := compactedSession(100_000, 1)
		path := filepath.Join(b.TempDir(), "s.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			b.Fatal(err)
		}
		size, n := int64(len(data)), messages(want)
		data = nil
		b.SetBytes(size)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.ResetTimer()
		cpu0 := cputime.Process()
		for b.Loop() {
			if got := open(path); got != n {
				b.Fatalf("%d messages, want %d", got, n)
			}
		}
		b.StopTimer()
		cpu := cputime.Process() - cpu0
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(size), "alloc/file")
		b.ReportMetric(float64(size)/1e6, "file-MB")
		b.ReportMetric(float64(size)*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
	}
	b.Run("resume", func(b *testing.B) {
		run(b, func(path string) int {
			s, err := session.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			return len(Project(s.ActivePath()))
		}, func(w compactedShape) int { return w.messages })
	})
	b.Run("open", func(b *testing.B) {
		run(b, func(path string) int {
			s, err := session.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			return len(s.Conversation())
		}, func(w compactedShape) int { return w.all })
	})
}

// TestCompactedSessionProjects checks the benchmark's session: it opens,
// its active path has every entry, and the projection starts with the
// context rebuilt after the compaction, then the summary, holds the
// expected number of messages, and stubs exactly the large results before
// the last prune boundary.
func TestCompactedSessionProjects(t *testing.T) {
	data, want := compactedSession(6_000, 2)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := len(s.ActivePath()); got != want.entries || got < 6_000 {
		t.Fatalf("active path has %d entries, want %d (at least 6000)", got, want.entries)
	}
	msgs := Project(s.ActivePath())
	if len(msgs) != want.messages {
		t.Fatalf("projected %d messages, want %d", len(msgs), want.messages)
	}
	if msgs[0].Role != "system" || !IsSummary(msgs[2].Content[0].Text) {
		t.Errorf("projection starts %s, %s, %.40q; want the system prompt, the context and the summary", msgs[0].Role, msgs[1].Role, msgs[2].Content[0].Text)
	}
	stubs := 0
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type == "toolResult" && strings.HasPrefix(b.Content, "[output of ") {
				stubs++
			}
		}
	}
	if stubs != want.stubs || stubs == 0 {
		t.Errorf("%d stubs, want %d", stubs, want.stubs)
	}
}

// compactedShape is what projecting a compactedSession must give.
type compactedShape struct {
	entries  int // entries after the header
	all      int // message entries
	messages int // messages in the projection
	stubs    int // tool results shown as stubs
}

// compactedSession returns a session file of about n entries in the mix of a
// long coding-agent run, and the shape of its projection. It opens with
// the system prompt, the context and a turnContext; each round is an
// assistant message (thinking with a signature half of the time, a short
// text, one tool call) and the tool's result, 100 bytes to 40 KB of
// code-like lines, or now and then an image; every 40 rounds the model
// ends its turn and a new prompt comes, with its turnContext. Halfway
// there is a compaction (summary, rebuilt context, turnContext), and
// prune entries at 30%, 70% and 90%. Lines are written as the format
// specifies them (docs/session-format.md), field order included.
func compactedSession(n int, seed uint64) ([]byte, compactedShape) {
	rng := rand.New(rand.NewPCG(seed, 17))
	w := &sessionWriter{t0: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	w.buf = fmt.Appendf(make([]byte, 0, n*2048), `{"type":"session","version":1,"id":"019dc5ba-53f6-71a5-ab8f-%012x","timestamp":"2026-12-01T09:00:00.000Z","cwd":"/home/ci/repo","provider":"anthropic","model":"claude-sonnet-4-5"}`+"\n", seed)

	// The text of the session package's BenchmarkOpen, so that the two
	// decode text of the same kind and compare.
	text := func(size, lineLen int) string { return benchtext.Code(rng, size, lineLen) }
	resultSize := func() int {
		switch p := rng.IntN(100); {
		case p < 50:
			return 100 + rng.IntN(900)
		case p < 85:
			return 1024 + rng.IntN(3*1024)
		case p < 98:
			return 4096 + rng.IntN(4096)
		default:
			return 16384 + rng.IntN(24576)
		}
	}
	image := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x89, 'P', 'N', 'G', 1, 2, 3}, 400))
	sig := strings.Repeat("EqQBCkgIBxABGAIiQJ5", 12)

	var shape compactedShape
	compactAt, pruneAt := n/2, []int{n * 3 / 10, n * 7 / 10, n * 9 / 10}
	keptFrom, compacted := "", false
	lastResult := ""
	var assistants []string   // ids of the assistant messages with a tool call
	var pendingStubs []string // ids of results over 1 KiB, in order
	stubbed := map[string]bool{}
	writeContext := func() {
		w.message(`{"role":"system","content":[{"type":"text","text":`+quote(text(3000, 100))+`}]}`, false)
		w.message(`{"role":"user","content":[{"type":"text","text":"<environment_context>\n  <cwd>/home/ci/repo</cwd>\n  <shell>bash</shell>\n  <current_date>2026-12-01</current_date>\n</environment_context>"}]}`, true)
		w.other("turnContext", `"cwd":"/home/ci/repo","shell":"bash","date":"2026-12-01","system":"ee2e8c73c8564b6a159a30d2a3bdc0ab904d3f2b3e932510d537558675aacead","toolPolicy":"4759a5025094fb0b1e39510f361c62cfe4d3f3e268368af32a92f43349c71731"`)
	}
	writeContext()
	round := 0
	for w.count < n {
		switch {
		case !compacted && w.count >= compactAt:
			// The kept messages: the last six rounds.
			keptFrom = assistants[len(assistants)-6]
			w.other("compaction", `"summary":`+quote(text(2500, 90))+`,"firstKeptEntryId":"`+keptFrom+`","tokensBefore":160000,"tokensAfter":31000,"provider":"anthropic","model":"claude-sonnet-4-5","reason":"threshold","usage":{"input":1200,"output":900,"cacheRead":158000,"cacheWrite":0},"costUsd":0.064500`)
			compacted = true
			writeContext()
			continue
		case len(pruneAt) > 0 && w.count >= pruneAt[0]:
			w.other("prune", `"upToId":"`+lastResult+`","tokensBefore":121000,"tokensAfter":64000`)
			for _, id := range pendingStubs {
				stubbed[id] = true
			}
			pendingStubs = pendingStubs[:0]
			pruneAt = pruneAt[1:]
			continue
		case round%40 == 39:
			w.message(`{"role":"assistant","content":[{"type":"text","text":`+quote(text(400, 120))+`}],"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"stop","usage":{"input":12,"output":300,"cacheRead":90000},"costUsd":0.031230}`, false)
			w.message(`{"role":"user","content":[{"type":"text","text":`+quote(text(200, 80))+`}]}`, true)
			w.other("turnContext", `"cwd":"/home/ci/repo","shell":"bash","date":"2026-12-01","system":"ee2e8c73c8564b6a159a30d2a3bdc0ab904d3f2b3e932510d537558675aacead","toolPolicy":"4759a5025094fb0b1e39510f361c62cfe4d3f3e268368af32a92f43349c71731"`)
			round++
			continue
		}
		call := fmt.Sprintf("toolu_%020d", round)
		var think string
		if rng.IntN(2) == 0 {
			think = `{"type":"thinking","thinking":` + quote(text(300, 100)) + `,"signature":"` + sig + `"},`
		}
		var input string
		switch round % 4 {
		case 0:
			input = fmt.Sprintf(`{"command":"go test -run Test%d ./..."}`, round)
		case 1:
			input = fmt.Sprintf(`{"path":"internal/pkg%d/file.go"}`, round%97)
		case 2:
			input = fmt.Sprintf(`{"pattern":"func %s","path":"."}`, benchtext.Words[round%len(benchtext.Words)])
		default:
			input = `{"path":"shot.png"}`
		}
		name := [...]string{"bash", "read", "grep", "view_image"}[round%4]
		a := w.message(`{"role":"assistant","content":[`+think+`{"type":"text","text":`+quote(text(120, 200))+`},{"type":"toolUse","id":"`+call+`","name":"`+name+`","input":`+quote(input)+`}],"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"toolUse","usage":{"input":8,"output":85,"cacheRead":`+fmt.Sprint(1000+round)+`},"costUsd":0.001620}`, false)
		assistants = append(assistants, a)
		var result string
		large := true // over 1 KiB, or an image: pruning stubs it
		if name == "view_image" && round%20 == 3 {
			result = `{"type":"toolResult","toolUseId":"` + call + `","content":"image/png 640x480","attachments":[{"type":"image","mimeType":"image/png","data":"` + image + `"}]}`
		} else {
			out := text(resultSize(), 60)
			large = len(out) > 1024
			result = `{"type":"toolResult","toolUseId":"` + call + `","content":` + quote(out) + `}`
		}
		lastResult = w.message(`{"role":"user","content":[`+result+`]}`, true)
		if large {
			pendingStubs = append(pendingStubs, lastResult)
		}
		round++
	}

	// The projection: the rebuilt context (2), the summary, the kept
	// messages, and every message after the baseline that follows the
	// compaction.
	shape.messages = 3
	inKept, afterBase, seenComp := false, false, false
	for _, e := range w.entries {
		switch {
		case e.typ == "compaction":
			seenComp, inKept = true, false
		case seenComp && !afterBase && e.typ == "turnContext":
			afterBase = true
		case e.id == keptFrom:
			inKept = true
		}
		if e.typ == "message" {
			shape.all++
		}
		if e.typ != "message" || !(inKept || afterBase) {
			continue
		}
		shape.messages++
		if stubbed[e.id] {
			shape.stubs++
		}
	}
	shape.entries = w.count
	return w.buf, shape
}

// sessionWriter appends entries to a session file, chaining parentId.
type sessionWriter struct {
	buf     []byte
	t0      time.Time
	count   int
	parent  string
	entries []writtenEntry
}

type writtenEntry struct{ typ, id string }

// base writes the members every entry has and returns the entry's id.
func (w *sessionWriter) base(typ string) string {
	w.count++
	id := fmt.Sprintf("%08x", w.count)
	parent := "null"
	if w.parent != "" {
		parent = `"` + w.parent + `"`
	}
	ts := w.t0.Add(time.Duration(w.count) * 100 * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
	w.buf = fmt.Appendf(w.buf, `{"type":"%s","id":"%s","parentId":%s,"timestamp":"%s"`, typ, id, parent, ts)
	w.parent = id
	w.entries = append(w.entries, writtenEntry{typ, id})
	return id
}

// message writes a message entry; a user message carries the request's
// provider and model.
func (w *sessionWriter) message(msg string, user bool) string {
	id := w.base("message")
	if user {
		w.buf = append(w.buf, `,"provider":"anthropic","model":"claude-sonnet-4-5"`...)
	}
	w.buf = append(append(append(w.buf, `,"message":`...), msg...), "}\n"...)
	return id
}

// other writes an entry of another type with the given members.
func (w *sessionWriter) other(typ, members string) string {
	id := w.base(typ)
	w.buf = append(append(append(w.buf, ','), members...), "}\n"...)
	return id
}

// quote is s as a JSON string, < > & unescaped as awl writes them.
func quote(s string) string {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(sb.String(), "\n")
}
