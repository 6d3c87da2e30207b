package main

import (
	"cmp"
	"fmt"

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
// --replay (env AWL_REPLAY) serves as the model. It returns the provider and
// the recorded model, unless --model says otherwise.
func (c *runCmd) buildReplay(a *app, store *session.Store, cwd, name, model string) (provider.Provider, string, error) {
	if c.Replay == "" {
		return nil, "", runner.Usagef("--provider " + name + " needs --replay <session id, prefix or .jsonl path> (env AWL_REPLAY)")
	}
	path, err := store.Resolve(c.Replay, cwd)
	if err != nil {
		return nil, "", fmt.Errorf("--replay: %w", err)
	}
	p, err := provider.New(name, provider.Options{Recording: path, Lenient: c.ReplayLenient, Warn: a.stderr})
	if err != nil {
		return nil, "", fmt.Errorf("--replay: %w", err)
	}
	rp := p.(*replay.Provider)
	if len(rp.Prompts()) == 0 {
		return nil, "", runner.Usagef(fmt.Sprintf("--replay: %s has no user prompt to replay", path))
	}
	return p, cmp.Or(model, rp.Model()), nil
}

// continued is the conversation of the session a run continues: the
// resumed one's, the forked one's, or none.
func continued(resumed, forked *session.Session) []conv.Message {
	switch {
	case resumed != nil:
		return resumed.Conversation()
	case forked != nil:
		return forked.Conversation()
	}
	return nil
}
