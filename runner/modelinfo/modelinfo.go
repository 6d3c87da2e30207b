// Package modelinfo is awl's table of what it knows about models: the price
// of their tokens and the size of their context window. The table is
// built in (models.json, dated, each entry citing where its figures come
// from, compiled into builtin_table.go so that no start decodes it) and
// can be overridden or extended by a file of the same shape (--pricing
// FILE, AWL_PRICING).
package modelinfo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/internal/jsonerr"
	"github.com/awlrun/awl/provider"
)

// Price is what a million tokens of each kind cost, in US dollars.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	// CacheWrite1h is a cache write with Anthropic's 1-hour TTL
	// (--cache-ttl 1h); 0 means twice Input, Anthropic's rule.
	CacheWrite1h float64 `json:"cacheWrite1h,omitempty"`
}

// Write1h is the price of a 1-hour cache write.
func (p Price) Write1h() float64 {
	if p.CacheWrite1h > 0 {
		return p.CacheWrite1h
	}
	return 2 * p.Input
}

// Tier is the price of every token of a request whose prompt (input, cache
// reads and cache writes together) is longer than Above tokens.
type Tier struct {
	Above int64 `json:"above"`
	Price
}

// Model is one model's entry.
type Model struct {
	// Provider is "anthropic" or "openai": a provider's family
	// (provider.Family), so "openai" covers openai-chat too.
	Provider string   `json:"provider"`
	Name     string   `json:"model"`
	Aliases  []string `json:"aliases,omitempty"`
	Price
	LongContext *Tier `json:"longContext,omitempty"`
	// Flex and Priority are the prices of a request a service tier of
	// that name served (ServiceTier); nil means the rule ServiceTier
	// gives.
	Flex     *Price `json:"flex,omitempty"`
	Priority *Price `json:"priority,omitempty"`
	// ContextWindow is the model's context window in tokens; 0 when not
	// known.
	ContextWindow int64 `json:"contextWindow,omitempty"`
	// MaxOutput is the most output tokens one request may ask for; 0 when
	// not known.
	MaxOutput int64 `json:"maxOutputTokens,omitempty"`
	// Thinking is how the model takes --reasoning: ThinkingAdaptive,
	// ThinkingBudget, ThinkingEffort or ThinkingNone; "" when not known.
	Thinking string `json:"thinking,omitempty"`
	// Images says the model takes images as input.
	Images bool `json:"images,omitempty"`
	// Source says where the figures come from.
	Source string `json:"source,omitempty"`
}

// The thinking forms of Model.Thinking, named as provider.Request.Thinking
// names them.
const (
	ThinkingAdaptive = "adaptive"
	ThinkingBudget   = "budget"
	ThinkingEffort   = "effort"
	ThinkingNone     = "none"
)

// Cost returns what a request with usage u cost, in US dollars.
func (m Model) Cost(u conv.Usage) float64 { return m.CostOf(u, Terms{}) }

// Terms are how a request was sent, as far as they change its price.
type Terms struct {
	// CacheTTL "1h": every cache write of the request was made for an
	// hour (Anthropic), at Price.Write1h.
	CacheTTL string
	// Tier is the service tier that served the request, as the API
	// reported it (or as it was asked for, when it reported none).
	Tier string
	// ListedTiers: a flex or priority request is priced only at the
	// entry's own Flex or Priority prices, unknown without them. A cloud
	// (Amazon Bedrock) sells its tiers at discounts and premiums of its
	// own, not at the rules of the wire API's provider.
	ListedTiers bool
}

// ServiceTier is the price of a request the service tier tier served,
// and whether it is known. OpenAI's flex is the entry's Flex, else half
// the standard price (OpenAI's rule); its priority is the entry's
// Priority, unknown without one. Anthropic's priority tier is priced by
// a commitment, not a list: the entry's Priority, else the standard list.
// Any other tier (default, standard, auto, none) is the standard price.
func (m Model) ServiceTier(tier string) (Price, bool) {
	switch {
	case tier == "flex" && m.Flex != nil:
		return *m.Flex, true
	case tier == "flex" && m.Provider != "anthropic":
		p := m.Price
		return Price{Input: p.Input / 2, Output: p.Output / 2, CacheRead: p.CacheRead / 2, CacheWrite: p.CacheWrite / 2, CacheWrite1h: p.CacheWrite1h / 2}, true
	case tier == "priority" && m.Priority != nil:
		return *m.Priority, true
	case tier == "priority" && m.Provider != "anthropic":
		return Price{}, false
	}
	return m.Price, true
}

