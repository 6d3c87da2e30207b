package runner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/tool"
)

// checkGate runs the --check commands after the model ends its turn. A
// failed check is fed back to the model with its command, exit code and
// output; a check that passes the first time costs no model request.
type checkGate struct {
	r       *run
	cmds    []string
	retries int
	results []event.CheckResult
}

func (r *run) newCheckGate() *checkGate {
	if len(r.cfg.Checks) == 0 {
		return nil
	}
	g := &checkGate{r: r, cmds: r.cfg.Checks, retries: max(r.cfg.CheckRetries, 0)}
	for _, c := range g.cmds {
		g.results = append(g.results, event.CheckResult{Cmd: c, ExitCode: -1})
	}
	return g
}

func (g *checkGate) Spec() GateSpec {
	return GateSpec{Name: "check", Retries: g.retries, ExitCode: ExitCheck, Reason: "check_failed"}
}

// Check runs every command, in order, each to its end, so that the
// feedback names every failure at once.
func (g *checkGate) Check(ctx context.Context, _ conv.Message) Verdict {
	em, id := g.r.cfg.Events, g.r.res.SessionID
	var failed []string
	var fb strings.Builder
	for i, c := range g.cmds {
		res := &g.results[i]
		res.Attempts++
		em.Emit(event.CheckStart{Base: em.Stamp("check_start", id), Cmd: c, Attempt: res.Attempts})
		start := time.Now()
		cctx := ctx
		if g.r.cfg.CheckEnviron != nil {
			cctx = tool.WithEnviron(ctx, g.r.cfg.CheckEnviron(c, res.Attempts)...)
		}
		out := tool.RunCommand(cctx, g.r.cfg.Cwd, g.r.cfg.Environ, c, tool.DefaultBashTimeout, g.r.confine())
		res.ExitCode = -1
		if out.ExitCode != nil {
			res.ExitCode = *out.ExitCode
		}
		em.Emit(event.CheckEnd{Base: em.Stamp("check_end", id), Cmd: c, Attempt: res.Attempts, ExitCode: res.ExitCode, DurationMS: time.Since(start).Milliseconds()})
		if err := ctx.Err(); err != nil {
			return Verdict{Err: err}
		}
		if res.ExitCode == 0 {
			continue
		}
		failed = append(failed, fmt.Sprintf("%s: exit code %d", c, res.ExitCode))
		fmt.Fprintf(&fb, "$ %s\n%s\n\n", c, strings.TrimRight(out.Content, "\n"))
	}
	if len(failed) == 0 {
		return Verdict{Pass: true}
	}
	what := fmt.Sprintf("%d of the %d checks", len(failed), len(g.cmds))
	if len(g.cmds) == 1 {
		what = "the check"
	}
	text := fmt.Sprintf("The work is not done: %s failed. Fix the cause, then end your turn; the checks run again.\n\n%s", what, strings.TrimRight(fb.String(), "\n"))
	return Verdict{Feedback: text, Problems: failed}
}
