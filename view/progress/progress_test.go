package progress

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/awlrun/awl/internal/testenv"
)

const (
	evSession = `{"type":"session","session_id":"s1","timestamp":"2026-12-01T10:00:00.000Z","provider":"anthropic","model":"m","resumed":false,"tools":["bash","read"]}`
	evUser    = `{"type":"entry","session_id":"s1","timestamp":"2026-12-01T10:00:00.100Z","entry":{"type":"message","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}}`
	evTurn1   = `{"type":"entry","session_id":"s1","timestamp":"2026-12-01T10:00:02.100Z","entry":{"type":"message","message":{"role":"assistant","content":[{"type":"toolUse","id":"c1","name":"bash","input":"{}"}],"usage":{"input":1000,"output":50,"cacheRead":4096},"costUsd":0.25}}}`
	evStart1  = `{"type":"tool_start","session_id":"s1","timestamp":"2026-12-01T10:00:02.101Z","name":"bash","call_id":"c1","input":{"command":"go test ./...\nrm -rf /tmp/x"}}`
	evEnd1    = `{"type":"tool_end","session_id":"s1","timestamp":"2026-12-01T10:00:03.901Z","name":"bash","call_id":"c1","duration_ms":1800,"is_error":true,"exit_code":1,"output_bytes":2355}`
	evTurn2   = `{"type":"entry","session_id":"s1","timestamp":"2026-12-01T10:00:04.000Z","entry":{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"usage":{"input":10,"output":5},"costUsd":0.2}}}`
	evResult  = `{"type":"result","session_id":"s1","timestamp":"2026-12-01T10:00:04.100Z","exit_code":5,"reason":"provider_error","error":"boom: 100%\nsecond line"}`
)

func feed(p *Printer, events ...string) {
	for _, e := range events {
		p.Write([]byte(e + "\n"))
	}
}

func TestStepLines(t *testing.T) {
	var out testenv.Buffer
	p := New(&out, Options{Steps: true, MaxCostUSD: 0.5})
	feed(p, evSession, evUser, evTurn1, evStart1, evEnd1, evTurn2, evResult)
	fmt.Fprintf(p.Diag(), "awl: model request failed (529); retry 1 in 1s\n")
	p.Close(time.Second)
	want := `awl: start: anthropic m, new session s1, 2 tools
awl: turn 1: 1000 in, 50 out, 4096 cache read, $0.2500 so far, 80% cached, 2.0s, 1 tool call
awl: tool bash: go test ./...⏎rm -rf /tmp/x -> exit 1, 1.8s, 2.3 KiB
awl: turn 2: 10 in, 5 out, $0.4500 so far, 80% cached, 99ms
awl: budget: $0.4500 of --max-cost-usd $0.5000 used (90%)
awl: model request failed (529); retry 1 in 1s
`
	if got := out.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// A turn whose response is stamped in the same millisecond as the event
// before it (a local server, a fast disk) took 0ms and says so, as every
// other turn says its duration (progress.txtar line 13 once found the
// duration missing); a stamp before the one before, a clock set back,
// says none.
func TestTurnWithinAMillisecond(t *testing.T) {
	same := strings.Replace(evTurn2, "10:00:04.000Z", "10:00:03.901Z", 1)
	back := strings.Replace(evTurn2, "10:00:04.000Z", "10:00:03.900Z", 1)
	for _, c := range []struct{ turn, want string }{
		{same, "awl: turn 2: 10 in, 5 out, $0.4500 so far, 80% cached, 0ms\n"},
		{back, "awl: turn 2: 10 in, 5 out, $0.4500 so far, 80% cached\n"},
	} {
		var out testenv.Buffer
		p := New(&out, Options{Steps: true})
		feed(p, evSession, evUser, evTurn1, evStart1, evEnd1, c.turn)
		p.Close(time.Second)
		if !strings.HasSuffix(out.String(), c.want) {
			t.Errorf("got:\n%s\nwant it to end with %q", out.String(), c.want)
		}
	}
}

func TestGitHub(t *testing.T) {
	var out testenv.Buffer
	p := New(&out, Options{Steps: true, GitHub: true})
	feed(p, evSession, evTurn1, evStart1, evEnd1)
	// Diagnostics: a warning becomes an annotation; a line that would be
	// a workflow command is not one.
	fmt.Fprint(p.Diag(), "awl: warning: 50% of: it, all\n::set-output name=x::1\n  ::add-mask::y\npartial")
	feed(p, evResult)
	p.Close(time.Second)
	got := out.String()
	for _, want := range []string{
		"::group::awl: turn 1: 1000 in, 50 out, 4096 cache read, $0.2500 so far, 80%25 cached, 2.1s, 1 tool call\nawl: tool bash:",
		"\n::endgroup::\n",
		"\n::warning title=awl::50%25 of: it, all\n",
		"\nawl: ::set-output name=x::1\n",
		"\nawl:   ::add-mask::y\n",
		"\n::error title=awl exited 5 (provider_error)::boom: 100%25%0Asecond line\n",
		"\npartial\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	for line := range strings.SplitSeq(got, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "::") {
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "::"), "::")
			name, _, _ = strings.Cut(name, " ")
			switch name {
			case "group", "endgroup", "warning", "error":
			default:
				t.Errorf("a workflow command %q got through: %q", name, line)
			}
		}
	}
	// The group closes before the error annotation.
	if strings.Index(got, "::endgroup::") > strings.Index(got, "::error") {
		t.Errorf("group still open at the error:\n%s", got)
	}
}

