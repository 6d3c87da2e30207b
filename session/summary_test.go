package session

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awlrun/awl/conv"
)

// countScans counts the files the listing reads.
func countScans(t *testing.T) *atomic.Int32 {
	var n atomic.Int32
	testHookScan = func(string) { n.Add(1) }
	t.Cleanup(func() { testHookScan = nil })
	return &n
}

// comparable is in as text, its pointers followed.
func comparable(in Info) string {
	run, cost, share := in.LastRun, in.TotalCostUSD, in.CacheReadShare
	in.LastRun, in.TotalCostUSD, in.CacheReadShare = nil, nil, nil
	out := fmt.Sprintf("%+v", in)
	if cost != nil {
		out += fmt.Sprintf(" cost %v", *cost)
	}
	if share != nil {
		out += fmt.Sprintf(" share %v", *share)
	}
	if run != nil {
		r := *run
		r.CostUSD, r.CacheReadShare = nil, nil
		out += fmt.Sprintf(" run %+v", r)
		if run.CacheReadShare != nil {
			out += fmt.Sprintf(" run share %v", *run.CacheReadShare)
		}
		if run.CostUSD != nil {
			out += fmt.Sprintf(" run cost %v", *run.CostUSD)
		}
	}
	return out
}

// TestListWarmReadsNothing: once a listing has kept its verdict and what it
// shows of a settled file, the next listing of the file in the same state
// reads none of it and lists it the same, last run, cost and final answer
// included; a file appended to since is read again, and shows its new
// state.
func TestListWarmReadsNothing(t *testing.T) {
	defer setSettle(30 * time.Millisecond)()
	st, path, judged := verifiedFixture(t)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, Entry{Type: "run", Fields: []byte(`{"exitCode":0,"reason":"completed","costUsd":0.25,"usage":{"input":100,"cacheRead":300,"cacheWrite":0}}`)})
	s.Close()
	scans := countScans(t)
	settled()
	cold := listOne(t, st)
	if cold.Err != nil || cold.LastText != "an answer" || cold.LastRun == nil || cold.Status != "ok" || scans.Load() != 1 {
		t.Fatalf("first listing: %+v (%d files read)", cold, scans.Load())
	}
	if cold.LastRun.CostUSD == nil || *cold.LastRun.CostUSD != 0.25 {
		t.Fatalf("the run's cost: %v", cold.LastRun.CostUSD)
	}
	if cold.CacheReadShare == nil || cold.LastRun.CacheReadShare == nil {
		t.Fatalf("the cold listing has no cache read share: %v, %v", cold.CacheReadShare, cold.LastRun.CacheReadShare)
	}
	warm := listOne(t, st)
	if scans.Load() != 1 || judged.Load() != 1 {
		t.Fatalf("the second listing read %d files and verified %d, want 1 and 1 in all: the kept summary unused", scans.Load(), judged.Load())
	}
	if comparable(warm) != comparable(cold) {
		t.Fatalf("warm listing\n%s\nwant the cold one\n%s", comparable(warm), comparable(cold))
	}
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("and again")})
	mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: &conv.Message{Role: conv.RoleAssistant, Content: []conv.Block{conv.TextBlock("a second answer")}, StopReason: conv.StopEnd}})
	s.Close()
	if in := listOne(t, st); scans.Load() != 2 || in.LastText != "a second answer" || in.Messages != 4 || in.Status != "killed" {
		t.Fatalf("after an append: %+v (%d files read, want 2)", in, scans.Load())
	}
}

// TestListWarmOtherDirectory: a kept summary of a session of /a-b, whose
// sessions share /a/b's directory, is not listed for /a/b.
func TestListWarmOtherDirectory(t *testing.T) {
	defer setSettle(30 * time.Millisecond)()
	st := testStore(t)
	for _, cwd := range []string{"/a-b", "/a/b"} {
		s, err := st.Create(cwd, "p", "m")
		if err != nil {
			t.Fatal(err)
		}
		mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("in " + cwd)})
		s.Close()
	}
	settled()
	for round := range 3 {
		infos, err := st.List("/a/b")
		if err != nil || len(infos) != 1 || infos[0].Cwd != "/a/b" || infos[0].FirstPrompt != "in /a/b" {
			t.Fatalf("round %d: %+v, %v", round, infos, err)
		}
	}
}

// TestLastText: the final answer is the last assistant message's text when
// it ended the turn; none after a tool call or an unanswered prompt; text
// blocks joined; a long one cut at LastTextMax between characters. Cold
// and warm listings agree.
func TestLastText(t *testing.T) {
	defer setSettle(30 * time.Millisecond)()
	long := strings.Repeat("é", LastTextMax) // 2 bytes each
	for _, c := range []struct {
		name string
		last []Entry
		want string
	}{
		{"answered", []Entry{{Message: &conv.Message{Role: conv.RoleAssistant, StopReason: conv.StopEnd, Content: []conv.Block{conv.TextBlock("Done: "), {Type: conv.BlockThinking, Thinking: "hidden"}, conv.TextBlock("all green.")}}}}, "Done: all green."},
		{"tool call", []Entry{{Message: &conv.Message{Role: conv.RoleAssistant, StopReason: conv.StopToolUse, Content: []conv.Block{conv.TextBlock("Running it."), {Type: conv.BlockToolUse, ID: "t1", Name: "bash", Input: `{}`}}}}}, ""},
		{"unanswered", []Entry{
			{Message: &conv.Message{Role: conv.RoleAssistant, StopReason: conv.StopEnd, Content: []conv.Block{conv.TextBlock("old answer")}}},
			{Provider: "p", Model: "m", Message: userMsg("a new prompt")}}, ""},
		{"cut", []Entry{{Message: &conv.Message{Role: conv.RoleAssistant, StopReason: conv.StopEnd, Content: []conv.Block{conv.TextBlock(long)}}}}, long[:LastTextMax]},
		{"hostile", []Entry{{Message: &conv.Message{Role: conv.RoleAssistant, StopReason: conv.StopLength, Content: []conv.Block{conv.TextBlock("tab\there\nnew line \"quoted\" \\ \u2028 {\"id\":1}")}}}}, "tab\there\nnew line \"quoted\" \\ \u2028 {\"id\":1}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := testStore(t)
			s, err := st.Create("/w", "p", "m")
			if err != nil {
				t.Fatal(err)
			}
			mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("go")})
			for _, e := range c.last {
				mustAppend(t, s, e)
			}
			s.Close()
			settled()
			scans := countScans(t)
			for round, want := range []int32{1, 1} {
				in := listOne(t, st)
				if in.Err != nil || in.LastText != c.want || scans.Load() != want {
					t.Fatalf("listing %d: last text %q (%d bytes), %v, %d files read; want %d bytes", round, cutText(in.LastText, 40), len(in.LastText), in.Err, scans.Load(), len(c.want))
				}
			}
		})
	}
	if _, err := os.Stat("/"); err != nil || !reflect.DeepEqual(cutText("aé", 2), "a") {
		t.Errorf("cutText cut a character: %q", cutText("aé", 2))
	}
}
