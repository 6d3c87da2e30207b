package modelinfo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
)

func TestEmbeddedTableIsValidDatedAndCited(t *testing.T) {
	tab := builtin()
	if len(tab.Updated) != len("2006-01-02") {
		t.Errorf("updated = %q, want a date", tab.Updated)
	}
	seen := map[string]bool{}
	for _, m := range tab.Models() {
		if !strings.HasPrefix(m.Source, "https://") {
			t.Errorf("%s: source %q does not cite a page", m.Name, m.Source)
		}
		if m.Input <= 0 || m.Output <= 0 {
			t.Errorf("%s: input and output prices must be set", m.Name)
		}
		if m.ContextWindow <= 0 {
			t.Errorf("%s: no context window", m.Name)
		}
		if m.Provider != "anthropic" && m.Provider != "openai" {
			t.Errorf("%s: provider %q", m.Name, m.Provider)
		}
		for _, n := range append([]string{m.Name}, m.Aliases...) {
			if seen[m.Provider+n] {
				t.Errorf("%s listed twice", n)
			}
			seen[m.Provider+n] = true
		}
	}
	// The providers' default models must be priced.
	for _, pm := range [][2]string{{"anthropic", "claude-sonnet-4-5"}, {"openai", "gpt-5"}} {
		if _, ok := tab.Lookup(pm[0], pm[1]); !ok {
			t.Errorf("default model %s/%s has no price", pm[0], pm[1])
		}
	}
}

func TestLookup(t *testing.T) {
	tab := Default()
	for _, c := range []struct {
		provider, model, want string
	}{
		{"anthropic", "claude-sonnet-4-5", "claude-sonnet-4-5"},
		{"anthropic", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5"}, // alias
		{"anthropic", "claude-sonnet-4-20250514", "claude-sonnet-4-0"},
		{"anthropic", "Claude-Haiku-4-5-20251001", "claude-haiku-4-5"},
		{"openai", "gpt-5-2025-08-07", "gpt-5"}, // dated snapshot
		{"openai-chat", "gpt-4o-mini-2024-07-18", "gpt-4o-mini"},
		{"openai", "gpt-5.5-2026-04-23", "gpt-5.5"},
	} {
		m, ok := tab.Lookup(c.provider, c.model)
		if !ok || m.Name != c.want {
			t.Errorf("Lookup(%s, %s) = %q, %v; want %q", c.provider, c.model, m.Name, ok, c.want)
		}
	}
	for _, c := range [][2]string{
		{"anthropic", "gpt-5"}, // another provider's model
		{"openai", "claude-sonnet-4-5"},
		{"openai-chat", "deepseek-reasoner"},
		{"replay", "claude-sonnet-4-5"},
		{"anthropic", ""},
		{"openai", "gpt-5-mini-turbo"}, // a prefix is not a match
	} {
		if m, ok := tab.Lookup(c[0], c[1]); ok {
			t.Errorf("Lookup(%s, %s) = %q; want unknown", c[0], c[1], m.Name)
		}
	}
}

func TestCost(t *testing.T) {
	tab := Default()
	son, _ := tab.Lookup("anthropic", "claude-sonnet-4-5")
	// 1500 input × $3 + 85 output × $15 + 1200 cache read × $0.30 + 400
	// cache write × $3.75, per million.
	got := son.Cost(conv.Usage{Input: 1500, Output: 85, CacheRead: 1200, CacheWrite: 400})
	want := (1500*3 + 85*15 + 1200*0.3 + 400*3.75) / 1e6
	if got != Round(want) {
		t.Errorf("cost = %v, want %v", got, want)
	}
	// Over 200K prompt tokens, every token is at the long-context price.
	long := son.Cost(conv.Usage{Input: 150_000, CacheRead: 60_000, Output: 1000})
	if wantL := Round((150_000*6 + 60_000*0.6 + 1000*22.5) / 1e6); long != wantL {
		t.Errorf("long-context cost = %v, want %v", long, wantL)
	}
	exact := son.Cost(conv.Usage{Input: 200_000})
	if exact != 0.6 {
		t.Errorf("a prompt of exactly 200K tokens costs %v, want 0.6 (the threshold is 'more than')", exact)
	}
	if c := son.Cost(conv.Usage{}); c != 0 {
		t.Errorf("no usage costs %v", c)
	}
}

func TestLoadOverridesAndExtends(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "prices.json")
	os.WriteFile(p, []byte(`{"models":[
  {"provider":"anthropic","model":"claude-sonnet-4-5","input":1,"output":2,"source":"our contract"},
  {"provider":"openai-chat","model":"deepseek-reasoner","input":0.55,"output":2.19,"cacheRead":0.14,"contextWindow":64000}
]}`), 0o600)
	tab, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"claude-sonnet-4-5", "claude-sonnet-4-5-20250929"} {
		m, _ := tab.Lookup("anthropic", name)
		if m.Input != 1 || m.Output != 2 || m.LongContext != nil {
			t.Errorf("%s: override not applied: %+v", name, m)
		}
	}
	m, ok := tab.Lookup("openai-chat", "deepseek-reasoner")
	if !ok || m.ContextWindow != 64000 {
		t.Errorf("extension not applied: %+v %v", m, ok)
	}
	// The embedded table is untouched.
	if m, _ := Default().Lookup("anthropic", "claude-sonnet-4-5"); m.Input != 3 {
		t.Errorf("Load changed the embedded table: %+v", m)
	}
	if _, ok := tab.Lookup("openai", "gpt-5"); !ok {
		t.Error("the file dropped the other embedded entries")
	}
}

func TestLoadRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ body, want string }{
		{"{\"models\":[\n{\"provider\":\"openai\",\"model\":\"x\",\"input\":\"1\"}]}", "prices.json:2: models.input: want a float64"},
		{`{"models":[{"provider":"openai","model":"x","inptu":1}]}`, `unknown field "inptu"`},
		{`{"models":[{"provider":"openai","model":"x","input":-1}]}`, `models[0] ("x"): input: must be a price of 0 or more`},
		{`{"models":[{"provider":"openai","input":1}]}`, "model: missing"},
		{`{"models":[{"model":"x","input":1}]}`, "provider: missing"},
		{`{"models":[{"provider":"openai","model":"x","longContext":{"above":0}}]}`, "longContext.above"},
		{"{\"models\":[\n\n{", "prices.json: unexpected EOF"},
		{`{"models":[]} {}`, "more than one JSON value"},
	} {
		p := filepath.Join(dir, "prices.json")
		os.WriteFile(p, []byte(c.body), 0o600)
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.body, err, c.want)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file loaded")
	}
}

// TestCostOneHourWrites: a request sent with --cache-ttl 1h pays its cache
// writes at the 1-hour price: twice the input price unless the entry says
// otherwise, the long-context tier's input price doubled over its
// threshold.
func TestCostOneHourWrites(t *testing.T) {
	son, _ := Default().Lookup("anthropic", "claude-sonnet-4-5")
	u := conv.Usage{Input: 100, Output: 10, CacheRead: 1000, CacheWrite: 2000}
	if got, want := son.CostOf(u, Terms{CacheTTL: "1h"}), Round((100*3+10*15+1000*0.3+2000*6)/1e6); got != want {
		t.Errorf("1h cost = %v, want %v", got, want)
	}
	if got, want := son.CostOf(u, Terms{CacheTTL: "5m"}), son.Cost(u); got != want {
		t.Errorf("5m cost = %v, want the plain %v", got, want)
	}
	long := conv.Usage{Input: 150_000, CacheWrite: 60_000}
	if got, want := son.CostOf(long, Terms{CacheTTL: "1h"}), Round((150_000*6+60_000*12)/1e6); got != want {
		t.Errorf("long-context 1h cost = %v, want %v", got, want)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "prices.json")
	os.WriteFile(p, []byte(`{"models":[{"provider":"anthropic","model":"claude-x","input":1,"output":2,"cacheWrite":1.25,"cacheWrite1h":1.5}]}`), 0o600)
	tab, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := tab.Lookup("anthropic", "claude-x")
	if got := x.CostOf(conv.Usage{CacheWrite: 1_000_000}, Terms{CacheTTL: "1h"}); got != 1.5 {
		t.Errorf("a file's cacheWrite1h: cost %v, want 1.5", got)
	}
	os.WriteFile(p, []byte(`{"models":[{"provider":"anthropic","model":"claude-x","input":1,"cacheWrite1h":-1}]}`), 0o600)
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "cacheWrite1h: must be a price of 0 or more") {
		t.Errorf("a negative cacheWrite1h: %v", err)
	}
}

// TestServiceTierPrices: flex is half the standard price on OpenAI unless
// the entry gives one; priority is the entry's, unknown without one;
// Anthropic's priority tier, priced by a commitment, is its list price.
func TestServiceTierPrices(t *testing.T) {
	tab := Default()
	g, _ := tab.Lookup("openai", "gpt-5.4")
	u := conv.Usage{Input: 100_000, CacheRead: 100_000, Output: 100_000} // under the 272K long-context threshold
	for _, tc := range []struct {
		tier string
		want float64
		ok   bool
	}{{"", 0.1 * (2.5 + 0.25 + 15), true}, {"default", 1.775, true}, {"flex", 0.1 * (2.5 + 0.25 + 15) / 2, true}, {"priority", 0.1 * (5 + 0.5 + 30), true}} {
		got, ok := g.CostOn(u, Terms{Tier: tc.tier})
		if got != Round(tc.want) || ok != tc.ok {
			t.Errorf("gpt-5.4 %q: %v %v, want %v %v", tc.tier, got, ok, tc.want, tc.ok)
		}
	}
	nano, _ := tab.Lookup("openai", "gpt-5.4-nano")
	if _, ok := nano.CostOn(u, Terms{Tier: "priority"}); ok {
		t.Error("gpt-5.4-nano has no priority price in the table, yet its priority cost is known")
	}
	son, _ := tab.Lookup("anthropic", "claude-sonnet-4-5")
	if got, ok := son.CostOn(u, Terms{Tier: "priority"}); !ok || got != son.Cost(u) {
		t.Errorf("Anthropic priority: %v %v, want the list price %v", got, ok, son.Cost(u))
	}
	if got, _ := son.CostOn(u, Terms{Tier: "flex"}); got != son.Cost(u) {
		t.Errorf("Anthropic has no flex tier to halve: %v", got)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "prices.json")
	os.WriteFile(p, []byte(`{"models":[{"provider":"openai","model":"gpt-x","input":1,"output":2,"flex":{"input":0.4,"output":0.8},"priority":{"input":-1}}]}`), 0o600)
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "priority.input: must be a price of 0 or more") {
		t.Errorf("a negative priority price: %v", err)
	}
	os.WriteFile(p, []byte(`{"models":[{"provider":"openai","model":"gpt-x","input":1,"output":2,"flex":{"input":0.4,"output":0.8}}]}`), 0o600)
	tx, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := tx.Lookup("openai", "gpt-x")
	if got, _ := x.CostOn(conv.Usage{Input: 1_000_000}, Terms{Tier: "flex"}); got != 0.4 {
		t.Errorf("a file's flex price: %v, want 0.4", got)
	}
}
