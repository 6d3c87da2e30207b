package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/modelctx"
	"github.com/awlrun/awl/session"
)

// wordGate accepts an answer that contains word; it counts its checks.
type wordGate struct {
	word    string
	retries int
	checks  int
	err     error
}

func (g *wordGate) Spec() runner.GateSpec {
	return runner.GateSpec{Name: "word", Retries: g.retries, ExitCode: 8, Reason: "check_failed"}
}

func (g *wordGate) Check(_ context.Context, msg conv.Message) runner.Verdict {
	g.checks++
	if g.err != nil {
		return runner.Verdict{Err: g.err}
	}
	if strings.Contains(msg.Text(), g.word) {
		return runner.Verdict{Pass: true}
	}
	return runner.Verdict{Feedback: "say " + g.word, Problems: []string{"no " + g.word}}
}

func TestGateFeedbackThenPass(t *testing.T) {
	g := newSchemaRig(t, "anthropic")
	gate := &wordGate{word: "done", retries: 2}
	g.answer("working on it", "still going", "done now")
	res := g.run(func(c *runner.Config) { c.Gates = []runner.Gate{gate} })
	if res.Err != nil || res.Text != "done now" || gate.checks != 3 {
		t.Fatalf("err %v text %q after %d checks", res.Err, res.Text, gate.checks)
	}
	sess, err := session.Load(res.SessionPath)
	if err != nil {
		t.Fatal(err)
	}
	var feedback []string
	for _, m := range sess.Conversation() {
		if modelctx.IsGateFeedback(m) {
			feedback = append(feedback, m.Text())
		}
	}
	want := runner.FeedbackText("word", "say done")
	if len(feedback) != 2 || feedback[0] != want || feedback[1] != want {
		t.Fatalf("feedback in the session: %q, want twice %q", feedback, want)
	}
}

func TestGateExhaustedEndsWithItsExitCode(t *testing.T) {
	g := newSchemaRig(t, "openai")
	gate := &wordGate{word: "done", retries: 1}
	g.answer("no", "no again")
	res := g.run(func(c *runner.Config) { c.Gates = []runner.Gate{gate} })
	code, reason := runner.Classify(res.Err)
	if code != 8 || reason != "check_failed" || len(res.Problems) != 1 {
		t.Fatalf("exit %d %s problems %q (%v)", code, reason, res.Problems, res.Err)
	}
	if !strings.Contains(res.Err.Error(), "word: the answer was still rejected after 1 retry: no done") {
		t.Fatalf("error %q", res.Err)
	}
}

func TestGateErrorEndsTheRun(t *testing.T) {
	g := newSchemaRig(t, "openai-chat")
	boom := errors.New("check could not start")
	g.answer("anything")
	res := g.run(func(c *runner.Config) { c.Gates = []runner.Gate{&wordGate{err: boom}} })
	if !errors.Is(res.Err, boom) || len(g.srv.Requests()) != 1 {
		t.Fatalf("err %v after %d requests", res.Err, len(g.srv.Requests()))
	}
}

// The schema gate runs first; a later gate's rejection clears the
// structured value until an answer passes every gate.
func TestGatesRunInOrderWithTheSchemaFirst(t *testing.T) {
	g := newSchemaRig(t, "anthropic")
	gate := &wordGate{word: "approve", retries: 2}
	g.answer(`not json`, `{"verdict":"reject","reasons":[]}`, `{"verdict":"approve","reasons":[]}`)
	res := g.run(func(c *runner.Config) {
		c.OutputSchema = mustSchema(t, verdictSchema)
		c.Gates = []runner.Gate{gate}
	})
	if res.Err != nil || string(res.Structured) != `{"verdict":"approve","reasons":[]}` {
		t.Fatalf("%v %s", res.Err, res.Structured)
	}
	if gate.checks != 2 {
		t.Fatalf("the word gate ran %d times, want 2 (not on the answer the schema rejected)", gate.checks)
	}
}

// Each gate's retries count per prompt: a script of two prompts gets the
// full bound for each.
func TestGateRetriesResetPerPrompt(t *testing.T) {
	g := newSchemaRig(t, "anthropic")
	gate := &wordGate{word: "done", retries: 1}
	g.answer("no", "done 1", "no", "done 2")
	res := g.run(func(c *runner.Config) {
		c.Prompt = ""
		c.Script = []conv.Message{
			{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("one")}},
			{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("two")}},
		}
		c.Gates = []runner.Gate{gate}
	})
	if res.Err != nil || res.Text != "done 2" {
		t.Fatalf("%v %q", res.Err, res.Text)
	}
}

// Retry turns are model requests: --max-turns stops them (exit 6).
func TestSchemaRetriesCountTowardsMaxTurns(t *testing.T) {
	g := newSchemaRig(t, "anthropic")
	g.answer("no", "still no")
	res := g.run(func(c *runner.Config) {
		c.OutputSchema = mustSchema(t, verdictSchema)
		c.MaxTurns = 2
	})
	if code, reason := runner.Classify(res.Err); code != runner.ExitLimit || reason != "max_turns" {
		t.Fatalf("exit %d %s", code, reason)
	}
}
