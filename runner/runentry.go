package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/sandbox"
	"github.com/awlrun/awl/session"
)

// TypeRun is the type of the entry that records how a run ended.
const TypeRun = "run"

// RunEntry is the `run` entry appended at the end of every run that holds
// the session's lock, whatever ended it. A run killed with SIGKILL has none:
// its absence is how a reader knows. Rebuild skips it.
type RunEntry struct {
	ExitCode   int        `json:"exitCode"`
	Reason     string     `json:"reason"`
	Error      string     `json:"error,omitempty"`
	Turns      int        `json:"turns"`
	Usage      EntryUsage `json:"usage"`
	CostUSD    *float64   `json:"costUsd"`
	DurationMS int64      `json:"durationMs"`
	AwlVersion string     `json:"awlVersion"`
	// Checks is each --check command's last exit code and runs.
	Checks []event.CheckResult `json:"checks,omitempty"`
	Flags  RunFlags            `json:"flags"`
}

// EntryUsage is token usage as the session format spells it.
type EntryUsage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
}

// RunFlags are the settings that shaped a run. It never holds a key.
type RunFlags struct {
	Provider        string   `json:"provider"`
	Model           string   `json:"model"`
	MaxTurns        int      `json:"maxTurns,omitempty"`
	MaxOutputTokens int      `json:"maxOutputTokens,omitempty"`
	MaxCostUSD      float64  `json:"maxCostUsd,omitempty"`
	MaxTotalTokens  int64    `json:"maxTotalTokens,omitempty"`
	TimeoutMS       int64    `json:"timeoutMs,omitempty"`
	Reasoning       string   `json:"reasoning,omitempty"`
	Tools           []string `json:"tools"`
	Checks          []string `json:"checks,omitempty"`
	CheckRetries    int      `json:"checkRetries,omitempty"`
	// ContextWindow is the window in force (from the model table or
	// --context-window); PruneAt and CompactAt are the thresholds given,
	// 0 for the defaults.
	ContextWindow int64 `json:"contextWindow,omitempty"`
	PruneAt       int   `json:"pruneAt,omitempty"`
	CompactAt     int   `json:"compactAt,omitempty"`
	NoCompact     bool  `json:"noCompact,omitempty"`
	// Sandbox is the --sandbox mode, when not off.
	Sandbox string `json:"sandbox,omitempty"`
}

// finish appends the run entry, when the run holds the session, and
// closes the session. A failure to append is said on Notes; it does not
// change how the run ended.
func (r *run) finish(d time.Duration) {
	if r.sess == nil {
		return
	}
	defer r.sess.Close()
	code, reason := Classify(r.res.Err)
	cfg := r.cfg
	e := RunEntry{
		ExitCode:   code,
		Reason:     reason,
		Turns:      r.res.Turns,
		Usage:      EntryUsage{r.res.Usage.Input, r.res.Usage.Output, r.res.Usage.CacheRead, r.res.Usage.CacheWrite},
		CostUSD:    r.res.CostUSD,
		DurationMS: d.Milliseconds(),
		AwlVersion: cfg.Version,
		Checks:     r.res.Checks,
		Flags: RunFlags{
			Provider:        cfg.Provider.Name(),
			Model:           cfg.Model,
			MaxTurns:        cfg.MaxTurns,
			MaxOutputTokens: cfg.MaxOutputTokens,
			MaxCostUSD:      cfg.MaxCostUSD,
			MaxTotalTokens:  cfg.MaxTotalTokens,
			TimeoutMS:       cfg.Timeout.Milliseconds(),
			Reasoning:       cfg.Reasoning,
			Tools:           make([]string, 0, len(cfg.Tools)),
			Checks:          cfg.Checks,
			ContextWindow:   cfg.Window.Tokens,
			PruneAt:         cfg.Window.PruneAt,
			CompactAt:       cfg.Window.CompactAt,
			NoCompact:       cfg.Window.NoCompact,
		},
	}
	if st := cfg.sandboxStatus(); st.Mode != string(sandbox.Off) {
		e.Flags.Sandbox = st.Mode
	}
	if len(cfg.Checks) > 0 {
		e.Flags.CheckRetries = cfg.CheckRetries
	}
	if e.AwlVersion == "" {
		e.AwlVersion = "dev"
	}
	if r.res.Err != nil {
		e.Error = r.res.Err.Error()
	}
	for _, t := range cfg.Tools {
		e.Flags.Tools = append(e.Flags.Tools, t.Name())
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return
	}
	if err := r.appendEntry(session.Entry{Type: TypeRun, Fields: bytes.TrimSpace(buf.Bytes())}); err != nil && cfg.Notes != nil {
		fmt.Fprintf(cfg.Notes, "awl: could not record how the run ended: %v\n", err)
	}
}
