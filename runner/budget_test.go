package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/modelinfo"
	"github.com/awlrun/awl/runner/tool"
	"github.com/awlrun/awl/session"
)

// budgetRig runs prompts against a fake Anthropic server, in one session.
type budgetRig struct {
	t      *testing.T
	work   string
	store  *session.Store
	srv    *providertest.Server
	prov   provider.Provider
	path   string
	events bytes.Buffer
}

func newBudgetRig(t *testing.T) *budgetRig {
	t.Helper()
	srv := providertest.New()
	t.Cleanup(srv.Close)
	prov, err := provider.New("anthropic", provider.Options{APIKey: "k", BaseURL: srv.URL, MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	return &budgetRig{t: t, work: t.TempDir(), store: &session.Store{Dir: filepath.Join(t.TempDir(), "sessions")}, srv: srv, prov: prov}
}

// toolTurns queues n turns that each call bash, then a final answer; each
// reports 1000 input and 100 output tokens.
func (g *budgetRig) toolTurns(n int, model string) {
	for range n {
		g.srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{Model: model, Calls: []providertest.Call{{ID: "c", Name: "bash", Input: `{"command":"true"}`}}, InputTokens: 1000, OutputTokens: 100}))
	}
	g.srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{Model: model, Text: "done", InputTokens: 1000, OutputTokens: 100}))
}

func (g *budgetRig) run(ctx context.Context, model string, set func(*runner.Config)) runner.Result {
	g.events.Reset()
	cfg := runner.Config{
		Store: g.store, Cwd: g.work, Resume: openResumed(g.t, g.path), Prompt: "go",
		Provider: g.prov, Model: model,
		Tools:  tool.Builtins(tool.Env{Dir: g.work}),
		Prices: modelinfo.Default(), Version: "test",
		Events: event.NewEmitter(&g.events, nil),
		Getenv: func(string) string { return "" },
	}
	if set != nil {
		set(&cfg)
	}
	res := runner.Run(ctx, cfg)
	if res.SessionPath != "" {
		g.path = res.SessionPath
	}
	return res
}

func (g *budgetRig) result() gjson.Result {
	lines := strings.Split(strings.TrimSpace(g.events.String()), "\n")
	last := gjson.Parse(lines[len(lines)-1])
	if last.Get("type").String() != "result" {
		g.t.Fatalf("last event is %s", last.Raw)
	}
	return last
}

// entries returns the session's lines of type typ.
func (g *budgetRig) entries(typ string) []gjson.Result {
	data, err := os.ReadFile(g.path)
	if err != nil {
		g.t.Fatal(err)
	}
	var out []gjson.Result
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if r := gjson.Parse(l); r.Get("type").String() == typ {
			out = append(out, r)
		}
	}
	return out
}

// sonnet is claude-sonnet-4-5's price of one canned turn: 1000 input
// tokens at $3 and 100 output tokens at $15 per million.
const sonnetTurn = (1000*3.0 + 100*15.0) / 1e6

func TestCostIsPricedPerRequestStoredAndSummed(t *testing.T) {
	g := newBudgetRig(t)
	g.toolTurns(2, "claude-sonnet-4-5-20250929")
	res := g.run(context.Background(), "claude-sonnet-4-5", nil)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	want := modelinfo.Round(3 * sonnetTurn)
	if res.CostUSD == nil || *res.CostUSD != want {
		t.Fatalf("cost = %v, want %v", res.CostUSD, want)
	}
	if got := g.result().Get("cost_usd"); got.Float() != want {
		t.Errorf("result cost_usd = %s, want %v", got.Raw, want)
	}
	n := 0
	for _, e := range g.entries("message") {
		if e.Get("message.role").String() == "assistant" {
			n++
			if c := e.Get("message.costUsd"); c.Float() != sonnetTurn {
				t.Errorf("assistant entry costUsd = %s, want %v", c.Raw, sonnetTurn)
			}
		}
	}
	if n != 3 {
		t.Fatalf("%d assistant entries", n)
	}
	runs := g.entries("run")
	if len(runs) != 1 || runs[0].Get("costUsd").Float() != want || runs[0].Get("exitCode").Int() != 0 {
		t.Fatalf("run entries: %v", runs)
	}
}

