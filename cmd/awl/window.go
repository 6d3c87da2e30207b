package main

import (
	"fmt"

	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/modelinfo"
)

// Bounds of --context-window. Below the minimum, the system prompt and tool
// schemas alone would fill the window; above the maximum, no model exists,
// and the threshold arithmetic would leave int64.
const (
	minContextWindow = 1_000
	maxContextWindow = 1_000_000_000
)

// defaultPruneAt and defaultCompactAt are the thresholds in percent when
// their flags are not given (runner.Window's own defaults).
const (
	defaultPruneAt   = 60
	defaultCompactAt = 80
)

// checkContextWindow refuses a --context-window that cannot be a window:
// 0 or negative (which would read as "unknown" and turn pruning off), or
// beyond any model.
func checkContextWindow(n *int64) error {
	if n == nil {
		return nil
	}
	if *n < minContextWindow || *n > maxContextWindow {
		return runner.Usagef(fmt.Sprintf("--context-window %d: want a number of tokens from %d to %d (leave the flag out to use awl's model table)", *n, minContextWindow, maxContextWindow))
	}
	return nil
}

// validateWindow checks --context-window, --prune-at, --compact-at and
// --no-compact. Pruning comes before compaction, so --prune-at may not be
// above --compact-at (equal means: prune, then compact if that was not
// enough).
func (c *runCmd) validateWindow() error {
	if err := checkContextWindow(c.ContextWindow); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"--prune-at", c.PruneAt}, {"--compact-at", c.CompactAt}} {
		if f.v != nil && (*f.v < 1 || *f.v > 100) {
			return runner.Usagef(fmt.Sprintf("%s %d: want a percentage of the context window from 1 to 100", f.name, *f.v))
		}
	}
	if c.NoCompact && c.CompactAt != nil {
		return runner.Usagef("--compact-at and --no-compact exclude each other")
	}
	if c.PruneAt != nil && !c.NoCompact {
		compactAt, which := defaultCompactAt, " (the default)"
		if c.CompactAt != nil {
			compactAt, which = *c.CompactAt, ""
		}
		if *c.PruneAt > compactAt {
			return runner.Usagef(fmt.Sprintf("--prune-at %d is above --compact-at %d%s: pruning comes first, so its threshold must be at or below compaction's", *c.PruneAt, compactAt, which))
		}
	}
	return nil
}

// window returns the run's context-window settings: the thresholds of the
// flags, and the window from --context-window, else from the model table
// (--pricing and AWL_PRICING included). For a model the table does not
// know, the window is 0: pruning and threshold compaction are off, and only
// the API's "prompt is too long" makes the run compact. awl says so on
// stderr when a threshold was asked for.
func (c *runCmd) window(a *app, prices *modelinfo.Table, provider, model string) runner.Window {
	if recorded(provider) {
		// Nothing is ever too long for a recording; see prepare.
		return runner.Window{NoCompact: true}
	}
	w := runner.Window{Tokens: windowTokens(c.ContextWindow, prices, provider, model), NoCompact: c.NoCompact}
	if c.CompactAt != nil {
		w.CompactAt = *c.CompactAt
	}
	switch {
	case c.PruneAt != nil:
		w.PruneAt = *c.PruneAt
	case c.CompactAt != nil && *c.CompactAt < defaultPruneAt:
		// --compact-at 50 alone: pruning still comes first.
		w.PruneAt = *c.CompactAt
	}
	if w.Tokens == 0 && (c.PruneAt != nil || c.CompactAt != nil) {
		fmt.Fprintf(a.stderr, "awl: warning: awl does not know the context window of %s model %q, so --prune-at and --compact-at have no effect; give it with --context-window N\n", provider, model)
	}
	return w
}

// windowTokens is the context window: n when given, else the table's
// figure for the model, else 0 (unknown).
func windowTokens(n *int64, prices *modelinfo.Table, provider, model string) int64 {
	if n != nil {
		return *n
	}
	if m, ok := prices.Lookup(provider, model); ok {
		return m.ContextWindow
	}
	return 0
}
