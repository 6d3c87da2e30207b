package session

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/internal/benchtext"
	"github.com/awlrun/awl/internal/cputime"
)

// realisticSession returns the bytes of a session file of about n entries
// in the mix of a coding agent: every round an assistant message (thinking
// with a signature half of the time, a short text, one tool call) and a
// user message with the tool's ~2 KiB multi-line output; a human prompt
// every 20 rounds. Lines are made by the real encoder.
func realisticSession(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 2))
	t0 := time.Date(2026, 4, 25, 14, 0, 0, 0, time.UTC)
	id := fmt.Sprintf("019dc5ba-53f6-71a5-ab8f-%012x", seed)
	h := Header{Version: 1, ID: id, Timestamp: t0, Cwd: "/Users/travis/Code/awl", Provider: "anthropic", Model: "claude-sonnet-4-20250514"}
	buf := append(appendHeader(nil, &h), '\n')
	word := func() string { return benchtext.Word(rng) }
	text := func(size, lineLen int) string { return benchtext.Code(rng, size, lineLen) }
	sig := strings.Repeat("EqQBCkgIBxABGAIiQJ5", 12)
	parent := ""
	for i := 0; i < n; i++ {
		e := Entry{Type: TypeMessage, ID: fmt.Sprintf("%08x", i+1), ParentID: parent, Timestamp: t0.Add(time.Duration(i) * time.Second)}
		switch {
		case i%41 == 0:
			e.Provider, e.Model = "anthropic", "claude-sonnet-4-20250514"
			e.Message = &conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock(text(200, 80))}}
		case i%2 == 1:
			m := &conv.Message{Role: conv.RoleAssistant, Provider: "anthropic", Model: "claude-sonnet-4-20250514",
				StopReason: conv.StopToolUse, Usage: &conv.Usage{Input: int64(1000 + i), Output: 85, CacheRead: int64(900 + i)}}
			if rng.IntN(2) == 0 {
				m.Content = append(m.Content, conv.Block{Type: conv.BlockThinking, Thinking: text(300, 100), Signature: sig})
			}
			m.Content = append(m.Content, conv.TextBlock(text(120, 200)),
				conv.Block{Type: conv.BlockToolUse, ID: fmt.Sprintf("toolu_%020d", i), Name: "bash",
					Input: fmt.Sprintf(`{"command":"grep -rn \"%s\" --include=*.go .","timeout":60}`, word())})
			e.Message = m
		default:
			e.Provider, e.Model = "anthropic", "claude-sonnet-4-20250514"
			e.Message = &conv.Message{Role: conv.RoleUser, Content: []conv.Block{
				{Type: conv.BlockToolResult, ToolUseID: fmt.Sprintf("toolu_%020d", i-1), Content: text(2048, 60)}}}
		}
		var err error
		if buf, err = appendEntry(buf, &e, nil); err != nil {
			panic(err)
		}
		buf = append(buf, '\n')
		parent = e.ID
	}
	return buf
}

func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{300, 2048} {
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			st := testStore(b)
			s, err := st.Create("/bench", "p", "m")
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			e := Entry{Provider: "p", Model: "m", Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{
				{Type: conv.BlockToolResult, ToolUseID: "t", Content: strings.Repeat("output line\n", size/12)}}}}
			b.SetBytes(int64(size))
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.Append(e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOpen opens (lock, read, parse, recover-check) and rebuilds the
// conversation. MB/s is of session file, and cpu-MB/s the same per second
// of CPU time; alloc/file is the bytes allocated
// per open divided by the file's size; live/file is what stays on the heap
// after a GC while the session and its conversation are in use (the memory
// a resumed run holds), divided by the file's size.
func BenchmarkOpen(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			data := realisticSession(n, 1)
			path := filepath.Join(b.TempDir(), "s.jsonl")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			cpu0 := cputime.Process()
			for b.Loop() {
				s, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				if c := s.Conversation(); len(c) != n {
					b.Fatalf("%d messages", len(c))
				}
				s.Close()
			}
			b.StopTimer()
			cpu := cputime.Process() - cpu0
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(len(data)), "alloc/file")
			if cpu > 0 {
				// MB of file per second of this process's CPU time (the
				// collector's included): on a shared machine, wall time
				// also counts the wait for a core.
				b.ReportMetric(float64(len(data))*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
			}
			b.ReportMetric(float64(liveAfterOpen(b, path))/float64(len(data)), "live/file")
			b.ReportMetric(float64(len(data))/1e6, "file-MB")
		})
	}
}