func TestUnknownModelCostIsNull(t *testing.T) {
	g := newBudgetRig(t)
	g.toolTurns(1, "m-unknown")
	res := g.run(context.Background(), "m-unknown", nil)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.CostUSD != nil {
		t.Errorf("cost = %v, want unknown", *res.CostUSD)
	}
	if got := g.result().Get("cost_usd"); got.Type != gjson.Null || !got.Exists() {
		t.Errorf("result cost_usd = %q, want null", got.Raw)
	}
	for _, e := range g.entries("message") {
		if e.Get("message.costUsd").Exists() {
			t.Errorf("an entry of an unpriced model has a cost: %s", e.Raw)
		}
	}
	if r := g.entries("run")[0].Get("costUsd"); r.Type != gjson.Null || !r.Exists() {
		t.Errorf("run entry costUsd = %q, want null", r.Raw)
	}
}

// TestAnswerFromAnUnpricedModel: a request is priced as the model its
// answer names. A server that answers a priced model's request in the
// name of one the table lacks (a gateway's own name) leaves that request's
// cost, and the run's, unknown (null, never 0 and never the asked model's
// price); with --max-cost-usd the run stops before its next request, and
// the error names the model and the way out.
func TestAnswerFromAnUnpricedModel(t *testing.T) {
	g := newBudgetRig(t)
	g.toolTurns(1, "gateway-sonnet-x")
	res := g.run(context.Background(), "claude-sonnet-4-5", nil)
	if res.Err != nil || res.CostUSD != nil {
		t.Fatalf("err %v, cost %v: want no error and an unknown cost", res.Err, res.CostUSD)
	}
	if got := g.result().Get("cost_usd"); got.Type != gjson.Null {
		t.Errorf("result cost_usd = %s, want null", got.Raw)
	}
	for _, e := range g.entries("message") {
		if e.Get("message.role").String() == "assistant" && e.Get("message.costUsd").Exists() {
			t.Errorf("an answer of an unpriced model has a cost: %s", e.Raw)
		}
	}

	g = newBudgetRig(t)
	g.toolTurns(3, "gateway-sonnet-x")
	res = g.run(context.Background(), "claude-sonnet-4-5", func(c *runner.Config) { c.MaxCostUSD = 1 })
	if code, reason := runner.Classify(res.Err); code != 6 || reason != "budget" {
		t.Fatalf("exit %d %s (%v), want 6 budget", code, reason, res.Err)
	}
	if n := len(g.srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1: the budget cannot be kept after the first answer", n)
	}
	want := `stopped before request 2: the cost of request 1 is not known (it was answered by anthropic model "gateway-sonnet-x", which has no price (give one with --pricing FILE)), so --max-cost-usd $1.0000 cannot be kept`
	if res.Err.Error() != want {
		t.Errorf("error:\n%s\nwant\n%s", res.Err, want)
	}
	// An answer without usage.
	g = newBudgetRig(t)
	g.srv.Enqueue(providertest.Response{
		Body: []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[]}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"c\",\"name\":\"bash\",\"input\":{}}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"command\\\":\\\"true\\\"}\"}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")})
	res = g.run(context.Background(), "claude-sonnet-4-5", func(c *runner.Config) { c.MaxCostUSD = 1 })
	if res.Err == nil || !strings.Contains(res.Err.Error(), "the cost of request 1 is not known (its answer reported no usage)") {
		t.Errorf("no usage: %v", res.Err)
	}
}

func TestCostBudgetStopsBeforeARequestAndTheSessionResumes(t *testing.T) {
	g := newBudgetRig(t)
	g.toolTurns(5, "claude-sonnet-4-5")
	// Two requests cost 0.009; the budget is reached, the third is not sent.
	res := g.run(context.Background(), "claude-sonnet-4-5", func(c *runner.Config) { c.MaxCostUSD = 0.009 })
	code, reason := runner.Classify(res.Err)
	if code != 6 || reason != "budget" {
		t.Fatalf("exit %d %s (%v), want 6 budget", code, reason, res.Err)
	}
	if got := len(g.srv.Requests()); got != 2 {
		t.Fatalf("%d requests, want 2", got)
	}
	if !strings.Contains(res.Err.Error(), "$0.0090") || !strings.Contains(res.Err.Error(), "--max-cost-usd $0.0090") {
		t.Errorf("the error does not show the cost: %v", res.Err)
	}
	r := g.result()
	if r.Get("exit_code").Int() != 6 || r.Get("reason").String() != "budget" || r.Get("cost_usd").Float() != modelinfo.Round(2*sonnetTurn) {
		t.Errorf("result: %s", r.Raw)
	}
	run := g.entries("run")[0]
	if run.Get("exitCode").Int() != 6 || run.Get("reason").String() != "budget" || run.Get("flags.maxCostUsd").Float() != 0.009 {
		t.Errorf("run entry: %s", run.Raw)
	}
	// A budget counts this run only: the resumed run has its own.
	res = g.run(context.Background(), "claude-sonnet-4-5", func(c *runner.Config) { c.MaxCostUSD = 0.009 })
	if code, _ := runner.Classify(res.Err); code != 6 || len(g.srv.Requests()) != 4 {
		t.Fatalf("resumed run: %v after %d requests", res.Err, len(g.srv.Requests()))
	}
	res = g.run(context.Background(), "claude-sonnet-4-5", nil)
	if res.Err != nil || res.Text != "done" {
		t.Fatalf("resume without a budget: %v %q", res.Err, res.Text)
	}
}