func TestEscape(t *testing.T) {
	if got := escapeData("a%b\r\nc:d,e"); got != "a%25b%0D%0Ac:d,e" {
		t.Errorf("escapeData: %q", got)
	}
	if got := escapeProperty("a%b\r\nc:d,e"); got != "a%25b%0D%0Ac%3Ad%2Ce" {
		t.Errorf("escapeProperty: %q", got)
	}
}

// blocked is a destination whose writes never return.
type blocked struct{ started chan struct{} }

func (b blocked) Write(p []byte) (int, error) {
	select {
	case b.started <- struct{}{}:
	default:
	}
	select {}
}

func TestBlockedDestinationNeverStalls(t *testing.T) {
	b := blocked{started: make(chan struct{}, 1)}
	p := New(b, Options{Steps: true})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 10 * queueLen {
			feed(p, evTurn1, evStart1, evEnd1)
			fmt.Fprintln(p.Diag(), "awl: a diagnostic")
		}
		p.Close(10 * time.Millisecond)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("writes to a blocked destination stalled the caller")
	}
	// Writes after Close are dropped, not queued or panicking.
	feed(p, evTurn2)
	fmt.Fprintln(p.Diag(), "late")
}

// failing is a destination that fails every write, as a closed pipe does.
type failing struct {
	mu     sync.Mutex
	writes int
}

func (f *failing) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	return 0, syscall.EPIPE
}

func TestFailingDestinationStopsOutput(t *testing.T) {
	f := &failing{}
	p := New(f, Options{Steps: true})
	for range 50 {
		feed(p, evTurn1)
	}
	p.Close(time.Second)
	if f.writes != 1 {
		t.Errorf("%d writes after the first failure, want none", f.writes-1)
	}
}

// slow lets writes through one at a time, when the test says so.
type slow struct {
	gate chan struct{}
	out  testenv.Buffer
}

func (s *slow) Write(p []byte) (int, error) {
	<-s.gate
	return s.out.Write(p)
}

func TestDroppedLinesAreCounted(t *testing.T) {
	s := &slow{gate: make(chan struct{})}
	p := New(s, Options{Steps: true})
	for range queueLen + 10 {
		fmt.Fprintln(p.Diag(), "awl: line")
	}
	close(s.gate)
	time.Sleep(10 * time.Millisecond) // let the queue drain (no assertion on time)
	fmt.Fprintln(p.Diag(), "awl: after")
	p.Close(5 * time.Second)
	got := s.out.String()
	if !strings.Contains(got, "writes dropped (stderr was not keeping up)\n") {
		t.Errorf("no count of the dropped writes:\n%s", got[max(0, len(got)-300):])
	}
	if !strings.HasSuffix(got, "awl: after\n") {
		t.Errorf("the last line is lost:\n%s", got[max(0, len(got)-300):])
	}
}