// liveAfterOpen returns the heap bytes still live after a GC while a
// session opened from path and its conversation are reachable.
func liveAfterOpen(tb testing.TB, path string) uint64 {
	tb.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	c := s.Conversation()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(c)
	s.Close()
	runtime.KeepAlive(s)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

// BenchmarkList lists 1,000 session files of 1 MB each, as a listing
// after the first finds them: settled, their verdicts kept ("kept"), and
// the same files by their shape alone ("shape", Scan, the listing before
// it showed Verify's verdicts). The two run in turn on the same files, so
// their ratio is a paired figure; cpu-ms/op is the process's CPU time per
// listing, which the wait for a core on a busy machine does not inflate.
func BenchmarkList(b *testing.B) {
	st, files := listBench(b)
	// Files are verified in full until they are settle old; then the
	// first listing keeps their verdicts.
	time.Sleep(2*time.Second + 100*time.Millisecond)
	st.List("/Users/travis/Code/awl")
	for _, c := range []struct {
		name string
		list func(string) ([]Info, error)
	}{{"shape", st.Scan}, {"kept", st.List}} {
		b.Run(c.name, func(b *testing.B) {
			cpu0 := cputime.Process()
			for b.Loop() {
				infos, err := c.list("/Users/travis/Code/awl")
				if err != nil || len(infos) != files || infos[0].Err != nil || infos[0].Messages != 660 {
					b.Fatalf("List: %d infos, %v", len(infos), err)
				}
			}
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
			}
		})
	}
}

// BenchmarkReadVerified reads a directory's verified file of 1,000
// verdicts, as each listing of BenchmarkList does once.
func BenchmarkReadVerified(b *testing.B) {
	dir := b.TempDir()
	vs := map[string]verdict{}
	files := make([]string, 0, 1000)
	for i := range 1000 {
		name := FileName(time.Date(2026, 4, 25, 14, 0, i, 0, time.UTC), fmt.Sprintf("019dc5ba-53f6-71a5-ab8f-%012x", i+1))
		files = append(files, filepath.Join(dir, name))
		vs[name] = verdict{state: fileState{dev: 2049, ino: uint64(1e6 + i), size: 1041234, mtime: 1764686400123456789, ctime: 1764686400123456789}}
	}
	if err := os.WriteFile(filepath.Join(dir, VerifiedName), formatVerified(vs), 0o600); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if vd := readVerified(dir, files); len(vd.old) != len(files) || vd.stale {
			b.Fatalf("%d verdicts read, stale %v", len(vd.old), vd.stale)
		}
	}
}

// BenchmarkListVerifying is BenchmarkList with no verdict kept: every
// file verified in full, as on the first listing after an upgrade, or
// of files just written.
func BenchmarkListVerifying(b *testing.B) {
	st, files := listBench(b)
	dir := filepath.Join(st.Dir, EncodeCwd("/Users/travis/Code/awl"))
	b.ResetTimer()
	for b.Loop() {
		os.Remove(filepath.Join(dir, ".verified"))
		infos, err := st.List("/Users/travis/Code/awl")
		if err != nil || len(infos) != files || infos[0].Err != nil || infos[0].Messages != 660 {
			b.Fatalf("List: %d infos, %v", len(infos), err)
		}
	}
}