// TierPrice is ServiceTier, or with listed only the entry's own Flex or
// Priority prices for those tiers (Terms.ListedTiers).
func (m Model) TierPrice(tier string, listed bool) (Price, bool) {
	switch {
	case !listed || tier != "flex" && tier != "priority":
		return m.ServiceTier(tier)
	case tier == "flex" && m.Flex != nil:
		return *m.Flex, true
	case tier == "priority" && m.Priority != nil:
		return *m.Priority, true
	}
	return Price{}, false
}

// CostOf returns what a request with usage u, sent on terms, cost: 0 when
// the tier's price is not known (CostOn says so).
func (m Model) CostOf(u conv.Usage, terms Terms) float64 {
	c, _ := m.CostOn(u, terms)
	return c
}

// CostOn is CostOf, and whether the price was known.
func (m Model) CostOn(u conv.Usage, terms Terms) (float64, bool) {
	p, ok := m.TierPrice(terms.Tier, terms.ListedTiers)
	if !ok {
		return 0, false
	}
	if t := m.LongContext; t != nil && u.Input+u.CacheRead+u.CacheWrite > t.Above && (terms.Tier == "" || p == m.Price) {
		p = t.Price
	}
	write := p.CacheWrite
	if terms.CacheTTL == "1h" {
		write = p.Write1h()
	}
	c := (float64(u.Input)*p.Input + float64(u.Output)*p.Output +
		float64(u.CacheRead)*p.CacheRead + float64(u.CacheWrite)*write) / 1e6
	return Round(c), true
}

// Round rounds a dollar amount to 1e-9 (a billionth of a dollar), so sums
// of costs print without floating-point noise.
func Round(usd float64) float64 { return math.Round(usd*1e9) / 1e9 }

// Table is a set of models, looked up by provider and model name.
type Table struct {
	// Updated is the date the embedded figures were checked.
	Updated string
	models  []Model
	byName  map[string]int // family + "\x00" + name or alias → index
}

type file struct {
	Updated string  `json:"updated"`
	Note    string  `json:"note"`
	Models  []Model `json:"models"`
	// Defaults and DefaultsChosen are what `awl models --json` prints
	// beside the table; a file may carry them, and they are not read.
	Defaults       map[string]string `json:"defaults"`
	DefaultsChosen string            `json:"defaultsChosen"`
}

// builtin is the built-in table: builtinModels (builtin_table.go, written
// from models.json by TestBuiltinTableIsModelsJSON) indexed by name. A
// start used to decode models.json with encoding/json here, about 0.9 ms
// of the 27 ms before the first request (docs/performance.md).
var builtin = sync.OnceValue(func() *Table {
	t := &Table{Updated: builtinUpdated, models: builtinModels, byName: make(map[string]int, 2*len(builtinModels))}
	for i, m := range t.models {
		for _, n := range append([]string{m.Name}, m.Aliases...) {
			t.byName[key(m.Provider, n)] = i
		}
	}
	return t
})

// Default returns the built-in table.
func Default() *Table { return builtin() }

// Load returns the embedded table overridden and extended by the file at
// path ("" for none): an entry of the file replaces the embedded entry of
// the same provider and model, and adds one otherwise.
func Load(path string) (*Table, error) {
	base := Default()
	if path == "" {
		return base, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t := &Table{Updated: base.Updated, models: append([]Model(nil), base.models...), byName: make(map[string]int, len(base.byName))}
	for k, v := range base.byName {
		t.byName[k] = v
	}
	if err := t.merge(path, data); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Table) merge(name string, data []byte) error {
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("%s: %s", where(name, data, err), describe(err))
	}
	if dec.More() {
		return fmt.Errorf("%s: more than one JSON value", name)
	}
	if f.Updated != "" {
		t.Updated = f.Updated
	}
	for i, m := range f.Models {
		if err := m.check(); err != nil {
			return fmt.Errorf("%s: models[%d] (%q): %w", name, i, m.Name, err)
		}
		m.Provider = Family(m.Provider)
		idx := len(t.models)
		if old, ok := t.byName[key(m.Provider, m.Name)]; ok {
			// Replace: drop the old entry's names first.
			for k, v := range t.byName {
				if v == old {
					delete(t.byName, k)
				}
			}
			idx = old
			t.models[old] = m
		} else {
			t.models = append(t.models, m)
		}
		for _, n := range append([]string{m.Name}, m.Aliases...) {
			t.byName[key(m.Provider, n)] = idx
		}
	}
	return nil
}

