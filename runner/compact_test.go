package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
	"github.com/awlrun/awl/runner/modelinfo"
	"github.com/awlrun/awl/runner/projection"
	"github.com/awlrun/awl/runner/tool"
	"github.com/awlrun/awl/session"
)

// serverTokens is how the fake server counts a request's tokens: a
// quarter of its body, JSON and tool schemas included.
func serverTokens(body []byte) int64 { return int64(len(body) / 4) }

// longRun is a fake model for long runs: it calls read on big.txt until
// turn `turns`, then answers; it answers the compaction instruction with a
// summary; it reports input usage as serverTokens, and refuses a request
// over `limit` tokens as Anthropic does ("prompt is too long").
type longRun struct {
	t       *testing.T
	api     string
	sessDir string
	turns   int
	limit   int64
	// zeroUsage reports no input tokens, as some compatible servers do.
	zeroUsage bool
	// inflate, when over 1, multiplies the input tokens reported: a
	// tokenizer that counts more tokens than bytes suggest (code, most
	// languages but English).
	inflate int64
	// disobey answers summary requests with a tool call: 1 while tools
	// may be called (a real API enforces tool_choice none), 2 always (a
	// server that ignores tool_choice).
	disobey int
	// summary, when set, is the text of every summary (a long one makes
	// a summary longer than what it replaces).
	summary string
	// prefixes keeps every request's messages and the boundaries then in
	// the session (reqs, bounds): a read of the session per request.
	prefixes bool

	mu        sync.Mutex
	normal    int      // normal (non-summary) requests answered
	summaries int      // summary requests answered
	overflows int      // requests refused as too long
	reqs      []string // normal requests' message lists, cache markers stripped
	bounds    []int    // boundary entries in the session when each was sent
}

func (l *longRun) respond(n int, req providertest.Request) providertest.Response {
	l.mu.Lock()
	defer l.mu.Unlock()
	tokens := serverTokens(req.Body)
	if tokens > l.limit {
		l.overflows++
		return tooLong(l.api, tokens, l.limit)
	}
	if bytes.Contains(req.Body, []byte("Stop here and write a summary of this conversation")) {
		l.summaries++
		if l.disobey == 2 || l.disobey == 1 && !forbidsTools(req.Body) {
			return providertest.Stream(l.api, providertest.Turn{Calls: []providertest.Call{{ID: fmt.Sprintf("sum_%d", l.summaries), Name: "bash", Input: `{"command":"touch pwned"}`}}, InputTokens: int(tokens), OutputTokens: 20})
		}
		text := fmt.Sprintf("Task: read big.txt many times.\nState: %d reads done.", l.normal)
		if l.summary != "" {
			text = l.summary
		}
		return providertest.Stream(l.api, providertest.Turn{Text: text, InputTokens: int(tokens), OutputTokens: 40})
	}
	l.normal++
	if l.prefixes {
		l.reqs = append(l.reqs, strip(gjson.GetBytes(req.Body, wires[l.api].messages).Raw))
		l.bounds = append(l.bounds, l.boundaries())
	}
	if l.zeroUsage {
		tokens = 0
	}
	if l.inflate > 1 {
		tokens *= l.inflate
	}
	if l.normal >= l.turns {
		return providertest.Stream(l.api, providertest.Turn{Text: "done", InputTokens: int(tokens), OutputTokens: 5})
	}
	return providertest.Stream(l.api, providertest.Turn{
		Calls:       []providertest.Call{{ID: fmt.Sprintf("call_%d", l.normal), Name: "read", Input: `{"path":"big.txt"}`}},
		InputTokens: int(tokens), OutputTokens: 30,
	})
}

