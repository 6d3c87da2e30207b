package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/tool"
	"github.com/awlrun/awl/session"
)

// trace is an ordered log of what tools and events did, shared by the
// probe tools and the event writer.
type trace struct {
	mu    sync.Mutex
	lines []string
}

func (tr *trace) add(s string) {
	tr.mu.Lock()
	tr.lines = append(tr.lines, s)
	tr.mu.Unlock()
}

func (tr *trace) at(s string) int { return slices.Index(tr.lines, s) }

// Write records tool_start and tool_end events as "start ID" and "end ID".
func (tr *trace) Write(p []byte) (int, error) {
	for line := range bytes.Lines(p) {
		switch typ := gjson.GetBytes(line, "type").String(); typ {
		case "tool_start", "tool_end":
			tr.add(strings.TrimPrefix(typ, "tool_") + " " + gjson.GetBytes(line, "call_id").String())
		}
	}
	return len(p), nil
}

// probe is a tool that logs when each call runs and ends. Read-only probes
// of one group wait inside Run until every member of the group has
// arrived, so the test deadlocks (and fails on its timeout) unless they run
// at the same time.
type probe struct {
	name string
	ro   bool
	tr   *trace
	meet map[string]*sync.WaitGroup // call id -> its group's barrier
}

func (p probe) Name() string            { return p.name }
func (p probe) Description() string     { return "probe" }
func (p probe) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (p probe) ReadOnly() bool          { return p.ro }
func (p probe) Run(_ context.Context, in json.RawMessage) tool.Result {
	id := gjson.GetBytes(in, "id").String()
	p.tr.add("run " + id)
	if wg := p.meet[id]; wg != nil {
		wg.Done()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			p.tr.add("alone " + id)
		}
	}
	p.tr.add("done " + id)
	return tool.Result{Content: "result of " + id}
}

func newRun(t *testing.T, api string) (*providertest.Server, provider.Provider, *session.Store) {
	t.Helper()
	srv := providertest.New()
	t.Cleanup(srv.Close)
	prov, err := provider.New(api, provider.Options{APIKey: "k", BaseURL: srv.URL, MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	return srv, prov, &session.Store{Dir: filepath.Join(t.TempDir(), "sessions")}
}

// lastResults returns the tool results of the session's last user message.
func lastResults(t *testing.T, path string) []conv.Block {
	t.Helper()
	s, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	msgs := s.Conversation()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == conv.RoleUser && len(msgs[i].Content) > 0 && msgs[i].Content[0].Type == conv.BlockToolResult {
			return msgs[i].Content
		}
	}
	t.Fatal("no tool results in the session")
	return nil
}

func TestReadOnlyCallsOverlapMutatingCallsRunAloneInOrder(t *testing.T) {
	srv, prov, store := newRun(t, "anthropic")
	tr := &trace{}
	ro12, ro45 := &sync.WaitGroup{}, &sync.WaitGroup{}
	ro12.Add(2)
	ro45.Add(2)
	meet := map[string]*sync.WaitGroup{"r1": ro12, "r2": ro12, "r4": ro45, "r5": ro45}
	look := probe{name: "look", ro: true, tr: tr, meet: meet}
	change := probe{name: "change", tr: tr}
	order := []string{"r1", "r2", "m1", "r3", "m2", "m3", "r4", "r5"}
	var calls []providertest.Call
	for _, id := range order {
		name := "look"
		if id[0] == 'm' {
			name = "change"
		}
		calls = append(calls, providertest.Call{ID: id, Name: name, Input: fmt.Sprintf(`{"id":%q}`, id)})
	}
	srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{Calls: calls}), providertest.Text("anthropic", "done"))
	res := runner.Run(context.Background(), runner.Config{
		Store: store, Cwd: t.TempDir(), Prompt: "go", Provider: prov, Model: "m",
		Tools: []tool.Tool{look, change}, Events: event.NewEmitter(tr, nil), Getenv: func(string) string { return "" },
	})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	log := strings.Join(tr.lines, "\n")
	if strings.Contains(log, "alone") {
		t.Fatalf("read-only calls of one group did not run at the same time:\n%s", log)
	}
	for i, id := range order {
		seq := []int{tr.at("start " + id), tr.at("run " + id), tr.at("done " + id), tr.at("end " + id)}
		if slices.Contains(seq, -1) || !slices.IsSorted(seq) {
			t.Fatalf("%s: tool_start, run, end of run, tool_end out of order (%v):\n%s", id, seq, log)
		}
		if id[0] != 'm' {
			continue
		}
		for _, other := range order[:i] {
			if tr.at("end "+other) > tr.at("start "+id) {
				t.Errorf("mutating %s started before the earlier call %s ended:\n%s", id, other, log)
			}
		}
		for _, other := range order[i+1:] {
			if tr.at("start "+other) < tr.at("end "+id) {
				t.Errorf("%s started before the earlier mutating %s ended:\n%s", other, id, log)
			}
		}
	}
	results := lastResults(t, res.SessionPath)
	for i, id := range order {
		if results[i].ToolUseID != id || results[i].Content != "result of "+id {
			t.Errorf("result %d = %s %q, want %s's, in the model's order", i, results[i].ToolUseID, results[i].Content, id)
		}
	}
}

