// Package replay is the provider that plays a recorded session as the
// model (`--provider replay --replay REF`): no key, no network, the same
// answers every time, and a divergence from the recording fails the run.
package replay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/runner/prompt"
	"github.com/awlrun/awl/session"
)

// Name is the provider name recorded by replayed runs.
const Name = "replay"

func init() {
	provider.Register(provider.Spec{Name: Name, Recorded: true, Open: open})
}

// DivergedError says a replayed run no longer matches its recording.
type DivergedError struct{ Diff string }

func (e *DivergedError) Error() string { return "replay diverged from the recording:\n" + e.Diff }

// open loads opts.Recording for New.
func open(opts provider.Options) (provider.Provider, error) {
	rec, err := session.Load(opts.Recording)
	if err != nil {
		return nil, err
	}
	msgs := rec.Conversation()
	model := ""
	for _, m := range msgs {
		if m.Role == conv.RoleAssistant && m.Model != "" {
			model = m.Model
		}
	}
	if model == "" {
		_, model = rec.ActiveModel()
	}
	r := New(msgs, model, opts.Lenient, opts.Warn)
	r.rec = rec
	return r, nil
}

// Provider serves the assistant messages of a recorded conversation as the
// model, in order. Before serving each one it compares the request awl would
// send with the one recorded: the real user prompts and the tool results
// (context fragments such as the working directory and date are left out,
// so a recording replays in another directory or on another day).
type Provider struct {
	rec      *session.Session
	model    string
	answers  []conv.Message
	expected [][]string // comparable items of the request before each answer
	lenient  bool
	warn     io.Writer
	served   int
	// wantSeen and gotSeen are how many comparable items the previous
	// turns already compared, so each turn reports only what is new.
	wantSeen, gotSeen int
}

var _ provider.Provider = (*Provider)(nil)

// New prepares a replay of recorded (a session's conversation). With
// lenient, a divergence is written to warn and the replay goes on.
func New(recorded []conv.Message, model string, lenient bool, warn io.Writer) *Provider {
	r := &Provider{model: model, lenient: lenient, warn: warn}
	for i, m := range recorded {
		if m.Role != conv.RoleAssistant {
			continue
		}
		r.answers = append(r.answers, m)
		r.expected = append(r.expected, comparable(recorded[:i]))
	}
	return r
}

// Prompts returns the real user prompts of a recorded conversation, in
// order: each user message that is neither context, tool results nor a
// gate's feedback (the replayed run's own gates give that again).
func Prompts(recorded []conv.Message) []conv.Message {
	var out []conv.Message
	for _, m := range recorded {
		if m.Role != conv.RoleUser || prompt.IsContextualMessage(m) || isToolResults(m) || prompt.IsGateFeedback(m) {
			continue
		}
		out = append(out, conv.Message{Role: conv.RoleUser, Content: m.Content})
	}
	return out
}

func isToolResults(m conv.Message) bool {
	for _, b := range m.Content {
		if b.Type == conv.BlockToolResult {
			return true
		}
	}
	return false
}

// Name implements provider.Provider.
func (r *Provider) Name() string { return Name }

// Model is the model the recording names: that of its last answer, else
// the session's active one.
func (r *Provider) Model() string { return r.model }

// Recording is the session the replay plays, when it was opened from a
// file (nil from New).
func (r *Provider) Recording() *session.Session { return r.rec }

// Remaining reports how many recorded answers have not been served.
func (r *Provider) Remaining() int { return len(r.answers) - r.served }

// Stream implements provider.Provider.
func (r *Provider) Stream(ctx context.Context, req provider.Request, emit func(provider.Event)) (conv.Message, error) {
	if err := ctx.Err(); err != nil {
		return conv.Message{}, err
	}
	if r.served >= len(r.answers) {
		return conv.Message{}, &DivergedError{Diff: fmt.Sprintf("the run asked for model turn %d, but the recording has only %d", r.served+1, len(r.answers))}
	}
	k := r.served
	want, got := r.expected[k], comparable(req.Messages)
	diff := diffItems(want[min(r.wantSeen, len(want)):], got[min(r.gotSeen, len(got)):])
	r.wantSeen, r.gotSeen = len(want), len(got)
	if diff != "" {
		diff = fmt.Sprintf("before model turn %d:\n%s", k+1, diff)
		if !r.lenient {
			return conv.Message{}, &DivergedError{Diff: diff}
		}
		if r.warn != nil {
			fmt.Fprintf(r.warn, "awl: replay diverged (--replay-lenient, going on): %s\n", diff)
		}
	}
	r.served++
	m := r.answers[k]
	out := conv.Message{Role: conv.RoleAssistant, Content: m.Content, Provider: Name, Model: m.Model, StopReason: m.StopReason, Usage: m.Usage}
	if emit != nil {
		for i, b := range out.Content {
			if b.Type == conv.BlockText {
				emit(provider.Event{Kind: provider.EventTextDelta, Index: i, Text: b.Text})
			}
		}
	}
	return out, nil
}

// comparable lists what replay compares in a request: the real user text
// and the tool results, each with the tool call it answers.
func comparable(msgs []conv.Message) []string {
	calls := map[string]string{}
	var out []string
	for _, m := range msgs {
		switch m.Role {
		case conv.RoleAssistant:
			for _, b := range m.Content {
				if b.Type == conv.BlockToolUse {
					calls[b.ID] = b.Name + " " + b.Input
				}
			}
		case conv.RoleUser:
			if prompt.IsContextualMessage(m) {
				continue
			}
			for _, b := range m.Content {
				switch b.Type {
				case conv.BlockText:
					out = append(out, "prompt:\n"+b.Text)
				case conv.BlockImage:
					out = append(out, "prompt image: "+b.MimeType+" sha256:"+digest(b.Data))
				case conv.BlockToolResult:
					s := fmt.Sprintf("result of tool call %s (%s)", b.ToolUseID, calls[b.ToolUseID])
					if b.IsError {
						s += " [error]"
					}
					s += ":\n" + b.Content
					for _, a := range b.Attachments {
						s += "\n[attachment " + a.MimeType + " sha256:" + digest(a.Data) + "]"
					}
					out = append(out, s)
				}
			}
		}
	}
	return out
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// diffItems describes the first difference between the recorded and the
// current items, or returns "" when they are equal.
func diffItems(want, got []string) string {
	n := min(len(want), len(got))
	for i := 0; i < n; i++ {
		if want[i] != got[i] {
			return "--- recorded\n" + indent(want[i]) + "\n+++ now\n" + indent(got[i])
		}
	}
	switch {
	case len(want) > n:
		return "--- recorded\n" + indent(want[n]) + "\n+++ now\n  (missing)"
	case len(got) > n:
		return "--- recorded\n  (nothing)\n+++ now\n" + indent(got[n])
	}
	return ""
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