// listBench writes BenchmarkList's 1,000 files.
func listBench(b *testing.B) (*Store, int) {
	st := &Store{Dir: filepath.Join(b.TempDir(), "sessions")}
	dir := filepath.Join(st.Dir, EncodeCwd("/Users/travis/Code/awl"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	const files = 1000
	// One transcript under 1,000 different headers: distinct files.
	data := realisticSession(660, 1)
	body := data[bytes.IndexByte(data, '\n')+1:]
	var total int64
	for i := range files {
		id := fmt.Sprintf("019dc5ba-53f6-71a5-ab8f-%012x", uint64(i)+1)
		created := time.Date(2026, 4, 25, 14, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
		h := Header{Version: 1, ID: id, Timestamp: created, Cwd: "/Users/travis/Code/awl", Provider: "anthropic", Model: "claude-sonnet-4-20250514"}
		file := append(append(appendHeader(nil, &h), '\n'), body...)
		if err := os.WriteFile(filepath.Join(dir, FileName(created, id)), file, 0o600); err != nil {
			b.Fatal(err)
		}
		total += int64(len(file))
	}
	b.ReportMetric(float64(total)/files/1e6, "MB/file")
	return st, files
}

// BenchmarkVerify verifies one session file of 1.04 MB (the file of
// BenchmarkList, page cache warm): every line decoded and the whole file
// checked as a resume would.
func BenchmarkVerify(b *testing.B) {
	path := filepath.Join(b.TempDir(), "s.jsonl")
	data := realisticSession(660, 1)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	cpu0 := cputime.Process()
	for b.Loop() {
		if v := Verify(path); len(v.Problems) != 0 || v.Torn {
			b.Fatalf("Verify: %+v", v.Problems)
		}
	}
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(float64(len(data))*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
	}
}

// BenchmarkListLarge lists a directory of three 50 MB sessions, each
// starting with a 25 MB prompt, as `awl sessions` does once an earlier
// listing has kept their verdicts ("warm"; issue 52: no more of a file read
// than the listing shows, under 50 ms and 30 MiB), and with no verdict
// kept ("cold": each file verified in full). alloc-MiB/op is what a
// listing allocates, an upper bound of its heap's growth.
func BenchmarkListLarge(b *testing.B) {
	st := &Store{Dir: filepath.Join(b.TempDir(), "sessions")}
	const cwd = "/Users/travis/Code/awl"
	dir := filepath.Join(st.Dir, EncodeCwd(cwd))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	rest := realisticSession(17_000, 3) // ~25 MB
	rest = rest[bytes.IndexByte(rest, '\n')+1:]
	prompt := strings.Repeat("Summarise this log line by line, then say what failed and why.\n", 25<<20/64)
	for i := range 3 {
		id := fmt.Sprintf("019dc5ba-53f6-71a5-ab8f-%012x", i+1)
		created := time.Date(2026, 4, 25, 14, i, 0, 0, time.UTC)
		h := Header{Version: 1, ID: id, Timestamp: created, Cwd: cwd, Provider: "anthropic", Model: "claude-sonnet-4-20250514"}
		buf := append(appendHeader(nil, &h), '\n')
		e := Entry{Type: TypeMessage, ID: "ffffffff", Timestamp: created, Provider: "anthropic", Model: "claude-sonnet-4-20250514",
			Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock(prompt)}}}
		buf, err := appendEntry(buf, &e, nil)
		if err != nil {
			b.Fatal(err)
		}
		buf = append(append(buf, '\n'), rest...)
		if err := os.WriteFile(filepath.Join(dir, FileName(created, id)), buf, 0o600); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(buf))/1e6, "MB/file")
	}
	check := func(b *testing.B) {
		infos, err := st.List(cwd)
		if err != nil || len(infos) != 3 || infos[0].Err != nil || !strings.HasPrefix(infos[0].FirstPrompt, "Summarise this log") || infos[0].Messages != 17_001 {
			b.Fatalf("List: %d infos, %v, %+v", len(infos), err, infos)
		}
	}
	for _, c := range []struct {
		name string
		warm bool
	}{{"warm", true}, {"cold", false}} {
		b.Run(c.name, func(b *testing.B) {
			if c.warm {
				// Verdicts are kept for files settle old.
				time.Sleep(time.Until(time.Now().Add(settle + 100*time.Millisecond)))
				check(b)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for b.Loop() {
				if !c.warm {
					os.Remove(filepath.Join(dir, VerifiedName))
				}
				check(b)
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MiB/op")
		})
	}
}

// BenchmarkListLargePrompt lists a directory holding one session whose
// first prompt is 50 MB (then an answer): "scan", the listing without
// verdicts (Store.Scan), and "cold", a listing that verifies the file
// (.verified removed each time), which reads and decodes the whole file
// as Verify does. alloc-MiB/op is what one listing allocates. Issue 52:
// the listing reads a bounded head of the prompt's line, not the line.
func BenchmarkListLargePrompt(b *testing.B) {
	st := &Store{Dir: filepath.Join(b.TempDir(), "sessions"), IsContext: func(s string) bool {
		return strings.HasPrefix(strings.TrimSpace(s), "<environment>")
	}}
	const cwd = "/Users/travis/Code/awl"
	prompt := strings.Repeat("Summarise this log line by line, then say what failed and why.\n", 50<<20/64)
	writeSession(b, st, cwd, 0, userMsg(prompt), &conv.Message{Role: conv.RoleAssistant, StopReason: conv.StopEnd, Content: []conv.Block{conv.TextBlock("Done.")}})
	verified := filepath.Join(st.Dir, EncodeCwd(cwd), VerifiedName)
	for _, c := range []struct {
		name string
		list func(string) ([]Info, error)
	}{{"scan", st.Scan}, {"cold", st.List}} {
		b.Run(c.name, func(b *testing.B) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for b.Loop() {
				os.Remove(verified)
				infos, err := c.list(cwd)
				if err != nil || len(infos) != 1 || infos[0].Err != nil || !strings.HasPrefix(infos[0].FirstPrompt, "Summarise this log") || infos[0].Messages != 2 {
					b.Fatalf("list: %+v, %v", infos, err)
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MiB/op")
		})
	}
}
