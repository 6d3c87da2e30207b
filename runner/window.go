package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/runner/modelinfo"
	"github.com/awlrun/awl/runner/projection"
	"github.com/awlrun/awl/session"
)

// Window is how a run keeps its requests inside the model's context window.
type Window struct {
	// Tokens is the context window; 0 means unknown, which turns pruning
	// and threshold compaction off (a "prompt is too long" answer still
	// compacts).
	Tokens int64
	// PruneAt and CompactAt are the thresholds, in percent of Tokens;
	// 0 means the defaults, 60 and 80.
	PruneAt, CompactAt int
	// NoCompact turns compaction off, on threshold and on overflow.
	NoCompact bool
}

func (w Window) pruneAt() int64 {
	if w.PruneAt > 0 {
		return int64(w.PruneAt)
	}
	return 60
}

func (w Window) compactAt() int64 {
	if w.CompactAt > 0 {
		return int64(w.CompactAt)
	}
	return 80
}

// over reports whether tokens reach pct percent of the window. It counts
// in floating point: a window near the top of int64 must not wrap.
func (w Window) over(tokens, pct int64) bool {
	return w.Tokens > 0 && float64(tokens)*100 >= float64(pct)*float64(w.Tokens)
}

// windowState tracks how full the window is: the usage of the last
// response (which covers every message of its request and itself) and how
// many projected messages that covers.
type windowState struct {
	tokens  int64
	covered int
}

// estimate is the tokens a request of msgs and specs takes: the last
// response's usage for the messages it covered (and the tools), and bytes
// for the rest. Before the first response of this run, and after a
// boundary, it is bytes alone, the tool definitions' included.
//
// A usage under a third of what the bytes say is not a real count (some
// compatible servers report zeros, or fixed figures) and is not used.
func (r *run) estimate(msgs []conv.Message, specs []provider.Tool) int64 {
	w := r.window
	if w.covered > 0 && w.covered <= len(msgs) {
		if w.tokens*3 >= projection.Estimate(msgs[:w.covered])+specTokens(specs) {
			return w.tokens + projection.Estimate(msgs[w.covered:])
		}
	}
	return projection.Estimate(msgs) + specTokens(specs)
}

// specTokens estimates the tokens the tool definitions take in a request.
func specTokens(specs []provider.Tool) int64 {
	var n int
	for _, s := range specs {
		n += len(s.Name) + len(s.Description) + len(s.Schema) + 16
	}
	return int64(float64(n) / projection.BytesPerToken)
}

// seedWindow is the window state the session's own log gives: the usage
// recorded with its last model response, when no prune or compaction in
// force came after it and the response came from provider and model (another model
// counts tokens otherwise). A resumed run so estimates as the run that
// wrote the session would have for its next request, rather than from
// bytes alone.
//
// msgs is projection.Project(path): the messages the response's request
// covered are those before the message entries that follow it.
func seedWindow(path []session.Entry, msgs []conv.Message, provider, model string, table *modelinfo.Table) windowState {
	after := 0
	for i := len(path) - 1; i >= 0; i-- {
		e := path[i]
		switch {
		case e.Type == session.TypePrune || projection.InForce(path, i):
			// A compaction that is not in force (a run killed before
			// the context after it was written) changed nothing: the
			// usage before it still counts what a request shows.
			return windowState{}
		case e.Message != nil && e.Message.Role == conv.RoleAssistant:
			u := e.Message.Usage
			if p, m := sentTo(path[:i]); u == nil || !sameModel(table, p, m, provider, model) {
				return windowState{}
			}
			return windowState{tokens: u.Input + u.CacheRead + u.CacheWrite + u.Output, covered: len(msgs) - after}
		case e.Type == session.TypeMessage && e.Message != nil:
			after++
		}
	}
	return windowState{}
}

// sameModel reports whether provider p's model m counts tokens as
// provider's model does: the same names, or names the model table takes
// for one model (an alias, a dated snapshot) in one price family.
func sameModel(table *modelinfo.Table, p, m, provider, model string) bool {
	if p == provider && m == model {
		return true
	}
	if modelinfo.Family(p) != modelinfo.Family(provider) {
		return false
	}
	a, ok := table.Lookup(p, m)
	b, ok2 := table.Lookup(provider, model)
	return ok && ok2 && a.Provider == b.Provider && a.Name == b.Name
}

// sentTo is where the request answered after path was sent: the provider
// and model of the last user message that records them. An assistant
// message names none at the entry's level, and the model it names inside
// may be the API's dated name for the one requested.
func sentTo(path []session.Entry) (provider, model string) {
	for i := len(path) - 1; i >= 0; i-- {
		e := path[i]
		if e.Message != nil && e.Message.Role == conv.RoleUser && (e.Provider != "" || e.Model != "") {
			return e.Provider, e.Model
		}
	}
	return "", ""
}

// noteUsage records a response's usage for estimate.
func (r *run) noteUsage(reqMsgs int, u *conv.Usage) {
	if u == nil {
		r.window = windowState{}
		return
	}
	r.window = windowState{tokens: u.Input + u.CacheRead + u.CacheWrite + u.Output, covered: reqMsgs + 1}
}

