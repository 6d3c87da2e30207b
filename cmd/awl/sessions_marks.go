package main

import (
	"fmt"
	"strings"

	"github.com/awlrun/awl/internal/oneline"
	"github.com/awlrun/awl/session"
)

// A member of another JSON type, in a hand-edited prune or compaction
// entry, makes the entry unreadable for the view, which then prints it raw
// like any entry it does not know.

// run marks the end of step n, a run entry: how the run ended, and what it
// cost. The next entry begins step n+1 (a --resume, a -c, or a fork's own
// first run). It returns false, printing nothing, when the entry cannot be
// read.
func (v *viewer) run(e *session.Entry, n int) bool {
	var r session.Run
	if e.Decode(&r) != nil {
		return false
	}
	title := []string{fmt.Sprintf("step %d ended: %s (exit %d)", n, oneline.Cut(r.Reason, 40), r.ExitCode),
		fmt.Sprintf("%d turns", r.Turns), fmt.Sprintf("%.1f s", float64(r.DurationMS)/1000)}
	if r.CostUSD != nil {
		title = append(title, fmt.Sprintf("$%.4f", *r.CostUSD))
	}
	fmt.Fprintf(v.w, "\n── %s ──\n", strings.Join(title, " · "))
	if r.Error != "" {
		fmt.Fprintf(v.w, "error: %s\n", oneline.Cut(r.Error, 400))
	}
	v.ended = true
	return true
}

// prune marks a prune entry: from here on, requests show the tool results
// up to UpToID as stubs. It returns false, printing nothing, when the
// entry cannot be read.
func (v *viewer) prune(e *session.Entry) bool {
	var p session.Prune
	if e.Decode(&p) != nil {
		return false
	}
	fmt.Fprintf(v.w, "\n── pruned: requests show tool results up to %s as stubs · tokens %s → %s ──\n",
		oneline.Cut(p.UpToID, 80), tokenCount(p.TokensBefore), tokenCount(p.TokensAfter))
	return true
}

// compaction marks a compaction entry and shows its summary, which stands
// in requests for everything before it (but the kept messages, from
// FirstKeptEntryID). The summary is cut like a tool result unless --full.
func (v *viewer) compaction(e *session.Entry) bool {
	var c session.Compaction
	if e.Decode(&c) != nil {
		return false
	}
	title := []string{"compacted"}
	if c.Reason != "" {
		title[0] += " (" + oneline.Cut(c.Reason, 20) + ")"
	}
	if c.Provider != "" || c.Model != "" {
		title = append(title, oneline.Cut(c.Provider, 40)+" / "+oneline.Cut(c.Model, 60))
	}
	title = append(title, fmt.Sprintf("tokens %s → %s", tokenCount(c.TokensBefore), tokenCount(c.TokensAfter)))
	if c.CostUSD != nil {
		title = append(title, fmt.Sprintf("$%.4f", *c.CostUSD))
	}
	v.section(strings.Join(title, " · "))
	kept := "nothing kept whole"
	if c.FirstKeptEntryID != "" {
		kept = "kept whole from " + oneline.Cut(c.FirstKeptEntryID, 80)
	}
	fmt.Fprintf(v.w, "requests show this summary in place of the conversation before it (%s):\n", kept)
	if strings.TrimSpace(c.Summary) == "" {
		fmt.Fprintln(v.w, "[empty summary]")
		return true
	}
	v.text(c.Summary, true)
	return true
}

// tokenCount writes a token count briefly: 812, 52.4k, 1.2M.
func tokenCount(n int64) string {
	switch {
	case n >= 999_950:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1e6)) + "M"
	case n >= 1000:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1e3)) + "k"
	}
	return fmt.Sprint(n)
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }
