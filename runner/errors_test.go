package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/provider/replay"
	"github.com/awlrun/awl/runner/redact"
	"github.com/awlrun/awl/runner/sandbox"
	"github.com/awlrun/awl/session"
)

// coded is an ExitCoder of a kind the runner does not know.
type coded struct{ code int }

func (e coded) Error() string      { return "coded" }
func (e coded) ExitCode() int      { return e.code }
func (e coded) ExitReason() string { return "coded" }

func TestClassifyMapsEveryKindToTheExitCodeTable(t *testing.T) {
	cases := []struct {
		err    error
		code   int
		reason string
	}{
		{nil, 0, "completed"},
		{errors.New("boom"), 1, "internal_error"},
		{Usagef("no prompt"), 2, "usage_error"},
		{fmt.Errorf("open: %w", &session.Error{Kind: session.KindLocked}), 3, "session_error"},
		{&provider.Error{Kind: provider.KindConfig}, 4, "provider_config"},
		{&provider.Error{Kind: provider.KindAuth, Status: 401}, 4, "provider_config"},
		{&provider.Error{Kind: provider.KindTransient, Status: 529}, 5, "provider_error"},
		{&provider.Error{Kind: provider.KindRequest, Status: 400}, 5, "provider_error"},
		{&replay.DivergedError{Diff: "x"}, 5, "replay_diverged"},
		{&LimitError{Reason: "max_turns"}, 6, "max_turns"},
		{&LimitError{Reason: "max_output_tokens"}, 6, "max_output_tokens"},
		{context.DeadlineExceeded, 124, "timeout"},
		{&TimeoutError{After: time.Second}, 124, "timeout"},
		{&GateError{Spec: GateSpec{ExitCode: 8, Reason: "check_failed"}}, 8, "check_failed"},
		{&ConfigError{Reason: "mcp_server_failed"}, 4, "mcp_server_failed"},
		{&sandbox.UnsupportedError{}, 4, "sandbox_unavailable"},
		// Any ExitCoder, however wrapped; the outermost decides.
		{fmt.Errorf("a: %w", fmt.Errorf("b: %w", coded{143})), 143, "coded"},
		{&session.Error{Kind: session.KindAccess, Err: coded{5}}, 3, "session_error"},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), 124, "timeout"},
	}
	for _, c := range cases {
		code, reason := Classify(c.err)
		if code != c.code || reason != c.reason {
			t.Errorf("Classify(%v) = %d %s, want %d %s", c.err, code, reason, c.code, c.reason)
		}
	}
}

func TestRedactedErrorKeepsItsClass(t *testing.T) {
	r := redact.New([]redact.Secret{{Name: "K", Value: "sk-SENTINEL-abcdefgh"}})
	orig := &provider.Error{Kind: provider.KindAuth, Message: "bad key sk-SENTINEL-abcdefgh"}
	err := r.Error(orig)
	if strings.Contains(err.Error(), "SENTINEL") {
		t.Errorf("error text: %s", err)
	}
	if c1, _ := Classify(err); c1 != ExitConfig {
		t.Errorf("redacted error classified %d, want %d", c1, ExitConfig)
	}
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Error("redacted error no longer unwraps to the provider error")
	}
}
