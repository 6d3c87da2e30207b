package runner_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/session"
)

// panicProvider panics inside Stream, as a decoder bug would.
type panicProvider struct{}

func (panicProvider) Name() string { return "anthropic" }

func (panicProvider) Stream(context.Context, provider.Request, func(provider.Event)) (conv.Message, error) {
	panic("decoder bug")
}

// TestProviderPanicIsProviderError: a panic inside a provider's stream ends
// the run as a provider failure (exit 5, a result event, the session
// valid), never a crash.
func TestProviderPanicIsProviderError(t *testing.T) {
	g := newBudgetRig(t)
	g.prov = panicProvider{}
	res := g.run(context.Background(), "claude-sonnet-4-5", nil)
	if code, reason := runner.Classify(res.Err); code != runner.ExitProvider || reason != "provider_error" {
		t.Fatalf("exit %d (%s), err %v; want 5 provider_error", code, reason, res.Err)
	}
	if !strings.Contains(res.Err.Error(), "decoder bug") {
		t.Errorf("error %q does not say what went wrong", res.Err)
	}
	var result string
	for _, line := range strings.Split(strings.TrimSpace(g.events.String()), "\n") {
		if gjson.Get(line, "type").Str == "result" {
			result = line
		}
	}
	if gjson.Get(result, "exit_code").Int() != 5 {
		t.Errorf("result event %q, want exit_code 5", result)
	}
	if _, err := session.Load(res.SessionPath); err != nil {
		t.Errorf("session after the panic: %v", err)
	}
}