// livePrinter is a printer with the live status line, width columns wide,
// 12 s into the run, its clock stopped.
func livePrinter(out *testenv.Buffer, width int) *Printer {
	now := time.Date(2026, 12, 1, 10, 0, 12, 0, time.UTC)
	return New(out, Options{Steps: true, Live: true, Width: width, Start: now.Add(-12 * time.Second),
		Now: func() time.Time { return now }, Tick: time.Hour})
}

func TestLiveStatusLine(t *testing.T) {
	var out testenv.Buffer
	p := livePrinter(&out, 60)
	feed(p, evTurn1, evStart1)
	feed(p, evEnd1)
	p.Close(time.Second)
	got := out.String()
	// Each write clears the status line, prints the step lines, and draws
	// the status again, without a newline; Close clears it.
	want := "\r\x1b[Kawl: turn 1: 1000 in, 50 out, 4096 cache read, $0.2500 so far, 80% cached, 1 tool call\n" +
		"awl: 12s · turn 1 · 5096 in / 50 out · $0.2500 · 80% cached" +
		"\r\x1b[Kawl: 12s · turn 1 · 5096 in / 50 out · $0.2500 · bash runn…" +
		"\r\x1b[Kawl: tool bash: go test ./...⏎rm -rf /tmp/x -> exit 1, 1.8s, 2.3 KiB\n" +
		"awl: 12s · turn 1 · 5096 in / 50 out · $0.2500 · 80% cached" +
		"\r\x1b[K"
	if got != want {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
}

// TestLiveStatusNoCostBeforeItIsKnown: before the first response the cost
// is not known (the model may have no price): the status line shows none,
// never $0.0000, and it shows none for a model without a price after.
func TestLiveStatusNoCostBeforeItIsKnown(t *testing.T) {
	var out testenv.Buffer
	p := livePrinter(&out, 80)
	feed(p, evSession, evUser)
	unpriced := strings.Replace(evTurn1, `,"costUsd":0.25`, ``, 1)
	feed(p, unpriced, evStart1, evEnd1)
	p.Close(time.Second)
	got := out.String()
	if strings.Contains(got, "$") {
		t.Errorf("a cost where none is known:\n%q", got)
	}
	if !strings.Contains(got, "awl: 12s · turn 1 · 5096 in / 50 out · bash running") {
		t.Errorf("no status line without a cost:\n%q", got)
	}
}

func TestSummary(t *testing.T) {
	for _, c := range []struct{ ev, want string }{
		{`{"type":"tool_start","name":"grep","call_id":"a","input":{"pattern":"TODO","path":"src"}}`, "awl: tool grep: TODO in src"},
		{`{"type":"tool_start","name":"ls","call_id":"a","input":{}}`, "awl: tool ls: ."},
		{`{"type":"tool_start","name":"mcp__x__y","call_id":"a","input":{"n":1}}`, `awl: tool mcp__x__y: {"n":1}`},
		{`{"type":"tool_start","name":"bash","call_id":"a","input":"not json"}`, "awl: tool bash: not json"},
		{`{"type":"tool_start","name":"bash","call_id":"a","input":{"command":"echo \u001b[31mred"}}`, "awl: tool bash: echo  [31mred"},
		{`{"type":"tool_start","name":"bash","call_id":"a","input":{"command":"` + strings.Repeat("x", 200) + `"}}`, "awl: tool bash: " + strings.Repeat("x", 79) + "…"},
	} {
		var out testenv.Buffer
		p := New(&out, Options{Steps: true})
		feed(p, c.ev)
		if got := p.st.calls["a"]; got != c.want {
			t.Errorf("%s: got %q, want %q", c.ev, got, c.want)
		}
		p.Close(time.Second)
	}
}

// A user's message, a tool's result and the entries the printer has no use
// for are passed over on their first bytes: a 10 MB prompt costs no copy of
// it, and the lines are the same as without it.
func TestLargeUserEntryNotCopied(t *testing.T) {
	big := `{"type":"entry","session_id":"s1","timestamp":"2026-12-01T10:00:00.100Z","entry":{"type":"message","message":{"role":"user","content":[{"type":"text","text":"` + strings.Repeat("x", 10<<20) + `"}]}}}`
	var out testenv.Buffer
	p := New(&out, Options{Steps: true})
	line := []byte(big + "\n")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p.Write(line)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("a 10 MB user entry allocated %d bytes", n)
	}
	feed(p, evSession, evUser, evTurn1, evStart1, evEnd1, evTurn2, evResult)
	p.Close(time.Second)
	var ref testenv.Buffer
	q := New(&ref, Options{Steps: true})
	feed(q, evSession, evUser, evTurn1, evStart1, evEnd1, evTurn2, evResult)
	q.Close(time.Second)
	if out.String() != ref.String() || !strings.Contains(out.String(), "turn 2") {
		t.Errorf("with the large entry:\n%s\nwithout:\n%s", out.String(), ref.String())
	}
	for _, line := range []string{
		`{"type":"entry","entry":{"type":"turnContext","x":1}}`,
		`{"type":"entry","entry":{"type":"message","message":{"role":"user"}}}`,
	} {
		if !unused([]byte(line)) {
			t.Errorf("%s: used", line)
		}
	}
	for _, line := range []string{evTurn1, `{"type":"entry","entry":{"type":"compaction","usage":{"input":1}}}`, evResult, evStart1} {
		if unused([]byte(line)) {
			t.Errorf("%s: unused", line)
		}
	}
}

