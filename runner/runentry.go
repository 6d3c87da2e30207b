package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/awlrun/awl/runner/sandbox"
	"github.com/awlrun/awl/session"
)

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
	e := session.Run{
		ExitCode:   code,
		Reason:     reason,
		Turns:      r.res.Turns,
		Usage:      session.Usage{Input: r.res.Usage.Input, Output: r.res.Usage.Output, CacheRead: r.res.Usage.CacheRead, CacheWrite: r.res.Usage.CacheWrite},
		CostUSD:    r.res.CostUSD,
		DurationMS: d.Milliseconds(),
		AwlVersion: cfg.Version,
		Config:     cfg.ConfigFiles,
		Flags: session.RunFlags{
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
			CacheTTL:        cfg.CacheTTL,
			ServiceTier:     cfg.ServiceTier,
		},
	}
	if share, ok := r.res.Usage.CacheReadShare(); ok {
		e.CacheReadShare = &share
	}
	if st := cfg.sandboxStatus(); st.Mode != string(sandbox.Off) {
		e.Flags.Sandbox = st.Mode
	}
	for _, c := range r.res.Checks {
		e.Checks = append(e.Checks, session.Check{Cmd: c.Cmd, ExitCode: c.ExitCode, Attempts: c.Attempts})
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
	if allow, deny := cfg.Policy.Rules(); allow != nil || deny != nil {
		e.Flags.Rules = &session.RunRules{Allow: allow, Deny: deny}
	}
	if cfg.RecordedHooks == nil { // a replay runs no hook
		for _, h := range cfg.Hooks {
			e.Flags.ToolHooks = append(e.Flags.ToolHooks, h.Cmd)
		}
	}
	e.Flags.FailOnDeny = cfg.FailOnDeny
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return
	}
	if err := r.appendEntry(session.Entry{Type: session.TypeRun, Fields: bytes.TrimSpace(buf.Bytes())}); err != nil && cfg.Notes != nil {
		fmt.Fprintf(cfg.Notes, "awl: could not record how the run ended: %v\n", err)
	}
}