// tooLong is each API's refusal of a request of n tokens over limit, in
// the shape the real APIs send (testdata/wire/SOURCES.md in provider
// names where each was seen): Anthropic and OpenAI Chat state the limit,
// the Responses API does not.
func tooLong(api string, n, limit int64) providertest.Response {
	var body string
	switch api {
	case "anthropic":
		body = fmt.Sprintf(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: %d tokens > %d maximum"},"request_id":"req_011CVQe1dLrGNMJyE1ghG1av"}`, n, limit)
	case "openai-chat":
		body = fmt.Sprintf(`{"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, limit, n)
	default:
		body = `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`
	}
	return providertest.Response{Status: 400, Body: []byte(body)}
}

// forbidsTools reports whether a request body sets tool_choice none, in
// the shape of any of the three APIs.
func forbidsTools(body []byte) bool {
	c := gjson.GetBytes(body, "tool_choice")
	return c.String() == "none" || c.Get("type").String() == "none"
}

// boundaries counts the prune and compaction entries written so far.
func (l *longRun) boundaries() int {
	files, _ := filepath.Glob(filepath.Join(l.sessDir, "*", "*.jsonl"))
	n := 0
	for _, f := range files {
		b, _ := os.ReadFile(f)
		n += bytes.Count(b, []byte(`{"type":"prune"`)) + bytes.Count(b, []byte(`{"type":"compaction"`))
	}
	return n
}

type longRig struct {
	srv    *providertest.Server
	prov   provider.Provider
	store  *session.Store
	work   string
	events bytes.Buffer
	model  *longRun
}

func newLongRig(t *testing.T, api string, turns int, limit int64) *longRig {
	t.Helper()
	srv := providertest.New()
	t.Cleanup(srv.Close)
	prov, err := provider.New(api, provider.Options{APIKey: "k", BaseURL: srv.URL, MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	var big strings.Builder
	for i := range 120 {
		fmt.Fprintf(&big, "line %03d: the quick brown fox jumps over the lazy dog\n", i)
	}
	if err := os.WriteFile(filepath.Join(work, "big.txt"), []byte(big.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "sessions")
	g := &longRig{srv: srv, prov: prov, store: &session.Store{Dir: dir}, work: work,
		model: &longRun{t: t, api: api, sessDir: dir, turns: turns, limit: limit}}
	srv.RespondWith(g.model.respond)
	return g
}

func (g *longRig) config(prompt string, w runner.Window) runner.Config {
	return runner.Config{
		Store:    g.store,
		Cwd:      g.work,
		Prompt:   prompt,
		Provider: g.prov,
		Model:    "m-1",
		Tools:    tool.Builtins(tool.Env{Dir: g.work}),
		Events:   event.NewEmitter(&g.events, nil),
		Now:      func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) },
		Getenv: func(k string) string {
			return map[string]string{"SHELL": "/bin/bash", "XDG_CONFIG_HOME": filepath.Join(g.work, "none")}[k]
		},
		Window: w,
	}
}

func (g *longRig) eventsOf(t *testing.T, typ string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(g.events.String()) {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("bad event line %q: %v", line, err)
		}
		if ev["type"] == typ {
			out = append(out, ev)
		}
	}
	return out
}

// TestLongRunPrunesAndCompacts: 300 turns of 3 KB tool results in a 20k
// window. The run finishes; prunes come at 60% and compactions at 80%;
// every request fits; between boundaries every request extends the one
// before byte for byte; and the session, opened afresh, projects exactly
// the last request's messages.
func TestLongRunPrunesAndCompacts(t *testing.T) {
	const window, turns = 20000, 300
	g := newLongRig(t, "anthropic", turns, window)
	g.model.prefixes = true
	res := runner.Run(context.Background(), g.config("read big.txt again and again", runner.Window{Tokens: window}))
	if res.Err != nil {
		t.Fatalf("run failed: %v", res.Err)
	}
	m := g.model
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.normal != turns || m.overflows != 0 {
		t.Fatalf("%d normal requests and %d refused as too long; want %d and 0", m.normal, m.overflows, turns)
	}
	prunes, comps := g.eventsOf(t, "prune"), g.eventsOf(t, "compaction")
	if len(prunes) == 0 || len(comps) == 0 || m.summaries != len(comps) {
		t.Fatalf("%d prunes, %d compactions, %d summary requests: want some of each, one summary per compaction", len(prunes), len(comps), m.summaries)
	}
	for _, p := range prunes {
		b, a := p["tokens_before"].(float64), p["tokens_after"].(float64)
		if b < 0.6*window {
			t.Errorf("a prune at %.0f tokens, under 60%% of %d", b, window)
		}
		// Each prune is a cache break: one that freed little would come
		// again a turn later.
		if b-a < 0.2*window {
			t.Errorf("a prune from %.0f to %.0f tokens frees under 20%% of %d", b, a, window)
		}
	}
	if len(prunes) > turns/3 { // 218 when any gain would do
		t.Errorf("%d prunes in %d turns: pruning churns", len(prunes), turns)
	}
	for _, c := range comps {
		b, a := c["tokens_before"].(float64), c["tokens_after"].(float64)
		if b < 0.8*window || a >= 0.6*window || c["reason"] != "threshold" {
			t.Errorf("compaction %v: want it at or over 80%% of the window, leaving under 60%%", c)
		}
	}
	breaks := 0
	for i := 1; i < len(m.reqs); i++ {
		if m.bounds[i] != m.bounds[i-1] {
			breaks++
			continue
		}
		prev := strings.TrimSuffix(m.reqs[i-1], "]")
		if !strings.HasPrefix(m.reqs[i], prev) {
			t.Fatalf("request %d does not extend request %d, and no boundary came between them", i+1, i)
		}
	}
	if breaks == 0 || breaks > len(prunes)+len(comps) {
		t.Errorf("%d requests broke the prefix; %d boundaries were written", breaks, len(prunes)+len(comps))
	}

	// Resume rebuilds the same projection: the session, opened afresh,
	// projects the messages the last request sent.
	sess, err := session.Open(res.SessionPath)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	last := lastRequestMessages(t, g.srv, "anthropic")
	path := sess.ActivePath()
	end := len(path) - 1
	for end > 0 && path[end].Message == nil { // the run entry
		end--
	}
	if m := path[end].Message; m.Text() != "done" {
		t.Fatalf("the session's last message is not the final answer: %+v", m)
	}
	got := project(t, "anthropic", projection.Project(path[:end])) // as it was before the answer
	if got != last {
		t.Errorf("the reopened session projects other messages than the last request sent:\n got %.300s…\nwant %.300s…", got, last)
	}
	// The log keeps every result whole: 299 reads of big.txt, none stubbed.
	whole := 0
	for _, e := range sess.ActivePath() {
		if e.Message == nil {
			continue
		}
		for _, b := range e.Message.Content {
			if b.Type == conv.BlockToolResult && strings.Contains(b.Content, "line 119:") {
				whole++
			}
		}
	}
	if whole != turns-1 {
		t.Errorf("the session holds %d whole read results, want %d", whole, turns-1)
	}
}

// lastRequestMessages is the message list of the last normal request the
// server received, without cache markers.
func lastRequestMessages(t *testing.T, srv *providertest.Server, api string) string {
	t.Helper()
	reqs := srv.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if !bytes.Contains(reqs[i].Body, []byte("Stop here and write a summary")) {
			return strip(gjson.GetBytes(reqs[i].Body, wires[api].messages).Raw)
		}
	}
	t.Fatal("no request")
	return ""
}

// project renders msgs as the wire API's message list, as a request would.
func project(t *testing.T, api string, msgs []conv.Message) string {
	t.Helper()
	srv := providertest.New()
	defer srv.Close()
	srv.Enqueue(providertest.Text(api, "x"))
	prov, err := provider.New(api, provider.Options{APIKey: "k", BaseURL: srv.URL, MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prov.Stream(context.Background(), provider.Request{Model: "m-1", Messages: msgs, Tools: specsOf(tool.Builtins(tool.Env{}))}, nil); err != nil {
		t.Fatal(err)
	}
	return strip(gjson.GetBytes(srv.Requests()[0].Body, wires[api].messages).Raw)
}

func specsOf(tools []tool.Tool) []provider.Tool {
	out := make([]provider.Tool, len(tools))
	for i, t := range tools {
		out[i] = provider.Tool{Name: t.Name(), Description: t.Description(), Schema: t.Schema()}
	}
	return out
}

// TestOverflowCompactsAndRetries: with no known window, the API's "prompt
// is too long" makes awl compact and send the request again, on every
// wire API, instead of failing with exit 5.

// TestZeroUsageStillFits: a server that reports no input tokens (some
// compatible servers do) must not make awl believe the window is empty:
// the estimate falls back to bytes, and the run prunes and compacts
// before the server refuses anything.
func TestZeroUsageStillFits(t *testing.T) {
	const window, turns = 20000, 120
	g := newLongRig(t, "openai-chat", turns, window)
	g.model.zeroUsage = true
	res := runner.Run(context.Background(), g.config("read big.txt again and again", runner.Window{Tokens: window}))
	if res.Err != nil {
		t.Fatalf("run failed: %v", res.Err)
	}
	g.model.mu.Lock()
	defer g.model.mu.Unlock()
	if g.model.overflows != 0 || len(g.eventsOf(t, "compaction")) == 0 {
		t.Errorf("%d requests refused as too long, %d compactions: want none refused, some compactions", g.model.overflows, len(g.eventsOf(t, "compaction")))
	}
}

func TestOverflowCompactsAndRetries(t *testing.T) {
	for _, api := range []string{"anthropic", "openai", "openai-chat"} {
		t.Run(api, func(t *testing.T) {
			g := newLongRig(t, api, 40, 9000)
			res := runner.Run(context.Background(), g.config("read big.txt again and again", runner.Window{}))
			if res.Err != nil {
				t.Fatalf("run failed: %v", res.Err)
			}
			// The first refusal compacts; the limit learnt from it (stated,
			// or the last request taken) is the window from then on, so
			// later compactions come at its threshold instead.
			comps := g.eventsOf(t, "compaction")
			if g.model.overflows != 1 || len(comps) == 0 {
				t.Fatalf("%d overflows, %d compactions: want one overflow and compactions", g.model.overflows, len(comps))
			}
			for i, c := range comps {
				if want := map[bool]string{true: "overflow", false: "threshold"}[i == 0]; c["reason"] != want {
					t.Errorf("compaction %d reason %v, want %s", i+1, c["reason"], want)
				}
			}
			if g.model.normal != 40 {
				t.Errorf("%d requests answered, want 40", g.model.normal)
			}
		})
	}
}

// TestNoCompactFailsOnOverflow: --no-compact leaves an overflow a provider
// error, and the session holds no compaction.
func TestNoCompactFailsOnOverflow(t *testing.T) {
	g := newLongRig(t, "anthropic", 40, 9000)
	res := runner.Run(context.Background(), g.config("read big.txt again and again", runner.Window{NoCompact: true}))
	if code, _ := runner.Classify(res.Err); code != runner.ExitProvider {
		t.Fatalf("exit %d (%v), want %d", code, res.Err, runner.ExitProvider)
	}
	if n := len(g.eventsOf(t, "compaction")); n != 0 {
		t.Errorf("%d compactions with NoCompact", n)
	}
}

// TestResumeAfterCompaction: a run that stops right after a compaction
// and a resume of it send requests that extend each other byte for byte:
// the resumed process rebuilds the projection the first one used.
// turnsBeforeCompaction counts the model turns of a session before its
// first compaction entry.
func turnsBeforeCompaction(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(b)) {
		switch {
		case gjson.Get(line, "type").String() == "compaction":
			return n
		case gjson.Get(line, "message.role").String() == "assistant":
			n++
		}
	}
	t.Fatal("the session has no compaction; make the run longer")
	return 0
}

func TestResumeAfterCompaction(t *testing.T) {
	const window = 20000
	for _, api := range []string{"anthropic", "openai", "openai-chat"} {
		t.Run(api, func(t *testing.T) {
			w := runner.Window{Tokens: window}
			// A first run finds the turn the first compaction comes
			// before; the second stops right after that turn's request.
			probe := newLongRig(t, api, 1000, window)
			cfg := probe.config("read big.txt again and again", w)
			cfg.MaxTurns = 60
			turn := turnsBeforeCompaction(t, runner.Run(context.Background(), cfg).SessionPath) + 1
			g := newLongRig(t, api, 1000, window)
			cfg = g.config("read big.txt again and again", w)
			cfg.MaxTurns = turn
			res := runner.Run(context.Background(), cfg)
			if code, _ := runner.Classify(res.Err); code != runner.ExitLimit {
				t.Fatalf("first run: exit %d (%v), want a max-turns stop", code, res.Err)
			}
			if len(g.eventsOf(t, "compaction")) == 0 {
				t.Fatal("no compaction in the first run; make it longer")
			}
			before := lastRequestMessages(t, g.srv, api)
			cfg = g.config("now stop and say done", w)
			cfg.Resume = openResumed(t, res.SessionPath)
			cfg.MaxTurns = 1
			g.model.mu.Lock()
			g.model.turns = 0 // answer at once
			g.model.mu.Unlock()
			res = runner.Run(context.Background(), cfg)
			if res.Err != nil {
				t.Fatalf("resume: %v", res.Err)
			}
			after := lastRequestMessages(t, g.srv, api)
			if !strings.HasPrefix(after, strings.TrimSuffix(before, "]")) {
				t.Errorf("the resumed request does not extend the last one before the stop:\nbefore %.400s…\nafter  %.400s…", before, after)
			}
		})
	}
}

// isSummaryRequest reports whether req is a compaction's summary request.
func isSummaryRequest(req providertest.Request) bool {
	return bytes.Contains(req.Body, []byte("Stop here and write a summary of this conversation"))
}

// sessionFile returns the content of the rig's one session file.
func (g *longRig) sessionFile(t *testing.T) []byte {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(g.store.Dir, "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("%d session files, want 1", len(files))
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// summaryAnswers makes the rig answer its summary requests with answer(k)
// for the k-th (from 1), and every other request as longRun does. It
// records the session file as it was when the first summary request came.
func (g *longRig) summaryAnswers(t *testing.T, answer func(k int, req providertest.Request) providertest.Response) *[]byte {
	var before []byte
	k := 0
	g.srv.RespondWith(func(n int, req providertest.Request) providertest.Response {
		if !isSummaryRequest(req) {
			return g.model.respond(n, req)
		}
		k++
		if k == 1 {
			before = g.sessionFile(t)
		}
		return answer(k, req)
	})
	return &before
}

// checkOnlyRunEntryAdded fails unless after is before plus one run entry
// with exit code 5.
func checkOnlyRunEntryAdded(t *testing.T, before, after []byte) {
	t.Helper()
	if len(before) == 0 {
		t.Fatal("no summary request was made")
	}
	if !bytes.HasPrefix(after, before) {
		t.Fatalf("the session changed before the failed compaction's run entry:\nbefore %d bytes, after %d", len(before), len(after))
	}
	added := strings.Split(strings.TrimSuffix(string(after[len(before):]), "\n"), "\n")
	if len(added) != 1 || gjson.Get(added[0], "type").String() != "run" || gjson.Get(added[0], "exitCode").Int() != 5 {
		t.Fatalf("appended %q, want one run entry with exit code 5", added)
	}
}

// TestCompactionRequestFails: a summary request the server refuses (500,
// or a 400 that is not about length) ends the run with exit 5, and the
// session is byte for byte what it was when that request was sent, plus
// the run entry.
func TestCompactionRequestFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		resp providertest.Response
	}{
		{"500", providertest.Response{Status: 500, Body: []byte(`{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`)}},
		{"400", providertest.Response{Status: 400, Body: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"messages: bad block"}}`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newLongRig(t, "anthropic", 100, 1<<30)
			before := g.summaryAnswers(t, func(int, providertest.Request) providertest.Response { return tc.resp })
			res := runner.Run(context.Background(), g.config("read big.txt again and again", runner.Window{Tokens: 8000}))
			if code, _ := runner.Classify(res.Err); code != runner.ExitProvider || !strings.Contains(res.Err.Error(), "compaction") {
				t.Fatalf("exit %d (%v), want %d naming the compaction", code, res.Err, runner.ExitProvider)
			}
			checkOnlyRunEntryAdded(t, *before, g.sessionFile(t))
			if n := len(g.eventsOf(t, "compaction")); n != 0 {
				t.Errorf("%d compaction events", n)
			}
		})
	}
}

// TestCompactionSummaryOverflows: a summary request that is itself too
// long is sent once more with every large tool result stubbed; when that
// is still too long, the run ends with exit 5 and the session unchanged.
func TestCompactionSummaryOverflows(t *testing.T) {
	tooLong := providertest.Response{Status: 400, Body: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 9999 tokens > 8000 maximum"}}`)}
	t.Run("then fits", func(t *testing.T) {
		g := newLongRig(t, "anthropic", 30, 1<<30)
		var sizes []int
		g.summaryAnswers(t, func(k int, req providertest.Request) providertest.Response {
			sizes = append(sizes, len(req.Body))
			if k == 1 {
				return tooLong
			}
			return providertest.Stream("anthropic", providertest.Turn{Text: "Task: reads.", InputTokens: 100, OutputTokens: 10})
		})
		res := runner.Run(context.Background(), g.config("read big.txt again and again", runner.Window{Tokens: 8000}))
		if res.Err != nil {
			t.Fatalf("run failed: %v", res.Err)
		}
		if len(sizes) < 2 || sizes[1] >= sizes[0]*3/4 {
			t.Errorf("summary request sizes %v: want the retry much smaller than the refused one", sizes)
		}
		if len(g.eventsOf(t, "compaction")) == 0 {
			t.Error("no compaction")
		}
	})
	t.Run("still too long", func(t *testing.T) {
		g := newLongRig(t, "anthropic", 30, 1<<30)
		before := g.summaryAnswers(t, func(int, providertest.Request) providertest.Response { return tooLong })
		res := runner.Run(context.Background(), g.config("read big.txt again and again", runner.Window{Tokens: 8000}))
		if code, _ := runner.Classify(res.Err); code != runner.ExitProvider {
			t.Fatalf("exit %d (%v), want %d", code, res.Err, runner.ExitProvider)
		}
		checkOnlyRunEntryAdded(t, *before, g.sessionFile(t))
	})
}

// TestCompactionAnswerCallsTool: the model answers the summary request
// with a tool call. The tool never runs. With text beside the call, the
// text is the summary; without, the run fails (exit 5) and nothing is
// compacted.
func TestCompactionAnswerCallsTool(t *testing.T) {
	call := providertest.Call{ID: "toolu_sum", Name: "bash", Input: `{"command":"touch pwned"}`}
	t.Run("with text", func(t *testing.T) {
		g := newLongRig(t, "anthropic", 30, 1<<30)
		g.summaryAnswers(t, func(int, providertest.Request) providertest.Response {
			return providertest.Stream("anthropic", providertest.Turn{Text: "Task: read big.txt.", Calls: []providertest.Call{call}, InputTokens: 100, OutputTokens: 10})
		})
		res := runner.Run(context.Background(), g.config("read big.txt again and again", runner.Window{Tokens: 8000}))
		if res.Err != nil {
			t.Fatalf("run failed: %v", res.Err)
		}
		if _, err := os.Stat(filepath.Join(g.work, "pwned")); err == nil {
			t.Error("the tool call in the summary answer ran")
		}
		for _, ev := range g.eventsOf(t, "tool_start") {
			if ev["call_id"] == call.ID {
				t.Errorf("tool_start for the summary answer's call: %v", ev)
			}
		}
		if len(g.eventsOf(t, "compaction")) == 0 {
			t.Fatal("no compaction")
		}
		if !bytes.Contains(g.sessionFile(t), []byte(`"summary":"Task: read big.txt."`)) {
			t.Error("the compaction entry does not hold the answer's text as its summary")
		}
	})
	t.Run("without text", func(t *testing.T) {
		g := newLongRig(t, "anthropic", 30, 1<<30)
		g.model.disobey = 2
		res := runner.Run(context.Background(), g.config("read big.txt again and again", runner.Window{Tokens: 8000}))
		if res.Err != nil {
			t.Fatalf("run failed: %v", res.Err)
		}
		if _, err := os.Stat(filepath.Join(g.work, "pwned")); err == nil {
			t.Error("the tool call in the summary answer ran")
		}
		checkPrunedAlone(t, g)
	})
}

// checkPrunedAlone requires the run to have asked for one summary twice,
// the second time with tool calls forbidden, then said it goes on with
// pruning alone, compacted nothing and pruned, and run every step.
func checkPrunedAlone(t *testing.T, g *longRig) {
	t.Helper()
	var sums []providertest.Request
	for _, r := range g.srv.Requests() {
		if isSummaryRequest(r) {
			sums = append(sums, r)
		}
	}
	if len(sums) != 2 || forbidsTools(sums[0].Body) || !forbidsTools(sums[1].Body) {
		t.Fatalf("%d summary requests; want 2, only the second with tool_choice none", len(sums))
	}
	if n := len(g.eventsOf(t, "compaction")); n != 0 {
		t.Errorf("%d compactions, want none", n)
	}
	notes, alone := g.eventsOf(t, "notice"), 0
	for _, n := range notes {
		if strings.Contains(n["message"].(string), "a call to bash and no text (the tool was not run), and again with tool calls forbidden; nothing was compacted; going on with pruning alone") {
			alone++
		}
	}
	if alone != 1 {
		t.Errorf("notices %v: want one saying the run goes on with pruning alone", notes)
	}
	if len(g.eventsOf(t, "prune")) == 0 {
		t.Error("no prune after the summary failed")
	}
	if g.model.normal != g.model.turns {
		t.Errorf("%d steps answered, want %d", g.model.normal, g.model.turns)
	}
}

// TestCompactionRetriesWithToolsForbidden: on every API, a summary answer
// that is a tool call alone is asked again with tool_choice none, and the
// answer to that is the summary. Only the second request forbids tools.
func TestCompactionRetriesWithToolsForbidden(t *testing.T) {
	for _, api := range []string{"anthropic", "openai", "openai-chat"} {
		t.Run(api, func(t *testing.T) {
			g := newLongRig(t, api, 40, 1<<30)
			g.model.disobey = 1
			res := runner.Run(context.Background(), g.config("read big.txt again and again", runner.Window{Tokens: 8000}))
			if res.Err != nil {
				t.Fatalf("run failed: %v", res.Err)
			}
			comps := g.eventsOf(t, "compaction")
			var sums []providertest.Request
			for _, r := range g.srv.Requests() {
				if isSummaryRequest(r) {
					sums = append(sums, r)
				}
			}
			if len(comps) == 0 || len(sums) != 2*len(comps) {
				t.Fatalf("%d compactions from %d summary requests: want some, two requests each", len(comps), len(sums))
			}
			for i, r := range sums {
				if forbidsTools(r.Body) != (i%2 == 1) {
					t.Errorf("summary request %d: tool_choice none is %v", i+1, forbidsTools(r.Body))
				}
				if len(gjson.GetBytes(r.Body, "tools").Array()) == 0 {
					t.Errorf("summary request %d offers no tools", i+1)
				}
			}
			if len(g.eventsOf(t, "notice")) != 0 || g.model.normal != 40 {
				t.Errorf("notices %v, %d steps: want none and 40", g.eventsOf(t, "notice"), g.model.normal)
			}
			if _, err := os.Stat(filepath.Join(g.work, "pwned")); err == nil {
				t.Error("a tool call in a summary answer ran")
			}
		})
	}
}

// TestOverflowWithoutSummaryPrunesAll: the server refuses a request as too
// long and will not summarise: every large result is stubbed, the latest
// included, and the request is sent again; when nothing is left to stub,
// the refusal ends the run with exit 5.
func TestOverflowWithoutSummaryPrunesAll(t *testing.T) {
	g := newLongRig(t, "openai-chat", 12, 6000)
	g.model.disobey = 2
	res := runner.Run(context.Background(), g.config("read big.txt again and again", runner.Window{}))
	if res.Err != nil {
		t.Fatalf("run failed: %v", res.Err)
	}
	if g.model.overflows == 0 {
		t.Fatal("no request was refused")
	}
	checkPrunedAlone(t, g)

	g = newLongRig(t, "openai-chat", 12, 1500)
	g.model.disobey = 2
	res = runner.Run(context.Background(), g.config("read big.txt again and again", runner.Window{}))
	if code, _ := runner.Classify(res.Err); code != runner.ExitProvider {
		t.Fatalf("exit %d (%v), want %d", code, res.Err, runner.ExitProvider)
	}
}

// TestSummaryNotShorterPrunes: a summary no shorter than the conversation
// it would replace (a small conversation, a model that wrote at length) is
// not appended: compaction never makes the request longer. The run says
// so and goes on with pruning alone, on a refusal as too long and at the
// threshold alike, and finishes.
func TestSummaryNotShorterPrunes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limit  int64
		window runner.Window
	}{
		{"overflow", 6000, runner.Window{}},
		{"threshold", 1 << 30, runner.Window{Tokens: 8000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newLongRig(t, "anthropic", 12, tc.limit)
			g.model.summary = strings.Repeat("Everything read so far, again and at length. ", 800)
			res := runner.Run(context.Background(), g.config("read big.txt again and again", tc.window))
			if res.Err != nil {
				t.Fatalf("run failed: %v\n%s", res.Err, g.events.String())
			}
			for _, c := range g.eventsOf(t, "compaction") {
				t.Errorf("compaction appended (%v): tokens before %v, after %v", c["reason"], c["tokens_before"], c["tokens_after"])
			}
			if bytes.Contains(g.sessionFile(t), []byte(`"type":"compaction"`)) {
				t.Error("the session holds a compaction")
			}
			if g.model.summaries == 0 {
				t.Fatal("no summary was asked for")
			}
			var said bool
			for _, n := range g.eventsOf(t, "notice") {
				said = said || strings.Contains(n["message"].(string), "not shorter") && strings.Contains(n["message"].(string), "going on with pruning alone")
			}
			if !said {
				t.Errorf("no notice that the summary was not shorter: %v", g.eventsOf(t, "notice"))
			}
			if !bytes.Contains(g.sessionFile(t), []byte(`"type":"prune"`)) {
				t.Error("nothing was pruned instead")
			}
		})
	}
}

// TestResumeOverThresholdCompactsFirst: a session that grew without a
// window, resumed with one it already passes, is estimated from its bytes
// (no usage is known to this process) and compacted before the resumed
// run's first request.
func TestResumeOverThresholdCompactsFirst(t *testing.T) {
	g := newLongRig(t, "anthropic", 8, 1<<30)
	res := runner.Run(context.Background(), g.config("read big.txt again and again", runner.Window{}))
	if res.Err != nil || len(g.eventsOf(t, "compaction")) != 0 {
		t.Fatalf("first run: %v, %d compactions; want none", res.Err, len(g.eventsOf(t, "compaction")))
	}
	first := len(g.srv.Requests())
	sess, err := session.Load(res.SessionPath)
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	for _, m := range projection.Project(sess.ActivePath()) {
		for _, b := range m.Content {
			size += len(b.Text) + len(b.Content) + len(b.Input)
		}
	}
	// Pruning cannot bring the history under 80% of this window: the two
	// latest reads stay whole.
	const window = 4000
	if float64(size)/projection.BytesPerToken < 0.8*window {
		t.Fatalf("the history is %d bytes: too small for the test", size)
	}

	cfg := g.config("and now stop", runner.Window{Tokens: window})
	cfg.Resume = openResumed(t, res.SessionPath)
	g.model.mu.Lock()
	g.model.turns = 0 // answer at once
	g.model.mu.Unlock()
	g.events.Reset()
	res = runner.Run(context.Background(), cfg)
	if res.Err != nil {
		t.Fatalf("resume: %v", res.Err)
	}
	reqs := g.srv.Requests()[first:]
	if len(reqs) != 2 || !isSummaryRequest(reqs[0]) || isSummaryRequest(reqs[1]) {
		t.Fatalf("the resumed run sent %d requests; want the summary request, then the real one", len(reqs))
	}
	comps := g.eventsOf(t, "compaction")
	if len(comps) != 1 || comps[0]["reason"] != "threshold" {
		t.Fatalf("compactions %v, want one at the threshold", comps)
	}
	if b := comps[0]["tokens_before"].(float64); b < 0.8*window || b > float64(size)/projection.BytesPerToken*1.2 {
		t.Errorf("tokens_before %.0f: want the bytes estimate of %d bytes, over 80%% of %d", b, size, window)
	}
	if !bytes.Contains(reqs[1].Body, []byte("<awl-compaction>")) {
		t.Error("the resumed run's request does not carry the summary")
	}
	// The prompt that came before the compaction is still what the
	// request ends with, though the turn before it was too large to keep.
	msgs := gjson.GetBytes(reqs[1].Body, "messages").Array()
	if last := msgs[len(msgs)-1].Get("content.0.text").Str; last != "and now stop" {
		t.Errorf("the request after the compaction ends with %q, not the prompt", last)
	}
}

// TestCompactionAndLimits: a summary request is no turn for --max-turns,
// but its tokens and cost count toward the budgets, which are checked
// again before the request it was made for.
func TestCompactionAndLimits(t *testing.T) {
	t.Run("max turns", func(t *testing.T) {
		g := newLongRig(t, "anthropic", 1000, 1<<30)
		cfg := g.config("read big.txt again and again", runner.Window{Tokens: 8000})
		cfg.MaxTurns = 25
		res := runner.Run(context.Background(), cfg)
		if code, reason := runner.Classify(res.Err); code != runner.ExitLimit || reason != "max_turns" {
			t.Fatalf("exit %d %s (%v), want a max-turns stop", code, reason, res.Err)
		}
		g.model.mu.Lock()
		defer g.model.mu.Unlock()
		if g.model.summaries == 0 {
			t.Fatal("no compaction in 25 turns; make the window smaller")
		}
		if g.model.normal != 25 || res.Turns != 25 {
			t.Errorf("%d normal requests, %d turns reported, with %d summaries: want 25 and 25", g.model.normal, res.Turns, g.model.summaries)
		}
	})
	t.Run("cost", func(t *testing.T) {
		g := newLongRig(t, "anthropic", 1000, 1<<30)
		prices := filepath.Join(t.TempDir(), "prices.json")
		// $1 per million input tokens (m-1 is asked for, the fake server
		// answers as fake-model): the summary request reports a million,
		// so it costs $1 alone.
		if err := os.WriteFile(prices, []byte(`{"models":[{"provider":"anthropic","model":"m-1","input":1,"output":0},{"provider":"anthropic","model":"fake-model","input":1,"output":0}]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		table, err := modelinfo.Load(prices)
		if err != nil {
			t.Fatal(err)
		}
		g.summaryAnswers(t, func(int, providertest.Request) providertest.Response {
			return providertest.Stream("anthropic", providertest.Turn{Text: "Task: reads.", InputTokens: 1_000_000, OutputTokens: 10})
		})
		cfg := g.config("read big.txt again and again", runner.Window{Tokens: 8000})
		cfg.Prices, cfg.MaxCostUSD = table, 0.5
		res := runner.Run(context.Background(), cfg)
		if code, reason := runner.Classify(res.Err); code != runner.ExitLimit || reason != "budget" {
			t.Fatalf("exit %d %s (%v), want a budget stop", code, reason, res.Err)
		}
		reqs := g.srv.Requests()
		if !isSummaryRequest(reqs[len(reqs)-1]) {
			t.Error("the run sent a request after the summary request that spent its budget")
		}
		if res.CostUSD == nil || *res.CostUSD < 1 {
			t.Errorf("cost %v, want the summary request's $1 counted", res.CostUSD)
		}
		if len(g.eventsOf(t, "compaction")) != 1 {
			t.Error("the paid-for compaction was not kept")
		}
		if want := fmt.Sprintf("stopped before request %d:", res.Turns+1); !strings.Contains(res.Err.Error(), want) {
			t.Errorf("error %q, want it to say %q", res.Err, want)
		}
	})
	t.Run("tokens", func(t *testing.T) {
		g := newLongRig(t, "anthropic", 1000, 1<<30)
		g.summaryAnswers(t, func(int, providertest.Request) providertest.Response {
			return providertest.Stream("anthropic", providertest.Turn{Text: "Task: reads.", InputTokens: 5_000_000, OutputTokens: 10})
		})
		cfg := g.config("read big.txt again and again", runner.Window{Tokens: 8000})
		cfg.MaxTotalTokens = 4_000_000
		res := runner.Run(context.Background(), cfg)
		if code, reason := runner.Classify(res.Err); code != runner.ExitLimit || reason != "budget" {
			t.Fatalf("exit %d %s (%v), want a budget stop", code, reason, res.Err)
		}
		if res.Usage.Input < 5_000_000 {
			t.Errorf("usage %+v, want the summary request's tokens counted", res.Usage)
		}
	})
}

// compactedLines runs a long run of at most turns turns, the server
// reporting inflate times its token count, and returns its session's
// lines and the indexes of its compaction entries, in order.
func compactedLines(t *testing.T, window int64, turns int, inflate int64) ([]string, []int) {
	t.Helper()
	probe := newLongRig(t, "anthropic", 1000, window)
	probe.model.inflate = inflate
	cfg := probe.config("read big.txt again and again", runner.Window{Tokens: window})
	cfg.MaxTurns = turns
	full, err := os.ReadFile(runner.Run(context.Background(), cfg).SessionPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(full), "\n")
	var comps []int
	for i, l := range lines {
		if gjson.Get(l, "type").String() == "compaction" {
			comps = append(comps, i)
		}
	}
	if len(comps) == 0 {
		t.Fatal("no compaction in the first run; make it longer")
	}
	return lines, comps
}

// TestKilledMidCompaction: awl killed while writing a compaction leaves the
// compaction entry without all of the context rebuilt after it. Cut the
// session there (right after the entry, and after its first context
// message) and resume: the incomplete compaction is not in force, so the
// resumed request still carries the system prompt, the run compacts again
// and completes.
func TestKilledMidCompaction(t *testing.T) {
	const window = 20000
	lines, comps := compactedLines(t, window, 60, 1)
	comp := comps[len(comps)-1]
	if n := gjson.Get(lines[comp], "contextMessages").Int(); n < 1 || gjson.Get(lines[comp+int(n)+1], "type").String() != "turnContext" {
		t.Fatalf("compaction entry %s is not followed by its %d context messages and baseline", lines[comp], n)
	}
	for _, cut := range []int{comp + 1, comp + 2} {
		t.Run(fmt.Sprintf("after line %d", cut), func(t *testing.T) {
			g := newLongRig(t, "anthropic", 1000, window)
			path := filepath.Join(t.TempDir(), "cut.jsonl")
			if err := os.WriteFile(path, []byte(strings.Join(lines[:cut], "")), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := g.config("now stop and say done", runner.Window{Tokens: window})
			cfg.Resume = openResumed(t, path)
			g.model.turns = 0 // answer at once
			res := runner.Run(context.Background(), cfg)
			if res.Err != nil {
				t.Fatalf("resume: %v", res.Err)
			}
			reqs := g.srv.Requests()
			last := reqs[len(reqs)-1].Body
			if sys := gjson.GetBytes(last, "system").Raw; !strings.Contains(sys, "You are awl") {
				t.Errorf("the resumed request has no system prompt: system = %.200s", sys)
			}
			if g.model.summaries != 1 {
				t.Errorf("%d summary requests on resume, want 1: the history is over the threshold again", g.model.summaries)
			}
			// The history is over the threshold before the resume's
			// first request: that request is the summary's, never one
			// sent over the threshold first.
			if len(reqs) == 0 || !bytes.Contains(reqs[0].Body, []byte("Stop here and write a summary of this conversation")) {
				t.Errorf("the resume's first request is not the summary request: %d requests, the first %.300s", len(reqs), reqs[0].Body)
			}
			if n := len(reqs); n != 2 {
				t.Errorf("%d requests on resume, want 2: the summary, then the prompt's", n)
			}
			sess, err := session.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			if got := project(t, "anthropic", projection.Project(sess.ActivePath()[:len(sess.ActivePath())-2])); !strings.HasPrefix(got, `[{"role":"user","content":[{"type":"text","text":"<environment_context>`) {
				t.Errorf("the reopened session does not project its rebuilt context first: %.200s", got)
			}
		})
	}
}

// TestKilledAfterCompactionEntryCompactsFirst: awl killed right after a
// compaction entry, before the context rebuilt after it, leaves a
// compaction that is not in force: the history is as long as when the
// run chose to compact, by the provider's own count of its last request
// (here twice what the bytes suggest). The resume estimates from that
// count, as the killed run did, so its first request is the summary
// request, never one sent over the threshold first.
func TestKilledAfterCompactionEntryCompactsFirst(t *testing.T) {
	const window = 20000
	lines, comps := compactedLines(t, window, 40, 2)
	comp := comps[0]
	g := newLongRig(t, "anthropic", 1000, window)
	g.model.inflate = 2
	path := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines[:comp+1], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := g.config("now stop and say done", runner.Window{Tokens: window})
	cfg.Resume = openResumed(t, path)
	g.model.turns = 0 // answer at once
	if res := runner.Run(context.Background(), cfg); res.Err != nil {
		t.Fatalf("resume: %v", res.Err)
	}
	reqs := g.srv.Requests()
	if len(reqs) == 0 || !bytes.Contains(reqs[0].Body, []byte("Stop here and write a summary of this conversation")) {
		t.Fatalf("the resume's first request is not the summary request (%d requests, %d summaries): it was sent over the threshold", len(reqs), g.model.summaries)
	}
}

// TestLongRunRealLimits: a 300-step run on each API, where the model
// table says 200k but the server refuses over 20k as the real APIs do,
// and the model answers every summary request that lets it call tools
// with a tool call. The run learns the limit from the first refusal,
// records it, compacts to fit it (each summary asked twice, the second
// time with tool_choice none), and completes: every step run once, no
// request but the first refused over the limit.
func TestLongRunRealLimits(t *testing.T) {
	const table, limit, turns = 200000, 20000, 300
	for _, api := range []string{"anthropic", "openai", "openai-chat"} {
		t.Run(api, func(t *testing.T) {
			t.Parallel() // each waits mostly on the session's fsyncs
			g := newLongRig(t, api, turns, limit)
			g.model.disobey = 1
			res := runner.Run(context.Background(), g.config("read big.txt again and again", runner.Window{Tokens: table}))
			if res.Err != nil {
				t.Fatalf("run failed: %v", res.Err)
			}
			m := g.model
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.normal != turns || m.overflows != 1 {
				t.Fatalf("%d steps answered, %d requests refused as too long; want %d and 1", m.normal, m.overflows, turns)
			}
			calls := map[string]int{}
			for _, ev := range g.eventsOf(t, "tool_end") {
				calls[ev["call_id"].(string)]++
			}
			for id, n := range calls {
				if n != 1 {
					t.Errorf("call %s ran %d times", id, n)
				}
			}
			if len(calls) != turns-1 {
				t.Errorf("%d calls ran, want %d", len(calls), turns-1)
			}
			comps, prunes := g.eventsOf(t, "compaction"), g.eventsOf(t, "prune")
			if len(comps) == 0 || m.summaries != 2*len(comps) {
				t.Errorf("%d compactions from %d summary requests: want two requests each", len(comps), m.summaries)
			}
			file := g.sessionFile(t)
			var lim []string
			for line := range strings.Lines(string(file)) {
				if gjson.Get(line, "type").String() == runner.TypeContextLimit {
					lim = append(lim, gjson.Get(line, "tokens").Raw+" "+gjson.Get(line, "stated").Raw)
				}
			}
			if len(lim) != 1 || api != "openai" && lim[0] != "20000 true" || api == "openai" && !strings.HasSuffix(lim[0], " false") {
				t.Errorf("contextLimit entries %v", lim)
			}
			t.Logf("%s: %d compactions, %d prunes, %d requests (%d summary), %d refused", api, len(comps), len(prunes), len(g.srv.Requests()), m.summaries, m.overflows)
		})
	}
}

// TestLearnedLimitSurvivesResume: the limit a refusal stated is in the
// session; a resumed run, with the table's larger window again, keeps
// every request under it.
func TestLearnedLimitSurvivesResume(t *testing.T) {
	g := newLongRig(t, "anthropic", 40, 9000)
	res := runner.Run(context.Background(), g.config("read big.txt again and again", runner.Window{Tokens: 200000}))
	if res.Err != nil || g.model.overflows != 1 {
		t.Fatalf("first run: %v, %d refused; want one refused", res.Err, g.model.overflows)
	}
	g.model.mu.Lock()
	g.model.normal, g.model.overflows = 0, 0
	g.model.mu.Unlock()
	cfg := g.config("and again", runner.Window{Tokens: 200000})
	cfg.Resume = openResumed(t, res.SessionPath)
	res = runner.Run(context.Background(), cfg)
	if res.Err != nil {
		t.Fatalf("resume: %v", res.Err)
	}
	if g.model.overflows != 0 || g.model.normal != 40 {
		t.Errorf("resumed run: %d refused, %d steps; want none refused and 40 steps", g.model.overflows, g.model.normal)
	}
}

// TestCompactionKeepsTheUnansweredPrompt: a run stopped right after a
// large tool result (--max-turns) is resumed with a prompt in a window
// too small to keep that result; the compaction keeps nothing of the
// turn, yet the request after it still ends with the prompt itself, not
// only the model's summary of it.
func TestCompactionKeepsTheUnansweredPrompt(t *testing.T) {
	for _, api := range []string{"anthropic", "openai", "openai-chat"} {
		t.Run(api, func(t *testing.T) {
			after := resumeAfterLargeTurn(t, api, "and now stop")
			msgs := gjson.GetBytes(after.Body, wires[api].messages).Array()
			if last := msgs[len(msgs)-1].Raw; !strings.Contains(last, `"and now stop"`) {
				t.Errorf("the request after the compaction ends with %.200s", last)
			}
		})
	}
}

// TestCompactionSummarisesAPromptTooLargeToKeep: the resumed prompt after
// a turn too large to keep is itself larger than a fifth of the window:
// it is not kept whole (the request would stay as long), the summary
// replaces it with the turn before it.
func TestCompactionSummarisesAPromptTooLargeToKeep(t *testing.T) {
	big := "and now stop " + strings.Repeat("with many more words ", 400)
	after := resumeAfterLargeTurn(t, "anthropic", big)
	if bytes.Contains(after.Body, []byte("with many more words with many more words")) {
		t.Error("the request after the compaction still carries the prompt too large to keep")
	}
}

// resumeAfterLargeTurn runs a turn that reads a large file and stops
// there (--max-turns 1), resumes it with prompt in a 4,000-token window
// the turn does not fit a fifth of, and returns the request sent after
// the summary request the resume must start with.
func resumeAfterLargeTurn(t *testing.T, api, prompt string) providertest.Request {
	t.Helper()
	g := newLongRig(t, api, 8, 1<<30)
	cfg := g.config("read big.txt", runner.Window{})
	cfg.MaxTurns = 1
	res := runner.Run(context.Background(), cfg)
	first := len(g.srv.Requests())
	cfg = g.config(prompt, runner.Window{Tokens: 4000})
	cfg.Resume = openResumed(t, res.SessionPath)
	g.model.mu.Lock()
	g.model.turns = 0 // answer at once
	g.model.mu.Unlock()
	if res = runner.Run(context.Background(), cfg); res.Err != nil {
		t.Fatalf("resume: %v", res.Err)
	}
	reqs := g.srv.Requests()[first:]
	if len(reqs) != 2 || !isSummaryRequest(reqs[0]) {
		t.Fatalf("%d requests; want the summary request and the real one", len(reqs))
	}
	return reqs[1]
}
