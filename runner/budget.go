package runner

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/runner/modelctx"
	"github.com/awlrun/awl/runner/modelinfo"
)

// This file holds the run's budgets: the cost of each request, the stop
// checked before each request (--max-cost-usd, --max-total-tokens), and the
// wrap-up notice given once when little budget is left. A budget counts
// this run only.

// priceOf returns what the request that produced msg cost, or nil when that
// is not known: the provider reported no usage, or the table has no price
// for the model that answered (the requested one when the answer does not
// say).
func (r *run) priceOf(msg conv.Message) *float64 {
	if msg.Usage == nil || r.cfg.Prices == nil {
		return nil
	}
	m, ok := r.cfg.Prices.Lookup(r.cfg.Provider.Name(), cmp.Or(msg.Model, r.cfg.Model))
	if !ok {
		return nil
	}
	// The tier the API says served the request is the one it bills.
	c, ok := m.CostOn(*msg.Usage, modelinfo.Terms{CacheTTL: r.cfg.CacheTTL, Tier: cmp.Or(msg.ServiceTier, r.cfg.ServiceTier),
		ListedTiers: provider.CloudTiers(r.cfg.Provider.Name())})
	if !ok {
		return nil
	}
	return &c
}

// account adds a request's usage and cost to the run's totals. One request
// of unknown cost makes the run's cost unknown.
func (r *run) account(msg conv.Message) {
	if msg.Usage != nil {
		r.res.Usage = r.res.Usage.Add(*msg.Usage)
	}
	if r.res.CostUSD == nil {
		return
	}
	if msg.CostUSD == nil {
		r.res.CostUSD = nil
		r.unpriced = r.whyUnpriced(msg)
		return
	}
	total := modelinfo.Round(*r.res.CostUSD + *msg.CostUSD)
	r.res.CostUSD = &total
}

// whyUnpriced says why msg's request has no cost (priceOf gave nil).
func (r *run) whyUnpriced(msg conv.Message) string {
	model := cmp.Or(msg.Model, r.cfg.Model)
	switch m, ok := r.cfg.Prices.Lookup(r.cfg.Provider.Name(), model); {
	case msg.Usage == nil:
		return "its answer reported no usage"
	case !ok && msg.Model != "" && msg.Model != r.cfg.Model:
		return fmt.Sprintf("it was answered by %s model %q, which has no price (give one with --pricing FILE)", r.cfg.Provider.Name(), model)
	case !ok:
		return fmt.Sprintf("%s model %q has no price (give one with --pricing FILE)", r.cfg.Provider.Name(), model)
	default:
		tier := cmp.Or(msg.ServiceTier, r.cfg.ServiceTier)
		if _, ok := m.TierPrice(tier, provider.CloudTiers(r.cfg.Provider.Name())); !ok {
			return fmt.Sprintf("%s model %q has no price for the %s service tier (give one with --pricing FILE)", r.cfg.Provider.Name(), model, tier)
		}
		return fmt.Sprintf("%s model %q could not be priced", r.cfg.Provider.Name(), model)
	}
}

