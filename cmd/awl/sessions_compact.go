package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/tool"
	"github.com/awlrun/awl/session"
)

// sessionsCompactCmd compacts a session on demand, for example between
// two CI steps that continue it.
type sessionsCompactCmd struct {
	Ref string `arg:"" placeholder:"REF"`

	Provider   string        `name:"provider" placeholder:"NAME"`
	Model      string        `name:"model" placeholder:"NAME"`
	BaseURL    string        `name:"base-url" placeholder:"URL"`
	MaxRetries int           `name:"max-retries" default:"4"`
	Timeout    time.Duration `name:"timeout" placeholder:"DURATION"`

	ContextWindow *int64 `name:"context-window" placeholder:"N"`
	Pricing       string `name:"pricing" placeholder:"FILE"`

	System       string   `name:"system" placeholder:"TEXT"`
	AppendSystem string   `name:"append-system" placeholder:"TEXT"`
	NoAgentsMD   bool     `name:"no-agents-md"`
	NoEnvContext bool     `name:"no-env-context"`
	RedactEnv    []string `name:"redact-env" sep:"none" placeholder:"NAME"`
}

// Run compacts the session. Its events (session, entries, compaction,
// result) go to stdout as NDJSON, and one line to stderr says what was
// done; the exit code is the result's.
func (c *sessionsCompactCmd) Run(a *app, store *session.Store) error {
	em := event.NewEmitter(a.stdout, nil)
	ctx := a.ctx
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, c.Timeout, &runner.TimeoutError{After: c.Timeout})
		defer cancel()
	}
	res, cfg, err := c.prepare(a, store, em)
	if err != nil {
		res.Err = err
		runner.EmitResult(em, res, time.Since(a.start))
		a.code, _ = runner.Classify(err)
		fmt.Fprintln(a.stderr, "awl:", err)
		return nil
	}
	res = runner.Compact(ctx, cfg)
	a.code, _ = runner.Classify(res.Err)
	switch {
	case res.Err != nil:
		fmt.Fprintln(a.stderr, "awl:", res.Err)
	case res.Text != "":
		fmt.Fprintf(a.stderr, "awl: compacted session %s (continue with: awl run --resume %s \"…\")\n", res.SessionID, res.SessionID)
	}
	return nil
}

// prepare resolves and opens (locks) the session as awl run --resume does,
// then chooses the provider and model: the flags, AWL_PROVIDER and
// AWL_MODEL, else the session's own.
func (c *sessionsCompactCmd) prepare(a *app, store *session.Store, em *event.Emitter) (runner.Result, runner.Config, error) {
	var res runner.Result
	if c.Timeout < 0 || c.MaxRetries < 0 {
		return res, runner.Config{}, runner.Usagef("--timeout and --max-retries must not be negative")
	}
	if err := checkContextWindow(c.ContextWindow); err != nil {
		return res, runner.Config{}, err
	}
	// The model and secrets are resolved as awl run resolves them.
	o := modelOptions{Provider: c.Provider, Model: c.Model, BaseURL: c.BaseURL, MaxRetries: c.MaxRetries}
	if recorded(cmp.Or(c.Provider, a.getenv("AWL_PROVIDER"))) {
		return res, runner.Config{}, runner.Usagef("--provider replay cannot compact a session: the summary needs a model")
	}
	secretNames, err := secretNames(a, c.RedactEnv)
	if err != nil {
		return res, runner.Config{}, err
	}
	hideSecrets(a, secretNames)
	cwd, err := sessionsCwd()
	if err != nil {
		return res, runner.Config{}, err
	}
	p, err := resolve(store, c.Ref)
	if err != nil {
		return res, runner.Config{}, err
	}
	sess, err := openSession(&res, p)
	if err != nil {
		return res, runner.Config{}, err
	}
	fail := func(err error) (runner.Result, runner.Config, error) {
		sess.Close()
		return res, runner.Config{}, err
	}
	// A bad --pricing is exit 2 before the provider's credentials are
	// looked for.
	prices, err := loadPrices(a.getenv, c.Pricing, "--pricing")
	if err != nil {
		return fail(err)
	}
	activeProvider, activeModel := sess.ActiveModel()
	prov, model, err := o.resolve(a, activeProvider, activeModel)
	if err != nil {
		return fail(err)
	}
	env := tool.Env{Dir: cwd, Getenv: a.getenv, Environ: toolEnviron(secretNames)}
	return res, runner.Config{
		Store:        store,
		Cwd:          cwd,
		Resume:       sess,
		Provider:     prov,
		Model:        model,
		Tools:        lastRunTools(sess, tool.Builtins(env)),
		Window:       runner.Window{Tokens: windowTokens(c.ContextWindow, prices, prov.Name(), model)},
		Prices:       prices,
		Timeout:      c.Timeout,
		Version:      version,
		System:       c.System,
		AppendSystem: c.AppendSystem,
		NoEnv:        c.NoEnvContext,
		NoAgentsMD:   c.NoAgentsMD,
		Start:        a.start,
		Redact:       redactor(a, secretNames),
		Events:       em,
		Notes:        a.stderr,
		Getenv:       a.getenv,
	}, nil
}

// lastRunTools returns the built-in tools the session's last run offered
// (its run entry's flags.tools), in their order; all of them when no run
// entry says. They are offered with the summary request, which keeps the
// request valid for a history with tool calls and its prefix cached, and
// named in the rebuilt context, so a run that continues with the same tools
// adds nothing to it.
func lastRunTools(s *session.Session, builtins []tool.Tool) []tool.Tool {
	path := s.ActivePath()
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type != session.TypeRun {
			continue
		}
		var e session.Run
		if path[i].Decode(&e) != nil {
			break
		}
		var out []tool.Tool
		for _, t := range builtins {
			if slices.Contains(e.Flags.Tools, t.Name()) {
				out = append(out, t)
			}
		}
		return out
	}
	return builtins
}