// An entry event in parts (as the emitter writes one): the lines are those
// of the whole events, and a large user entry is never joined.
func TestWriteParts(t *testing.T) {
	split := func(ev string) [][]byte {
		i := strings.Index(ev, `"entry":`) + len(`"entry":`)
		return [][]byte{[]byte(ev[:i]), []byte(ev[i : len(ev)-1]), []byte("}\n")}
	}
	var out, ref testenv.Buffer
	p, q := New(&out, Options{Steps: true}), New(&ref, Options{Steps: true})
	for _, ev := range []string{evSession, evUser, evTurn1, evStart1, evEnd1, evTurn2, evResult} {
		q.Write([]byte(ev + "\n"))
		if strings.HasPrefix(ev, `{"type":"entry"`) {
			p.WriteParts(split(ev)...)
		} else {
			p.WriteParts([]byte(ev + "\n"))
		}
	}
	big := split(`{"type":"entry","session_id":"s1","timestamp":"2026-12-01T10:00:05.000Z","entry":{"type":"message","message":{"role":"user","content":[{"type":"text","text":"` + strings.Repeat("x", 10<<20) + `"}]}}}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p.WriteParts(big...)
	runtime.ReadMemStats(&after)
	q.Write(bytes.Join(big, nil))
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("a 10 MB user entry in parts allocated %d bytes", n)
	}
	p.Close(time.Second)
	q.Close(time.Second)
	if out.String() != ref.String() || !strings.Contains(out.String(), "turn 2") {
		t.Errorf("in parts:\n%s\nwhole:\n%s", out.String(), ref.String())
	}
}

// TestDenied: a call the tool policy refused is said on stderr with the
// rule and the reason, and under GitHub Actions as a warning annotation
// whose text cannot be read as a workflow command.
func TestDenied(t *testing.T) {
	denied := `{"type":"tool_denied","session_id":"s1","timestamp":"2026-12-01T10:00:02.102Z","name":"bash","call_id":"c1","rule":"bash(rm *)","reason":"\"rm -rf /tmp/x\" matches it\n::set-output name=x::1"}`
	end := `{"type":"tool_end","session_id":"s1","timestamp":"2026-12-01T10:00:02.103Z","name":"bash","call_id":"c1","duration_ms":0,"is_error":true,"denied":true,"output_bytes":120}`
	for _, github := range []bool{false, true} {
		var out testenv.Buffer
		p := New(&out, Options{Steps: true, GitHub: github})
		feed(p, evSession, evTurn1, evStart1, denied, end)
		p.Close(time.Second)
		got := out.String()
		if !strings.Contains(got, `-> denied by rule bash(rm *): "rm -rf /tmp/x" matches it⏎::set-output name=x::1, 0ms, 120 B`) {
			t.Errorf("GitHub %v: no denial line with the rule in:\n%s", github, got)
		}
		annotated := strings.Contains(got, "\n::warning title=awl%3A tool denied::the tool policy refused a call to bash by rule bash(rm *): ")
		if annotated != github {
			t.Errorf("GitHub %v: annotation %v in:\n%s", github, annotated, got)
		}
		for line := range strings.SplitSeq(got, "\n") {
			if strings.HasPrefix(line, "::set-output") {
				t.Errorf("a workflow command got through: %q", line)
			}
		}
	}
}