func TestTokenBudget(t *testing.T) {
	g := newBudgetRig(t)
	g.toolTurns(5, "")
	res := g.run(context.Background(), "m-unknown", func(c *runner.Config) { c.MaxTotalTokens = 3300 })
	if _, reason := runner.Classify(res.Err); reason != "budget" {
		t.Fatalf("%v", res.Err)
	}
	if got := len(g.srv.Requests()); got != 3 {
		t.Fatalf("%d requests, want 3 (1100 tokens each, stop at 3300)", got)
	}
	if !strings.Contains(res.Err.Error(), "3300 tokens") {
		t.Errorf("error: %v", res.Err)
	}
}

func TestCostBudgetForAnUnpricedModelIsRefusedUpFront(t *testing.T) {
	g := newBudgetRig(t)
	res := g.run(context.Background(), "m-unknown", func(c *runner.Config) { c.MaxCostUSD = 1 })
	var ue *runner.UsageError
	if !errors.As(res.Err, &ue) || !strings.Contains(res.Err.Error(), "--pricing") {
		t.Fatalf("err = %v", res.Err)
	}
	if len(g.srv.Requests()) != 0 || res.SessionPath != "" {
		t.Errorf("a request was sent or a session created")
	}
}

// TestWrapUpNoticeOnceAndPrefixHolds: the notice is appended once, before
// the request it first applies to, and every request still extends the one
// before byte for byte.
func TestWrapUpNoticeOnceAndPrefixHolds(t *testing.T) {
	for _, c := range []struct {
		name   string
		set    func(*runner.Config)
		before int // the first request that carries the notice
		want   string
	}{
		{"turns", func(c *runner.Config) { c.MaxTurns = 4 }, 4, "1 of 4 model requests left"},
		// 1100 tokens a turn: after 5 turns 5500 of 6000 are used, less
		// than one more turn's worth left.
		{"tokens", func(c *runner.Config) { c.MaxTotalTokens = 6000 }, 6, "5500 of 6000 tokens used"},
		// $0.0045 a turn: after 3 turns $0.0135 of $0.018 is spent.
		{"cost", func(c *runner.Config) { c.MaxCostUSD = 0.018 }, 4, "$0.0135 of $0.0180 spent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newBudgetRig(t)
			g.toolTurns(7, "claude-sonnet-4-5-20250929")
			res := g.run(context.Background(), "claude-sonnet-4-5", c.set)
			if _, reason := runner.Classify(res.Err); reason != "max_turns" && reason != "budget" {
				t.Fatalf("%v", res.Err)
			}
			reqs := g.srv.Requests()
			var prev []string
			for i, rq := range reqs {
				body := string(rq.Body)
				n := strings.Count(body, "<budget_notice>")
				want := 0
				if i+1 >= c.before {
					want = 1
				}
				if n != want {
					t.Fatalf("request %d carries the notice %d times, want %d", i+1, n, want)
				}
				var cur []string
				for _, m := range gjson.GetBytes(rq.Body, "messages").Array() {
					cur = append(cur, strip(m.Raw))
				}
				for j := range prev {
					if cur[j] != prev[j] {
						t.Fatalf("request %d: message %d changed", i+1, j)
					}
				}
				prev = cur
			}
			if len(reqs) < c.before {
				t.Fatalf("only %d requests", len(reqs))
			}
			var notices []string
			for _, e := range g.entries("message") {
				if txt := e.Get("message.content.0.text").String(); strings.HasPrefix(txt, "<budget_notice>") {
					notices = append(notices, txt)
				}
			}
			if len(notices) != 1 || !strings.Contains(notices[0], c.want) {
				t.Fatalf("notices in the log: %q, want one saying %q", notices, c.want)
			}
		})
	}
}

func TestWrapUpNoticeForTime(t *testing.T) {
	g := newBudgetRig(t)
	g.toolTurns(8, "claude-sonnet-4-5")
	// A clock that advances 10s per reading against a deadline 150s away:
	// the turns look long, and soon less than one is left.
	now := time.Now()
	clock := func() time.Time { now = now.Add(10 * time.Second); return now }
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(150*time.Second))
	defer cancel()
	res := g.run(ctx, "claude-sonnet-4-5", func(c *runner.Config) { c.Now = clock })
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	n := 0
	for _, e := range g.entries("message") {
		if strings.Contains(e.Get("message.content.0.text").String(), "left (--timeout)") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d time notices, want 1", n)
	}
}