func totalTokens(u conv.Usage) int64 { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// checkPriced refuses --max-cost-usd for a model without a price: the
// budget could not be kept.
func (r *run) checkPriced() error {
	return CheckPriced(r.cfg.Prices, r.cfg.Provider.Name(), r.cfg.Model, r.cfg.MaxCostUSD)
}

// CheckPriced refuses a cost budget (maxCostUSD > 0) for a model prices has
// no price for. awl run calls it before reading stdin, the runner again
// before the first request.
func CheckPriced(prices *modelinfo.Table, providerName, model string, maxCostUSD float64) error {
	if maxCostUSD <= 0 {
		return nil
	}
	if _, ok := prices.Lookup(providerName, model); !ok {
		return Usagef(fmt.Sprintf("--max-cost-usd: awl has no price for %s model %q, so it cannot keep a cost budget (give one with --pricing FILE; see docs/cost.md)", providerName, model))
	}
	return nil
}

// budgetStop returns the error that stops the run before its next request
// when a budget is spent.
func (r *run) budgetStop() error {
	cfg := r.cfg
	next := r.res.Turns + 1
	if cfg.MaxCostUSD > 0 {
		if r.res.CostUSD == nil {
			return &LimitError{Reason: "budget", Msg: fmt.Sprintf("stopped before request %d: the cost of request %d is not known (%s), so --max-cost-usd %s cannot be kept", next, next-1, r.unpriced, usd(cfg.MaxCostUSD))}
		}
		if spent := *r.res.CostUSD; spent >= cfg.MaxCostUSD {
			return &LimitError{Reason: "budget", Msg: fmt.Sprintf("stopped before request %d: this run has cost %s, reaching --max-cost-usd %s", next, usd(spent), usd(cfg.MaxCostUSD))}
		}
	}
	if cfg.MaxTotalTokens > 0 {
		if used := totalTokens(r.res.Usage); used >= cfg.MaxTotalTokens {
			return &LimitError{Reason: "budget", Msg: fmt.Sprintf("stopped before request %d: this run has used %d tokens, reaching --max-total-tokens %d", next, used, cfg.MaxTotalTokens)}
		}
	}
	return nil
}

func usd(v float64) string {
	s := fmt.Sprintf("$%.4f", v)
	if v != 0 && v < 0.0001 {
		s = fmt.Sprintf("$%.8f", v)
	}
	return s
}

// wrapUp appends the wrap-up notice, once per run, when what is left of a
// budget (turns, cost, tokens or time) is below one more turn's worth or
// below 10% of it. It runs before a request, so the notice is in the log,
// and the request, from then on.
func (r *run) wrapUp(ctx context.Context) error {
	if r.noticed {
		return nil
	}
	why := r.shortBudget(ctx)
	if why == "" {
		return nil
	}
	r.noticed = true
	text := "This run is close to its budget: " + why + ". Finish now: complete or stop the work in progress, then report what you did, what is verified, and what is left."
	return r.appendUser([]conv.Block{conv.TextBlock(modelctx.BudgetNotice(text))})
}

// shortBudget says which budget is nearly spent, or "".
func (r *run) shortBudget(ctx context.Context) string {
	cfg := r.cfg
	short := func(left, perTurn, total float64) bool {
		return left <= perTurn || left < total/10
	}
	var why []string
	if cfg.MaxTurns > 0 {
		left := cfg.MaxTurns - r.res.Turns
		if short(float64(left), 1, float64(cfg.MaxTurns)) {
			why = append(why, fmt.Sprintf("%d of %d model requests left (--max-turns)", left, cfg.MaxTurns))
		}
	}
	if cfg.MaxCostUSD > 0 && r.res.CostUSD != nil && r.res.Turns > 0 {
		spent := *r.res.CostUSD
		if short(cfg.MaxCostUSD-spent, r.lastCost, cfg.MaxCostUSD) {
			why = append(why, fmt.Sprintf("%s of %s spent (--max-cost-usd)", usd(spent), usd(cfg.MaxCostUSD)))
		}
	}
	if cfg.MaxTotalTokens > 0 && r.res.Turns > 0 {
		used := totalTokens(r.res.Usage)
		if short(float64(cfg.MaxTotalTokens-used), float64(r.lastTokens), float64(cfg.MaxTotalTokens)) {
			why = append(why, fmt.Sprintf("%d of %d tokens used (--max-total-tokens)", used, cfg.MaxTotalTokens))
		}
	}
	if deadline, ok := ctx.Deadline(); ok && r.res.Turns > 0 {
		left := deadline.Sub(cfg.now())
		total := deadline.Sub(r.start)
		if short(float64(left), float64(r.lastTurn), float64(total)) {
			why = append(why, fmt.Sprintf("%s of %s left (--timeout)", left.Round(time.Second), total.Round(time.Second)))
		}
	}
	return strings.Join(why, "; ")
}

// measureTurn remembers what the turn that produced msg took.
func (r *run) measureTurn(msg conv.Message, d time.Duration) {
	r.lastTurn = d
	if msg.Usage != nil {
		r.lastTokens = totalTokens(*msg.Usage)
	}
	if msg.CostUSD != nil {
		r.lastCost = *msg.CostUSD
	}
}
