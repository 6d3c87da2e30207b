package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/runner/modelctx"
	"github.com/awlrun/awl/session"
)

// Gate decides whether the answer the model ended its turn with is
// acceptable: --output-schema validates it, --check runs a command. A gate
// that rejects an answer gives feedback; the runner appends it as a durable
// user message and asks the model again, up to the gate's retry bound, and
// then ends the run with the gate's own exit code.
//
// Check is called from the run's goroutine, once per finished turn, after
// every earlier gate passed. A gate holds no state the runner relies on.
type Gate interface {
	// Spec names the gate and its bounds.
	Spec() GateSpec
	// Check judges msg, the assistant message that ended the turn.
	Check(ctx context.Context, msg conv.Message) Verdict
}

// GateSpec describes a gate.
type GateSpec struct {
	// Name is the gate's name in errors and events ("output-schema").
	Name string
	// Retries is how many more turns the model gets after a rejection.
	Retries int
	// ExitCode and Reason end a run whose retries are spent.
	ExitCode int
	Reason   string
}

// Verdict is a gate's judgement of one answer.
type Verdict struct {
	Pass bool
	// Value is what a passing gate made of the answer, when anything: the
	// parsed JSON value for --output-schema. It becomes the result's
	// structured value.
	Value json.RawMessage
	// Feedback is the user message that tells the model what to fix. The
	// runner wraps it in a <gate_feedback> element naming the gate (see
	// FeedbackText), so it is told apart from a real prompt.
	Feedback string
	// Problems lists what was wrong, one line each, for the result.
	Problems []string
	// Err is a failure of the gate itself (a check that could not start);
	// it ends the run at once.
	Err error
}

// GateError ends a run whose answer a gate still rejected after its
// retries. Classify maps it to the gate's exit code and reason.
type GateError struct {
	Spec     GateSpec
	Problems []string
}

func (e *GateError) Error() string {
	msg := fmt.Sprintf("%s: the answer was still rejected after %d retr%s", e.Spec.Name, e.Spec.Retries, plural(e.Spec.Retries, "y", "ies"))
	if len(e.Problems) > 0 {
		msg += ": " + strings.Join(e.Problems, "; ")
	}
	return msg
}

// ExitCode is the gate's own (7 for --output-schema, 8 for --check).
func (e *GateError) ExitCode() int { return e.Spec.ExitCode }

// ExitReason is the gate's own reason.
func (e *GateError) ExitReason() string { return e.Spec.Reason }

// FeedbackText is a gate's feedback as the user message the model gets
// (modelctx.FeedbackText).
func FeedbackText(gate, feedback string) string { return modelctx.FeedbackText(gate, feedback) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// gates runs the configured gates over the answer msg. It reports again
// when a gate rejected the answer and its feedback is now in the session, so
// the loop should ask the model once more; err ends the run.
func (r *run) gates(ctx context.Context, msg conv.Message) (again bool, err error) {
	for i, g := range r.gateList {
		v := g.Check(ctx, msg)
		if v.Err != nil {
			return false, v.Err
		}
		if v.Pass {
			if v.Value != nil {
				r.res.Structured = v.Value
			}
			continue
		}
		r.res.Structured = nil
		spec := g.Spec()
		if r.gateTries[i] >= spec.Retries {
			r.res.Problems = v.Problems
			return false, &GateError{Spec: spec, Problems: v.Problems}
		}
		r.gateTries[i]++
		if err := r.appendUser([]conv.Block{conv.TextBlock(FeedbackText(spec.Name, v.Feedback))}); err != nil {
			return false, err
		}
		return true, nil
	}
	return false, nil
}

// setupGates decides which schema is in force (the flag's; else, on
// resume, the one the session recorded, unless --output-schema none) and
// builds the gates. A new session not made yet (r.sess nil) has recorded
// none.
func (r *run) setupGates() error {
	r.schema = r.cfg.OutputSchema
	if r.schema == nil && !r.cfg.DropOutputSchema && r.sess != nil {
		base, err := modelctx.LastBaseline(r.sess.ActivePath())
		if err == nil && base != nil && len(base.OutputSchema) > 0 {
			s, err := CompileOutputSchema(base.OutputSchema)
			if err != nil {
				return &session.Error{Path: r.sess.Path, Kind: session.KindCorrupt, Msg: r.sess.Path + ": the output schema recorded in the session does not compile: " + err.Error()}
			}
			r.schema = s
		}
	}
	if r.schema != nil {
		r.gateList = append(r.gateList, schemaGate{schema: r.schema, retries: max(r.cfg.SchemaRetries, 0)})
	}
	r.gateList = append(r.gateList, r.cfg.Gates...)
	if g := r.newCheckGate(); g != nil {
		r.checks = g
		r.gateList = append(r.gateList, g)
	}
	return nil
}
