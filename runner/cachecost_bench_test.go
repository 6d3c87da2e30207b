package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/tool"
	"github.com/awlrun/awl/session"
)

// Sonnet-class list prices, US dollars per million input tokens: plain
// input, a cache write (5 minutes), a cache read.
const (
	priceInput   = 3.0
	priceWrite   = 3.75
	priceWrite1h = 6.0
	priceRead    = 0.30
)

// scriptedTool is a built-in tool with its real name, description and
// schema, whose calls answer with out(input) instead of running.
type scriptedTool struct {
	tool.Tool
	out func(in json.RawMessage) string
}

func (s scriptedTool) Run(_ context.Context, in json.RawMessage) tool.Result {
	return tool.Result{Content: s.out(in)}
}

// costRig runs scripted sessions against the fake provider with a model
// of api's prompt cache, on a simulated clock, and keeps each request's
// billed usage.
type costRig struct {
	tb      testing.TB
	api     string
	work    string
	store   *session.Store
	srv     *providertest.Server
	prov    provider.Provider
	cache   *providertest.Cache
	events  bytes.Buffer
	window  int64
	outSize int // bytes of each tool output

	mu      sync.Mutex
	now     time.Time
	left    int // tool calls before the final answer, this run
	calls   int
	usages  []providertest.CacheUsage
	own     int // the first request's tools and system prompt, in tokens
	summary int
	extra   func(*runner.Config)
}

func newCostRig(tb testing.TB, api string, window int64, outSize int) *costRig {
	g := &costRig{tb: tb, api: api, work: tb.TempDir(), window: window, outSize: outSize,
		now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	g.store = &session.Store{Dir: filepath.Join(tb.TempDir(), "sessions")}
	g.srv = providertest.New()
	tb.Cleanup(g.srv.Close)
	g.cache = &providertest.Cache{API: api, Now: g.clock}
	var err error
	if g.prov, err = provider.New(api, provider.Options{APIKey: "k", BaseURL: g.srv.URL, MaxRetries: 0}); err != nil {
		tb.Fatal(err)
	}
	g.srv.RespondWith(g.respond)
	return g
}

func (g *costRig) clock() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.now
}

// wait moves the simulated clock on.
func (g *costRig) wait(d time.Duration) {
	g.mu.Lock()
	g.now = g.now.Add(d)
	g.mu.Unlock()
}

// summaryAsked recognises a compaction's summary request.
var summaryAsked = []byte(runner.CompactInstruction[:40])

