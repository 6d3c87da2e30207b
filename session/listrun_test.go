package session

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
)

func costMsg(text string, cost *float64) *conv.Message {
	return &conv.Message{Role: conv.RoleAssistant, StopReason: conv.StopEnd, Content: []conv.Block{conv.TextBlock(text)},
		Usage: &conv.Usage{Input: 1, Output: 1}, CostUSD: cost}
}

func runEntry(fields string) Entry { return Entry{Type: "run", Fields: []byte(fields)} }

func ptr(v float64) *float64 { return &v }

// TestListRunsStatusAndCost: the last run entry, the status it gives, and
// the total cost, for each way a session can end.
func TestListRunsStatusAndCost(t *testing.T) {
	st := testStore(t)
	st.IsLimit = func(code int) bool { return code == 6 || code == 124 }
	type want struct {
		status string
		code   int
		reason string
		total  *float64
		noRun  bool
	}
	cases := []struct {
		name  string
		build func(s *Session)
		want  want
	}{
		{"ok", func(s *Session) {
			mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("hi")})
			mustAppend(t, s, Entry{Message: costMsg("a", ptr(0.25))})
			mustAppend(t, s, runEntry(`{"exitCode":0,"reason":"completed","costUsd":0.25}`))
		}, want{status: "ok", reason: "completed", total: ptr(0.25)}},
		{"limit, then resumed to a failure", func(s *Session) {
			mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("hi")})
			mustAppend(t, s, Entry{Message: costMsg("a", ptr(0.5))})
			mustAppend(t, s, runEntry(`{"exitCode":6,"reason":"budget","costUsd":0.5}`))
			mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("go on")})
			mustAppend(t, s, Entry{Message: costMsg("b", ptr(0.125))})
			mustAppend(t, s, runEntry(`{"exitCode":5,"reason":"provider_error","costUsd":0.125}`))
		}, want{status: "failed", code: 5, reason: "provider_error", total: ptr(0.625)}},
		{"limit", func(s *Session) {
			mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("hi")})
			mustAppend(t, s, runEntry(`{"exitCode":124,"reason":"timeout","costUsd":0}`))
		}, want{status: "limit", code: 124, reason: "timeout", total: nil}},
		{"killed after a run", func(s *Session) {
			mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("hi")})
			mustAppend(t, s, Entry{Message: costMsg("a", ptr(1))})
			mustAppend(t, s, runEntry(`{"exitCode":0,"reason":"completed","costUsd":1}`))
			mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("again")})
			mustAppend(t, s, Entry{Message: costMsg("b", ptr(2))})
		}, want{status: "killed", reason: "completed", total: ptr(3)}},
		{"killed in its first run", func(s *Session) {
			mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("hi")})
			mustAppend(t, s, Entry{Message: costMsg("a", ptr(0.5))})
		}, want{status: "killed", noRun: true, total: ptr(0.5)}},
		{"unknown cost", func(s *Session) {
			mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("hi")})
			mustAppend(t, s, Entry{Message: costMsg("a", ptr(0.5))})
			mustAppend(t, s, runEntry(`{"exitCode":0,"reason":"completed","costUsd":0.5}`))
			mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("hi")})
			mustAppend(t, s, Entry{Message: costMsg("unpriced", nil)})
			mustAppend(t, s, runEntry(`{"exitCode":0,"reason":"completed","costUsd":null}`))
		}, want{status: "ok", reason: "completed", total: nil}},
		{"a compaction's cost counts", func(s *Session) {
			mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("hi")})
			mustAppend(t, s, Entry{Message: costMsg("a", ptr(0.5))})
			mustAppend(t, s, Entry{Type: "compaction", Fields: []byte(`{"summary":"s","usage":{"input":1},"costUsd":0.25}`)})
			mustAppend(t, s, Entry{Message: costMsg("b", ptr(0.125))})
			mustAppend(t, s, runEntry(`{"exitCode":0,"reason":"completed","costUsd":0.875}`))
		}, want{status: "ok", reason: "completed", total: ptr(0.875)}},
		{"no messages", func(s *Session) {}, want{status: "", noRun: true}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cwd := "/w" + string(rune('a'+i))
			s, err := st.Create(cwd, "p", "m")
			if err != nil {
				t.Fatal(err)
			}
			c.build(s)
			s.Close()
			infos, err := st.List(cwd)
			if err != nil || len(infos) != 1 {
				t.Fatalf("%v %v", infos, err)
			}
			in := infos[0]
			if in.Err != nil {
				t.Fatal(in.Err)
			}
			if in.Status != c.want.status {
				t.Errorf("status %q, want %q", in.Status, c.want.status)
			}
			if c.want.noRun != (in.LastRun == nil) {
				t.Fatalf("last run %+v", in.LastRun)
			}
			if in.LastRun != nil && (in.LastRun.ExitCode != c.want.code || in.LastRun.Reason != c.want.reason || in.LastRun.Ended.IsZero()) {
				t.Errorf("last run %+v", in.LastRun)
			}
			switch {
			case c.want.total == nil && in.TotalCostUSD != nil:
				t.Errorf("total %v, want unknown", *in.TotalCostUSD)
			case c.want.total != nil && (in.TotalCostUSD == nil || *in.TotalCostUSD != *c.want.total):
				t.Errorf("total %v, want %v", fmtp(in.TotalCostUSD), *c.want.total)
			}
		})
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	return int64(len(readFile(t, path)))
}

