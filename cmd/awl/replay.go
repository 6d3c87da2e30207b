package main

import (
	"fmt"
	"strings"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/session"
)

// buildReplay sets up --provider replay: the recorded session named by
// --replay serves as the model, and its real user prompts are re-enacted in
// order. It returns the provider, the recorded model and the script.
func (c *runCmd) buildReplay(a *app, store *session.Store, cwd, model string) (provider.Provider, string, []conv.Message, error) {
	if c.Replay == "" {
		return nil, "", nil, runner.Usagef("--provider replay needs --replay <session id, prefix or .jsonl path>")
	}
	path, err := store.Resolve(c.Replay, cwd)
	if err != nil {
		return nil, "", nil, fmt.Errorf("--replay: %w", err)
	}
	rec, err := session.Load(path)
	if err != nil {
		return nil, "", nil, fmt.Errorf("--replay: %w", err)
	}
	c.recordedSchema = recordedSchema(rec)
	msgs := rec.Conversation()
	script := runner.ReplayPrompts(msgs)
	if len(script) == 0 {
		return nil, "", nil, runner.Usagef(fmt.Sprintf("--replay: %s has no user prompt to replay", path))
	}
	if model == "" {
		for _, m := range msgs {
			if m.Role == conv.RoleAssistant && m.Model != "" {
				model = m.Model
			}
		}
		if model == "" {
			_, model = rec.ActiveModel()
		}
	}
	return runner.NewReplay(msgs, model, c.ReplayLenient, a.stderr), model, script, nil
}

// checkReplayPrompt makes sure a prompt given with --provider replay is the
// recording's first one.
func checkReplayPrompt(given string, script []conv.Message) error {
	if strings.TrimSpace(given) == "" {
		return nil
	}
	first := script[0].Text()
	if strings.TrimSpace(given) != strings.TrimSpace(first) {
		return &runner.DivergedError{Diff: "the prompt differs from the recording's first prompt:\n--- recorded\n  " + first + "\n+++ now\n  " + given}
	}
	return nil
}