// sigCause is a context cause as cmd/awl's SignalError is: an ExitCoder
// whose code the run entry must carry.
type sigCause struct{ sig os.Signal }

func (s sigCause) Error() string      { return "interrupted by " + s.sig.String() }
func (s sigCause) ExitCode() int      { return 130 }
func (s sigCause) ExitReason() string { return "interrupted" }

// TestRunEntryAfterEveryEnding: every ending of a run that holds the
// session appends exactly one run entry, last, with the result's code.
func TestRunEntryAfterEveryEnding(t *testing.T) {
	for _, c := range []struct {
		name   string
		queue  func(g *budgetRig)
		ctx    func() (context.Context, context.CancelFunc)
		set    func(*runner.Config)
		code   int
		reason string
	}{
		{name: "completed", queue: func(g *budgetRig) { g.toolTurns(0, "") }, code: 0, reason: "completed"},
		{name: "max_turns", queue: func(g *budgetRig) { g.toolTurns(3, "") }, set: func(c *runner.Config) { c.MaxTurns = 1 }, code: 6, reason: "max_turns"},
		{name: "budget", queue: func(g *budgetRig) { g.toolTurns(3, "") }, set: func(c *runner.Config) { c.MaxTotalTokens = 1 }, code: 6, reason: "budget"},
		{name: "provider", queue: func(g *budgetRig) {
			g.srv.Enqueue(providertest.Response{Status: 400, Body: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`)})
		}, code: 5, reason: "provider_error"},
		{name: "sigterm", queue: func(g *budgetRig) {
			g.srv.Enqueue(providertest.Response{Delay: time.Hour, Body: []byte("x")})
		}, ctx: func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancelCause(context.Background())
			time.AfterFunc(200*time.Millisecond, func() { cancel(sigCause{os.Interrupt}) })
			return ctx, func() { cancel(nil) }
		}, code: 130, reason: "interrupted"},
		{name: "timeout", queue: func(g *budgetRig) {
			g.srv.Enqueue(providertest.Response{Delay: time.Hour, Body: []byte("x")})
		}, ctx: func() (context.Context, context.CancelFunc) {
			return context.WithTimeoutCause(context.Background(), 200*time.Millisecond, &runner.TimeoutError{After: 200 * time.Millisecond})
		}, code: 124, reason: "timeout"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newBudgetRig(t)
			c.queue(g)
			ctx, cancel := context.Background(), func() {}
			if c.ctx != nil {
				ctx, cancel = c.ctx()
			}
			defer cancel()
			res := g.run(ctx, "claude-sonnet-4-5", c.set)
			if code, reason := runner.Classify(res.Err); code != c.code || reason != c.reason {
				t.Fatalf("exit %d %s (%v)", code, reason, res.Err)
			}
			data, _ := os.ReadFile(g.path)
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			last := gjson.Parse(lines[len(lines)-1])
			if last.Get("type").String() != "run" || len(g.entries("run")) != 1 {
				t.Fatalf("the last line is not the one run entry: %s", last.Raw)
			}
			if last.Get("exitCode").Int() != int64(c.code) || last.Get("reason").String() != c.reason {
				t.Errorf("run entry %s", last.Raw)
			}
			for _, f := range []string{"turns", "usage.input", "costUsd", "durationMs", "awlVersion", "flags.provider", "flags.model", "flags.tools"} {
				if !last.Get(f).Exists() {
					t.Errorf("run entry lacks %s: %s", f, last.Raw)
				}
			}
			if strings.Contains(last.Raw, `"k"`) {
				t.Errorf("the key reached the run entry: %s", last.Raw)
			}
			// The entry was echoed before the result event.
			var types []string
			for _, l := range strings.Split(strings.TrimSpace(g.events.String()), "\n") {
				ev := gjson.Parse(l)
				types = append(types, ev.Get("type").String()+"/"+ev.Get("entry.type").String())
			}
			if n := len(types); n < 2 || types[n-2] != "entry/run" || types[n-1] != "result/" {
				t.Errorf("events end with %v", types[max(0, len(types)-3):])
			}
			// Rebuild skips it: the session resumes and the run entry is
			// not in the conversation.
			sess, err := session.Open(g.path)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			b, _ := json.Marshal(sess.Conversation())
			if strings.Contains(string(b), "exitCode") {
				t.Errorf("the run entry reached the conversation")
			}
		})
	}
}