func TestCostOf(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{`"usage":{"input":1,"output":2},"costUsd":0.0105}}`, 0.0105, true},
		{`"usage":{"input":1,"output":2}}}`, 0, false},
		{`,"costUsd":1}`, 0, false},                  // not the end of a message
		{`"text":"x,\"costUsd\":9}}"}]}}`, 0, false}, // in a string, escaped
		{`,"costUsd":-1}}`, 0, false},
		{`,"costUsd":0.25}`, 0, false}, // a compaction's end is not a message's
		{`"usage":{"input":1},"costUsd":0.25,"contextMessages":2}`, 0, false},
		{`,"costUsd":abc}}`, 0, false},
	} {
		got, ok := costOf([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("costOf(%s) = %v, %v", c.in, got, ok)
		}
	}
}

func fmtp(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestListCostAcrossTheChunkBoundary puts the end of an assistant line at
// every position around the first 256 KiB read, so that its costUsd is
// read from the chunk, across two chunks, or again from the file.
func TestListCostAcrossTheChunkBoundary(t *testing.T) {
	st := testStore(t)
	for delta := -40; delta <= 120; delta += 3 {
		cwd := fmt.Sprintf("/b%d", delta+100)
		s, err := st.Create(cwd, "p", "m")
		if err != nil {
			t.Fatal(err)
		}
		e := mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("hi")})
		asst := Entry{Message: costMsg("a", ptr(0.012345678))}
		probe, _ := appendEntry(nil, &Entry{Type: TypeMessage, ID: "00000000", ParentID: "00000000", Timestamp: e.Timestamp, Message: asst.Message}, nil)
		user, _ := appendEntry(nil, &Entry{Type: TypeMessage, ID: "00000000", ParentID: "00000000", Timestamp: e.Timestamp, Provider: "p", Model: "m", Message: userMsg("")}, nil)
		// The user line of pad bytes makes the assistant line end delta
		// bytes after the boundary.
		pad := scanChunk - int(fileSize(t, s.Path)) - (len(user) + 1) - (len(probe) + 1) + delta + 1
		mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg(strings.Repeat("y", pad))})
		mustAppend(t, s, asst)
		end := fileSize(t, s.Path) - 1
		if end-scanChunk != int64(delta) {
			t.Fatalf("delta %d: the line ends at %d", delta, end-scanChunk)
		}
		mustAppend(t, s, runEntry(`{"exitCode":0,"reason":"completed","costUsd":0.012345678}`))
		s.Close()
		infos, err := st.List(cwd)
		if err != nil || len(infos) != 1 || infos[0].Err != nil {
			t.Fatalf("%v %v", infos, err)
		}
		if c := infos[0].TotalCostUSD; c == nil || *c != 0.012345678 {
			t.Fatalf("delta %d: total %v", delta, fmtp(c))
		}
	}
}