// TestEightEditsOfOneFileInOneTurn is the lost-edit case: one assistant
// turn with eight edits of one eight-line file, each replacing a different
// word. Every edit must land and every result must say what happened.
func TestEightEditsOfOneFileInOneTurn(t *testing.T) {
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	srv, prov, store := newRun(t, "anthropic")
	runs := 100
	if testing.Short() {
		runs = 10
	}
	for n := range runs {
		work := t.TempDir()
		file := filepath.Join(work, "f.txt")
		var want strings.Builder
		var calls []providertest.Call
		for i, w := range words {
			want.WriteString(strings.ToUpper(w) + "\n")
			in, _ := json.Marshal(map[string]string{"path": "f.txt", "old_string": w, "new_string": strings.ToUpper(w)})
			calls = append(calls, providertest.Call{ID: fmt.Sprintf("e%d", i), Name: "edit", Input: string(in)})
		}
		if err := os.WriteFile(file, []byte(strings.Join(words, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{Calls: calls}), providertest.Text("anthropic", "done"))
		res := runner.Run(context.Background(), runner.Config{
			Store: store, Cwd: work, Prompt: "edit", Provider: prov, Model: "m",
			Tools: tool.Builtins(tool.Env{Dir: work}), Events: event.NewEmitter(nil, nil), Getenv: func(string) string { return "" },
		})
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want.String() {
			t.Fatalf("run %d: file after 8 edits:\n%s\nwant:\n%s", n+1, got, want.String())
		}
		for i, r := range lastResults(t, res.SessionPath) {
			if wantRes := fmt.Sprintf("edited f.txt: replaced 1 occurrence at line %d", i+1); r.IsError || r.Content != wantRes {
				t.Fatalf("run %d: result %d = %q (error %v), want %q", n+1, i, r.Content, r.IsError, wantRes)
			}
		}
		if entries, _ := os.ReadDir(work); len(entries) != 1 {
			t.Fatalf("run %d: the work directory holds %d entries, want only f.txt (temporary files left behind?)", n+1, len(entries))
		}
	}
}

// TestMkdirWriteReadInOneTurn: a bash call, a write into the directory it
// made and a read of what was written, in one turn, happen in that order.
func TestMkdirWriteReadInOneTurn(t *testing.T) {
	srv, prov, store := newRun(t, "openai")
	for n := range 5 {
		work := t.TempDir()
		srv.Enqueue(providertest.Stream("openai", providertest.Turn{Calls: []providertest.Call{
			{ID: "b", Name: "bash", Input: `{"command":"mkdir d"}`},
			{ID: "w", Name: "write", Input: `{"path":"d/f","content":"made in order\n"}`},
			{ID: "r", Name: "read", Input: `{"path":"d/f"}`},
		}}), providertest.Text("openai", "done"))
		res := runner.Run(context.Background(), runner.Config{
			Store: store, Cwd: work, Prompt: "go", Provider: prov, Model: "m",
			Tools: tool.Builtins(tool.Env{Dir: work}), Events: event.NewEmitter(nil, nil), Getenv: func(string) string { return "" },
		})
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		rs := lastResults(t, res.SessionPath)
		if rs[0].IsError || !strings.HasSuffix(rs[0].Content, "exit code: 0") {
			t.Fatalf("run %d: mkdir d: %q (did write create d first?)", n+1, rs[0].Content)
		}
		if rs[1].IsError || !strings.HasPrefix(rs[1].Content, "created d/f") {
			t.Fatalf("run %d: write: %q", n+1, rs[1].Content)
		}
		if rs[2].IsError || !strings.Contains(rs[2].Content, "made in order") {
			t.Fatalf("run %d: read after write: %q", n+1, rs[2].Content)
		}
	}
}
