package main

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/provider/replay"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/session"
)

// recorded reports whether the provider called name plays a recording
// (replay) rather than asking a model.
func recorded(name string) bool {
	s, ok := provider.Lookup(name)
	return ok && s.Recorded
}

// buildReplay sets up --provider replay: the recorded session named by
// --replay serves as the model, and its real user prompts are re-enacted in
// order. It returns the provider, the recorded model and the script.
func (c *runCmd) buildReplay(a *app, store *session.Store, cwd, name, model string) (provider.Provider, string, []conv.Message, error) {
	if c.Replay == "" {
		return nil, "", nil, runner.Usagef("--provider " + name + " needs --replay <session id, prefix or .jsonl path>")
	}
	path, err := store.Resolve(c.Replay, cwd)
	if err != nil {
		return nil, "", nil, fmt.Errorf("--replay: %w", err)
	}
	p, err := provider.New(name, provider.Options{Recording: path, Lenient: c.ReplayLenient, Warn: a.stderr})
	if err != nil {
		return nil, "", nil, fmt.Errorf("--replay: %w", err)
	}
	rp := p.(*replay.Provider)
	rec := rp.Recording()
	c.recordedSchema = recordedSchema(rec)
	script := replay.Prompts(rec.Conversation())
	if len(script) == 0 {
		return nil, "", nil, runner.Usagef(fmt.Sprintf("--replay: %s has no user prompt to replay", path))
	}
	return p, cmp.Or(model, rp.Model()), script, nil
}

// checkReplayPrompt makes sure a prompt given with --provider replay is the
// recording's first one.
func checkReplayPrompt(given string, script []conv.Message) error {
	if strings.TrimSpace(given) == "" {
		return nil
	}
	first := script[0].Text()
	if strings.TrimSpace(given) != strings.TrimSpace(first) {
		return &replay.DivergedError{Diff: "the prompt differs from the recording's first prompt:\n--- recorded\n  " + first + "\n+++ now\n  " + given}
	}
	return nil
}