// fit projects the session for the next request, pruning and then
// compacting first when the request would pass a threshold. It returns the
// messages and the prefixes of them that other requests share
// (projection.ProjectPrefixes).
func (r *run) fit(ctx context.Context, specs []provider.Tool) ([]conv.Message, projection.Prefixes, error) {
	path := r.sess.ActivePath()
	if !r.limitSeeded {
		r.limitSeeded = true
		if lim := learnedLimit(path, r.cfg.Provider.Name(), r.cfg.Model, r.cfg.Prices); lim > 0 && (r.cfg.Window.Tokens <= 0 || lim < r.cfg.Window.Tokens) {
			r.cfg.Window.Tokens = lim
		}
	}
	w := r.cfg.Window
	msgs, marks := projection.ProjectPrefixes(path)
	if w.Tokens <= 0 {
		return msgs, marks, nil
	}
	if !r.windowSeeded {
		r.window, r.windowSeeded = seedWindow(path, msgs, r.cfg.Provider.Name(), r.cfg.Model, r.cfg.Prices), true
	}
	est := r.estimate(msgs, specs)
	if w.over(est, w.pruneAt()) {
		// Without summaries, a request at the compaction threshold is
		// pruned whatever the prune frees.
		pruned, err := r.prune(est, specTokens(specs), keepTurns, r.summaryOff && w.over(est, w.compactAt()))
		if err != nil {
			return nil, marks, err
		}
		if pruned {
			msgs, marks = projection.ProjectPrefixes(r.sess.ActivePath())
			est = projection.Estimate(msgs) + specTokens(specs)
		}
	}
	if !w.NoCompact && !r.summaryOff && w.over(est, w.compactAt()) && turnSinceCompaction(r.sess.ActivePath()) {
		if err := r.compact(ctx, specs, est, "threshold"); err != nil {
			ns, ok := errors.AsType[*errNoSummary](err)
			if !ok {
				return nil, marks, err
			}
			if _, err := r.pruneAlone(ns, est, specTokens(specs), keepTurns); err != nil {
				return nil, marks, err
			}
		}
		// The summary request was paid for: a budget it used up stops
		// the run before the request it was made for.
		if err := r.budgetStop(); err != nil {
			return nil, marks, err
		}
		msgs, marks = projection.ProjectPrefixes(r.sess.ActivePath())
	}
	return msgs, marks, nil
}

// turnSinceCompaction reports whether path holds an assistant message
// after its latest compaction (or at all, without one). Without one there
// is no work to summarise: the context and the prompt alone pass the
// threshold, and a summary would only stand in for the prompt.
func turnSinceCompaction(path []session.Entry) bool {
	for i := len(path) - 1; i >= 0; i-- {
		switch e := path[i]; {
		case projection.InForce(path, i):
			return false
		case e.Message != nil && e.Message.Role == conv.RoleAssistant:
			return true
		}
	}
	return false
}

// TypeContextLimit is the entry type that records a context limit a
// server stated when it refused a request as too long.
const TypeContextLimit = "contextLimit"

// contextLimitFields are the members of a contextLimit entry.
type contextLimitFields struct {
	Tokens   int64  `json:"tokens"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Stated says the refusal stated the limit; false when it named none
	// and the limit is the last request the server took.
	Stated bool `json:"stated"`
}

// learnedLimit is the latest limit a contextLimit entry on path records
// for provider's model (or a name the model table takes for it), 0 for
// none.
func learnedLimit(path []session.Entry, provider, model string, table *modelinfo.Table) int64 {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type != TypeContextLimit {
			continue
		}
		var f contextLimitFields
		if json.Unmarshal(path[i].Fields, &f) == nil && f.Tokens > 0 && sameModel(table, f.Provider, f.Model, provider, model) {
			return f.Tokens
		}
	}
	return 0
}

// learnLimit takes the limit a refusal as too long states (or, when it
// states none, the size of the last request the server took) as the
// window, when it is smaller than the window in force, and records it in
// the session so that a resume knows it.
func (r *run) learnLimit(err error) error {
	lim, stated := provider.ContextLimit(err), true
	if lim <= 0 {
		lim, stated = r.window.tokens, false
	}
	if lim <= 0 || r.cfg.Window.Tokens > 0 && lim >= r.cfg.Window.Tokens {
		return nil
	}
	r.cfg.Window.Tokens = lim
	f := contextLimitFields{Tokens: lim, Provider: r.cfg.Provider.Name(), Model: r.cfg.Model, Stated: stated}
	if err := r.appendEntry(session.Entry{Type: TypeContextLimit, Fields: mustJSON(f)}); err != nil {
		return err
	}
	note := fmt.Sprintf("the server refused a request as too long and states a limit of %d tokens, which is the window from now on", lim)
	if !stated {
		note = fmt.Sprintf("the server refused a request as too long and states no limit; the size of the last request it took, %d tokens, is the window from now on", lim)
	}
	r.notice(note)
	return nil
}

// fitOverflow shortens the session after the API refused a request of est
// tokens as too long: it compacts (reason overflow); when the model will
// not summarise, or would not before in this run, it stubs every large
// tool result, the latest included. It returns errNotShorter when
// nothing was left to stub, and then the refusal is the run's error.
func (r *run) fitOverflow(ctx context.Context, specs []provider.Tool, est int64) error {
	if !r.summaryOff {
		err := r.compact(ctx, specs, est, "overflow")
		ns, ok := errors.AsType[*errNoSummary](err)
		if !ok {
			return err
		}
		r.sayPruningAlone(ns)
	}
	pruned, err := r.prune(est, specTokens(specs), 0, true)
	if err == nil && !pruned {
		return errNotShorter
	}
	return err
}

// overflowed reports whether err is a provider's answer that the request
// did not fit the context window.
func overflowed(err error) bool {
	var pe *provider.Error
	return errors.As(err, &pe) && provider.IsContextOverflow(pe)
}