func (m Model) check() error {
	if strings.TrimSpace(m.Provider) == "" {
		return errors.New("provider: missing")
	}
	if strings.TrimSpace(m.Name) == "" {
		return errors.New("model: missing")
	}
	if err := m.Price.check(""); err != nil {
		return err
	}
	if m.LongContext != nil {
		if m.LongContext.Above <= 0 {
			return errors.New("longContext.above: must be more than 0")
		}
		if err := m.LongContext.Price.check("longContext."); err != nil {
			return err
		}
	}
	for _, t := range []struct {
		name string
		p    *Price
	}{{"flex.", m.Flex}, {"priority.", m.Priority}} {
		if t.p != nil {
			if err := t.p.check(t.name); err != nil {
				return err
			}
		}
	}
	if m.ContextWindow < 0 {
		return errors.New("contextWindow: must not be negative")
	}
	if m.MaxOutput < 0 {
		return errors.New("maxOutputTokens: must not be negative")
	}
	switch m.Thinking {
	case "", ThinkingAdaptive, ThinkingBudget, ThinkingEffort, ThinkingNone:
	default:
		return fmt.Errorf("thinking: %q is not adaptive, budget, effort or none", m.Thinking)
	}
	return nil
}

func (p Price) check(prefix string) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"input", p.Input}, {"output", p.Output}, {"cacheRead", p.CacheRead}, {"cacheWrite", p.CacheWrite}, {"cacheWrite1h", p.CacheWrite1h}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%s%s: must be a price of 0 or more", prefix, f.name)
		}
	}
	return nil
}

// where names the place of a decoding error: "name:line" when the error
// has an offset.
func where(name string, data []byte, err error) string {
	if line, ok := jsonerr.Line(data, err); ok {
		return fmt.Sprintf("%s:%d", name, line)
	}
	return name
}

func describe(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s: want a %s, got %s", strings.ReplaceAll(te.Field, "Price.", ""), te.Type, te.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// Family returns the table provider a provider name prices with: the
// provider registry's family of the name (openai and openai-chat share
// OpenAI's prices).
func Family(name string) string { return provider.Family(name) }

// providerTableModel is the registry's mapping of a cloud's model ids to
// the table's names (a Bedrock inference profile to its model).
var providerTableModel = provider.TableModel

func key(family, name string) string { return family + "\x00" + strings.ToLower(name) }

// undated is model without a snapshot date at its end
// (claude-sonnet-4-5-20250929, gpt-5-2025-08-07): "-" and eight digits, or
// "-" and YYYY-MM-DD. A function, not a regexp compiled at every start.
func undated(model string) string {
	digits := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return true
	}
	if n := len(model); n > 9 && model[n-9] == '-' && digits(model[n-8:]) {
		return model[:n-9]
	}
	if n := len(model); n > 11 && model[n-11] == '-' && digits(model[n-10:n-6]) && model[n-6] == '-' && digits(model[n-5:n-3]) && model[n-3] == '-' && digits(model[n-2:]) {
		return model[:n-11]
	}
	return model
}

// Lookup returns the entry for model as served by provider: by name or
// alias, else by the name without a snapshot date. A cloud's model id is
// looked up by the name the provider registry maps it to
// (us.anthropic.claude-sonnet-4-5-20250929-v1:0 on bedrock is
// claude-sonnet-4-5). ok is false when the
// table does not know the model.
func (t *Table) Lookup(provider, model string) (Model, bool) {
	if t == nil || model == "" {
		return Model{}, false
	}
	f := Family(provider)
	if name := providerTableModel(provider, model); name != "" {
		model = name
	}
	if i, ok := t.byName[key(f, model)]; ok {
		return t.models[i], true
	}
	if base := undated(model); base != model {
		if i, ok := t.byName[key(f, base)]; ok {
			return t.models[i], true
		}
	}
	return Model{}, false
}

// Models returns every entry, in table order.
func (t *Table) Models() []Model { return append([]Model(nil), t.models...) }