// respond bills the request and answers it: a summary for a summary
// request, a bash call while the run has calls left, else a final answer.
// Each request takes 20 simulated seconds. An Anthropic request with more
// than four breakpoints is refused, as the API refuses it.
func (g *costRig) respond(_ int, req providertest.Request) providertest.Response {
	g.wait(20 * time.Second)
	if n := bytes.Count(req.Body, []byte(`"cache_control":`)); g.api == "anthropic" && n > 4 {
		// What the Messages API answers to a fifth breakpoint.
		msg := fmt.Sprintf("A maximum of 4 blocks with cache_control may be provided. Found %d.", n)
		return providertest.Response{Status: 400, Body: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"` + msg + `"}}`)}
	}
	u := g.cache.Observe(req.Body)
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.usages) == 0 {
		g.own = providertest.OwnTokens(g.api, req.Body)
	}
	g.usages = append(g.usages, u)
	t := providertest.Turn{OutputTokens: 60}
	switch {
	case bytes.Contains(req.Body, summaryAsked):
		g.summary++
		t.Text = strings.Repeat("Task: keep testing and fixing package parse until every case passes. ", 20)
		t.OutputTokens = 400
	case g.left > 0:
		g.left--
		g.calls++
		t.Text = fmt.Sprintf("Step %d: running the tests again.", g.calls)
		t.Calls = []providertest.Call{{ID: fmt.Sprintf("call_%d", g.calls), Name: "bash", Input: fmt.Sprintf(`{"command":"go test ./parse/... # %d"}`, g.calls)}}
	default:
		t.Text = "All done."
	}
	return providertest.Stream(g.api, u.Turn(g.api, t))
}

// output is a tool output of g.outSize bytes, different at each call.
func (g *costRig) output(in json.RawMessage) string {
	var b strings.Builder
	for i := 0; b.Len() < g.outSize; i++ {
		fmt.Fprintf(&b, "=== RUN   TestParse/case_%03d_%x\n--- PASS: TestParse/case_%03d (0.00s)\n", i, in, i)
	}
	return b.String()[:g.outSize]
}

func (g *costRig) config(prompt string, calls int) runner.Config {
	g.mu.Lock()
	g.left = calls
	g.mu.Unlock()
	tools := tool.Builtins(tool.Env{Dir: g.work})
	for i, t := range tools {
		tools[i] = scriptedTool{t, g.output}
	}
	env := map[string]string{"SHELL": "/bin/bash", "XDG_CONFIG_HOME": filepath.Join(g.work, "none")}
	cfg := runner.Config{
		Store: g.store, Cwd: g.work, Prompt: prompt, Provider: g.prov, Model: "claude-sonnet-4-5",
		Tools:  tools,
		Events: event.NewEmitter(&g.events, nil),
		Now:    g.clock,
		Getenv: func(k string) string { return env[k] },
		Window: runner.Window{Tokens: g.window},
	}
	if g.extra != nil {
		g.extra(&cfg)
	}
	return cfg
}

func (g *costRig) run(cfg runner.Config) runner.Result {
	g.tb.Helper()
	return mustRun(g.tb, cfg)
}

func (g *costRig) resume(path, prompt string, calls int) runner.Result {
	cfg := g.config(prompt, calls)
	cfg.Resume = openResumed(g.tb, path)
	return g.run(cfg)
}

func (g *costRig) fork(path, prompt string, calls int) runner.Result {
	ref, err := session.OpenShared(path)
	if err != nil {
		g.tb.Fatal(err)
	}
	cfg := g.config(prompt, calls)
	cfg.Fork = ref
	return g.run(cfg)
}

// costFigures sums a scenario's billed usage.
type costFigures struct {
	requests, lowReads, prunes, compactions    int
	share, idealShare, median, cost, idealCost float64
	idealMedian                                float64
	first, own                                 int
	// written is every input token not read from the cache (written to
	// it, or plain input): W in docs/compaction.md's arithmetic.
	written int
	// at85 is what the input would cost if the same tokens were written
	// at the same prices and the reads made them 15 % of it: what an
	// 85 % read share costs at this W.
	at85 float64
}

func (g *costRig) figures() costFigures {
	g.mu.Lock()
	defer g.mu.Unlock()
	var f costFigures
	var total, read, ideal float64
	var shares, idealShares []float64
	write := priceWrite
	if g.api != "anthropic" {
		write = priceInput // OpenAI bills a prefix it stores as plain input
	}
	for i, u := range g.usages {
		total += float64(u.Total)
		read += float64(u.Read)
		ideal += float64(u.Ideal)
		f.written += u.Total - u.Read
		f.cost += (float64(u.Input)*priceInput + float64(u.Write-u.Write1h)*priceWrite + float64(u.Write1h)*priceWrite1h + float64(u.Read)*priceRead) / 1e6
		f.idealCost += (float64(u.Total-u.Ideal)*write + float64(u.Ideal)*priceRead) / 1e6
		if i == 0 {
			f.first = u.Total
			continue
		}
		s := float64(u.Read) / float64(u.Total)
		shares = append(shares, s)
		idealShares = append(idealShares, float64(u.Ideal)/float64(u.Total))
		if s < 0.5 {
			f.lowReads++
		}
	}
	f.requests, f.own = len(g.usages), g.own
	f.share, f.idealShare = read/total, ideal/total
	f.median, f.idealMedian = median(shares), median(idealShares)
	f.at85 = f.cost + (float64(f.written)*0.85/0.15-read)*priceRead/1e6
	for line := range strings.Lines(g.events.String()) {
		switch gjson.Get(line, "type").Str {
		case "prune":
			f.prunes++
		case "compaction":
			f.compactions++
		}
	}
	return f
}

// median is the middle of xs (the mean of the two middle ones), 0 for
// none; it sorts xs.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n == 0 {
		return 0
	}
	return (xs[(n-1)/2] + xs[n/2]) / 2
}

func (f costFigures) report(b *testing.B) {
	b.ReportMetric(100*f.share, "read-%")
	b.ReportMetric(100*f.median, "median-read-%-after-first")
	b.ReportMetric(f.cost, "input-USD")
	b.ReportMetric(100*f.idealShare, "ideal-read-%")
	b.ReportMetric(100*f.idealMedian, "ideal-median-read-%-after-first")
	b.ReportMetric(float64(f.written), "written-tokens")
	b.ReportMetric(f.at85, "input-USD-at-85%-read")
	b.ReportMetric(f.idealCost, "ideal-input-USD")
	b.ReportMetric(float64(f.requests), "requests")
	b.ReportMetric(float64(f.lowReads), "requests-read-under-half")
	b.ReportMetric(float64(f.prunes), "prunes")
	b.ReportMetric(float64(f.compactions), "compactions")
	b.ReportMetric(float64(f.first), "first-request-tokens")
	b.ReportMetric(float64(f.own), "own-tokens")
	b.ReportMetric(0, "ns/op")
}

// cacheScenarios are the runs BenchmarkCacheCost bills, each on a fresh
// rig.
var cacheScenarios = []struct {
	name    string
	window  int64
	outSize int
	play    func(g *costRig)
	ttl     map[string]string // --cache-ttl by API
}{
	// Ten tool turns and an answer, in a large window.
	{name: "loop10", window: 200000, outSize: 160, play: func(g *costRig) { g.run(g.config("fix the failing parse tests", 10)) }},
	// A run and two --resume steps a minute apart, as a pipeline's steps.
	{name: "resume2", window: 200000, outSize: 160, play: func(g *costRig) {
		res := g.run(g.config("plan the fix for the parse tests", 4))
		g.wait(time.Minute)
		g.resume(res.SessionPath, "now make the fix", 3)
		g.wait(time.Minute)
		g.resume(res.SessionPath, "now check it", 3)
	}},
	// A run and two forks of it, each continuing the plan its own way.
	{name: "fork", window: 200000, outSize: 160, play: func(g *costRig) {
		res := g.run(g.config("plan the fix for the parse tests", 4))
		g.wait(30 * time.Second)
		g.fork(res.SessionPath, "try the first approach", 3)
		g.wait(30 * time.Second)
		g.fork(res.SessionPath, "try the second approach", 3)
	}},
	// The pipeline's steps ten minutes apart, past the 5-minute cache, with
	// the default TTL and with the longer one (--cache-ttl).
	{name: "gap10m", window: 200000, outSize: 1200, play: playGap},
	{name: "gap10m-ttl", window: 200000, outSize: 1200, play: playGap, ttl: map[string]string{"anthropic": "1h", "openai": "24h"}},
	// Sixty test-and-fix steps of ~1.7k-token outputs in a 20k window.
	{name: "long60", window: 20000, outSize: 6800, play: func(g *costRig) { g.run(g.config("make the parse tests pass", 60)) }},
	// 120 of them in a 100k window, where a prune stubs a dozen results
	// or more at once.
	{name: "long120-100k", window: 100000, outSize: 6800, play: func(g *costRig) { g.run(g.config("make the parse tests pass", 120)) }},
}

// playGap is a run and two --resume steps, each of four calls of
// 1.2 KB outputs, ten minutes apart.
func playGap(g *costRig) {
	res := g.run(g.config("plan the fix for the parse tests", 4))
	g.wait(10 * time.Minute)
	g.resume(res.SessionPath, "now make the fix", 4)
	g.wait(10 * time.Minute)
	g.resume(res.SessionPath, "now check it", 4)
}

// BenchmarkCacheCost bills scripted runs with a model of each API's prompt
// cache (providertest.Cache) at a Sonnet-class list price, 3 / 3.75 /
// 0.30 USD per million input, cache-write and cache-read tokens. The
// figures are the model's: deterministic, the same at every iteration.
// ideal-read-% is what a cache that kept every earlier request's prefix
// would read of the same requests.
func BenchmarkCacheCost(b *testing.B) {
	for _, api := range []string{"anthropic", "openai"} {
		for _, sc := range cacheScenarios {
			b.Run(api+"/"+sc.name, func(b *testing.B) {
				var f costFigures
				for range b.N {
					g := newCostRig(b, api, sc.window, sc.outSize)
					if ttl := sc.ttl[api]; ttl != "" {
						g.extra = func(c *runner.Config) { c.CacheTTL = ttl }
					}
					sc.play(g)
					f = g.figures()
				}
				f.report(b)
			})
		}
	}
}

// BenchmarkCacheCostThresholds bills the long60 run at pairs of
// --prune-at and --compact-at: how the read share, the written tokens and
// the input cost move with the thresholds (docs/compaction.md, "What
// pruning and compaction cost").
func BenchmarkCacheCostThresholds(b *testing.B) {
	for _, api := range []string{"anthropic", "openai"} {
		for _, th := range [][2]int{{40, 80}, {60, 80}, {70, 90}, {80, 90}, {90, 95}, {95, 95}} {
			b.Run(fmt.Sprintf("%s/prune%d-compact%d", api, th[0], th[1]), func(b *testing.B) {
				var f costFigures
				for range b.N {
					g := newCostRig(b, api, 20000, 6800)
					g.extra = func(c *runner.Config) { c.Window.PruneAt, c.Window.CompactAt = th[0], th[1] }
					g.run(g.config("make the parse tests pass", 60))
					f = g.figures()
				}
				f.report(b)
			})
		}
	}
}

// TestFirstRequestOwnTokens: the tokens awl itself puts before the
// conversation (the system prompt and the eight built-in tools, no skills,
// no MCP) stay under 2,000, as Cache counts them, on every API.
func TestFirstRequestOwnTokens(t *testing.T) {
	for _, api := range []string{"anthropic", "openai", "openai-chat"} {
		g := newCostRig(t, api, 200000, 100)
		g.run(g.config("say hi", 0))
		if g.own < 1000 || g.own >= 2000 {
			t.Errorf("%s: the first request's tools and system prompt take %d tokens, want under 2,000", api, g.own)
		}
	}
}