// TestListCompactionCostBeforeContextMessages: awl writes a compaction's
// contextMessages after its costUsd; the summary request's cost still
// counts, and a null one makes the total unknown only through a run entry.
func TestListCompactionCostBeforeContextMessages(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("hi")})
	mustAppend(t, s, Entry{Message: costMsg("a", ptr(0.5))})
	mustAppend(t, s, Entry{Type: TypeCompaction, Fields: []byte(`{"summary":"s","usage":{"input":1},"costUsd":0.25,"contextMessages":0}`)})
	mustAppend(t, s, Entry{Type: TypeCompaction, Fields: []byte(`{"summary":"t","costUsd":null,"contextMessages":0}`)})
	mustAppend(t, s, runEntry(`{"exitCode":0,"reason":"completed","costUsd":0.75}`))
	s.Close()
	infos, err := st.List("/w")
	if err != nil || len(infos) != 1 || infos[0].Err != nil {
		t.Fatalf("%v %v", infos, err)
	}
	if c := infos[0].TotalCostUSD; c == nil || *c != 0.75 {
		t.Errorf("total %v, want 0.75", fmtp(c))
	}
}

// reserialise rewrites every line of the file at path as jq -cS would:
// the same JSON, keys sorted, numbers kept as written.
func reserialise(t *testing.T, path string) {
	t.Helper()
	var out []byte
	for _, line := range strings.SplitAfter(string(readFile(t, path)), "\n") {
		if line == "" {
			continue
		}
		d := json.NewDecoder(strings.NewReader(line))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(append(out, b...), '\n')
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestListReserialisedSessionListsTheSame: a session whose lines were
// re-serialised with sorted keys (jq -cS ., say) lists exactly as before:
// cost, status, last run, first prompt, model and all. The listing's fast
// path reads awl's own line shape; every other shape is decoded.
func TestListReserialisedSessionListsTheSame(t *testing.T) {
	st := testStore(t)
	st.IsLimit = func(code int) bool { return code == 6 }
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range allKinds() {
		mustAppend(t, s, e)
	}
	mustAppend(t, s, Entry{Provider: "p", Model: "m2", Message: userMsg("fix <the> bug & more")})
	mustAppend(t, s, Entry{Message: costMsg("a", ptr(0.0125))})
	mustAppend(t, s, Entry{Type: TypePrune, Fields: []byte(`{"upToId":"00000001","tokensBefore":10,"tokensAfter":5}`)})
	mustAppend(t, s, Entry{Type: TypeCompaction, Fields: []byte(`{"summary":"s","usage":{"input":1},"costUsd":0.25,"contextMessages":0}`)})
	mustAppend(t, s, Entry{Message: costMsg("b", ptr(0.5))})
	mustAppend(t, s, runEntry(`{"exitCode":6,"reason":"max_turns","costUsd":0.7625}`))
	s.Close()
	before, err := st.List("/w")
	if err != nil || len(before) != 1 || before[0].Err != nil {
		t.Fatalf("%v %v", before, err)
	}
	if c := before[0].TotalCostUSD; c == nil || *c != 0.7625 || before[0].Status != "limit" {
		t.Fatalf("before: total %v, status %q", fmtp(c), before[0].Status)
	}
	reserialise(t, s.Path)
	if !strings.Contains(string(readFile(t, s.Path)), `{"id":`) {
		t.Fatal("the lines were not re-serialised with sorted keys")
	}
	after, err := st.List("/w")
	if err != nil || len(after) != 1 {
		t.Fatalf("%v %v", after, err)
	}
	after[0].Modified = before[0].Modified
	if !reflect.DeepEqual(before[0], after[0]) {
		t.Errorf("re-serialised session lists differently:\nbefore %+v\nafter  %+v (cost %v, last run %+v)",
			before[0], after[0], fmtp(after[0].TotalCostUSD), after[0].LastRun)
	}
}
