package runner_test

import (
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// TestLongRunKeepsTheCache: sixty steps of ~1.7k-token outputs in a 20k
// window, billed by the model of each API's prompt cache. Every request
// fits the window; every request reads from the cache all that a cache
// keeping every earlier prefix would, but for less than 128 tokens
// (OpenAI's steps), so no prune makes the next request write again what
// came before it; the run reads at least 78.5 % of its input from the
// cache, for no more than $0.635 (two thirds of what the Anthropic run
// cost before the stable prefix was marked, $0.952); every tool output is
// whole in the session; a resumed run's first request reads the whole of
// the last request before it; and on OpenAI Responses every request
// carries one prompt_cache_key.
func TestLongRunKeepsTheCache(t *testing.T) {
	for _, api := range []string{"anthropic", "openai", "openai-chat"} {
		t.Run(api, func(t *testing.T) {
			g := newCostRig(t, api, 20000, 6800)
			res := g.run(g.config("make the parse tests pass", 60))
			f := g.figures()
			if f.prunes == 0 || f.prunes > 20 {
				t.Errorf("%d prunes in 60 steps", f.prunes)
			}
			for i, u := range g.usages {
				if u.Total > 20000 {
					t.Errorf("request %d: %d tokens, over the 20,000 window", i+1, u.Total)
				}
				// Up to 127 tokens may go unread: OpenAI's steps, and on
				// Anthropic the context message after a compaction's
				// summary, which no breakpoint ends.
				if u.Ideal >= 1024 && u.Ideal-u.Read >= 128 {
					t.Errorf("request %d read %d of the %d tokens it shares with an earlier request", i+1, u.Read, u.Ideal)
				}
			}
			if f.share < 0.785 || f.cost > 0.635 {
				t.Errorf("%.1f %% of the input read from the cache for $%.3f, want 78.5 %% or more for $0.635 or less", 100*f.share, f.cost)
			}
			file, err := os.ReadFile(res.SessionPath)
			if err != nil {
				t.Fatal(err)
			}
			// The result event and the run entry say the share the cache
			// model billed.
			var shares []float64
			for line := range strings.Lines(g.events.String()) {
				if gjson.Get(line, "type").Str == "result" {
					shares = append(shares, gjson.Get(line, "cache_read_share").Float())
				}
			}
			for line := range strings.Lines(string(file)) {
				if gjson.Get(line, "type").Str == "run" {
					shares = append(shares, gjson.Get(line, "cacheReadShare").Float())
				}
			}
			if len(shares) != 2 || math.Abs(shares[0]-f.share) > 0.0006 || shares[1] != shares[0] {
				t.Errorf("cache read shares of the result event and the run entry %v, want %.3f", shares, f.share)
			}
			whole := 0
			for line := range strings.Lines(string(file)) {
				gjson.Get(line, "message.content").ForEach(func(_, b gjson.Result) bool {
					if b.Get("type").Str == "toolResult" && len(b.Get("content").Str) == 6800 {
						whole++
					}
					return true
				})
			}
			if whole != 60 {
				t.Errorf("%d whole tool outputs in the session, want 60", whole)
			}
			last := g.usages[len(g.usages)-1]
			g.resume(res.SessionPath, "stop now", 0)
			if u := g.usages[len(g.usages)-1]; u.Read < last.Total-127 {
				t.Errorf("the resumed run's first request read %d tokens, not the %d of the request before it", u.Read, last.Total)
			}
			// On Responses every request, after a compaction and on resume
			// too, carries the session's one prompt_cache_key.
			keys := map[string]int{}
			for _, r := range g.srv.Requests() {
				keys[gjson.GetBytes(r.Body, "prompt_cache_key").Str]++
			}
			if _, none := keys[""]; api == "openai" && (len(keys) != 1 || none) || api != "openai" && (len(keys) != 1 || !none) {
				t.Errorf("prompt_cache_key values and their requests: %v", keys)
			}
		})
	}
}

// TestShortRunsReadTheWholePredecessor: in a ten-call loop and in a run
// with two --resume steps, every request after the first reads from the
// cache the whole request before it, on Anthropic, and on OpenAI all of it
// up to its last 128-token step (a prefix is stored in 128-token steps
// from 1,024), which is all a prefix cache can read: nothing before the
// new messages changes from one request to the next (no clock, no id, no
// reordering), across processes too. The median read share after the
// first request is then what the per-turn growth and, on OpenAI, the
// steps allow (docs/performance.md, "the short runs' bound").
func TestShortRunsReadTheWholePredecessor(t *testing.T) {
	for _, api := range []string{"anthropic", "openai", "openai-chat"} {
		t.Run(api, func(t *testing.T) {
			g := newCostRig(t, api, 200000, 160)
			res := g.run(g.config("fix the failing parse tests", 10))
			g.wait(time.Minute)
			g.resume(res.SessionPath, "now check it", 3)
			g.wait(time.Minute)
			g.resume(res.SessionPath, "and commit it", 2)
			if len(g.usages) != 11+4+3 {
				t.Fatalf("%d requests, want 18", len(g.usages))
			}
			for i := 1; i < len(g.usages); i++ {
				prev, u := g.usages[i-1].Total, g.usages[i]
				want := prev
				if api != "anthropic" {
					want = prev / 128 * 128
				}
				if u.Read != want {
					t.Errorf("request %d read %d tokens, want %d (the %d of the request before it)", i+1, u.Read, want, prev)
				}
			}
		})
	}
}

// TestLargeWindowPrunesKeepTheCache: in a 100k window a prune stubs a
// dozen results or more at once, whose stubs and calls take more blocks
// than Anthropic's cache looks back from a breakpoint (20). The request
// after each prune still reads from the cache everything it shares with
// the requests before (all but the tail past OpenAI's last 128-token
// step): the end of the prefix they marked is marked again.
func TestLargeWindowPrunesKeepTheCache(t *testing.T) {
	for _, api := range []string{"anthropic", "openai"} {
		t.Run(api, func(t *testing.T) {
			g := newCostRig(t, api, 100000, 6800)
			res := g.run(g.config("make the parse tests pass", 120))
			file, err := os.ReadFile(res.SessionPath)
			if err != nil {
				t.Fatal(err)
			}
			// The results each prune after the first stubs: those since
			// the prune before it.
			var spans []int
			results := 0
			for line := range strings.Lines(string(file)) {
				switch {
				case gjson.Get(line, "type").Str == "prune":
					spans = append(spans, results)
					results = 0
				case gjson.Get(line, `message.content.#(type=="toolResult")`).Exists():
					results++
				}
			}
			if len(spans) < 3 || slices.Min(spans[1:]) < 7 {
				t.Fatalf("results stubbed by each prune: %v; want three prunes or more, of seven results or more after the first", spans)
			}
			for i, u := range g.usages {
				if u.Ideal >= 1024 && u.Ideal-u.Read >= 128 {
					t.Errorf("request %d read %d of the %d tokens it shares with an earlier request", i+1, u.Read, u.Ideal)
				}
			}
		})
	}
}
