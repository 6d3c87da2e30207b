package main

import (
	"context"
	"fmt"
	"github.com/awlrun/awl/runner/event"
	"io"
	"os"

	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/redact"
	"github.com/awlrun/awl/trace"
)

// tracing is a run's OpenTelemetry trace, when the OTEL_ variables ask for
// one (docs/tracing.md): spans built from the events as they are emitted,
// exported once at exit.
type tracing struct {
	cfg *trace.Config
	b   *trace.Builder
	// tee is where the run's events go; its err is stdout's.
	tee *tee
}

// startTracing returns the run's tracing, nil when it is off. It sets
// TRACEPARENT in awl's environment to the run span, so that MCP servers
// (which inherit it) join the trace; tool calls and checks get their own
// span's (hook).
func (c *runCmd) startTracing(a *app) *tracing {
	cfg, warn := trace.FromEnv(a.getenv)
	if warn != "" {
		fmt.Fprintf(a.stderr, "awl: warning: %s\n", warn)
	}
	if cfg == nil {
		return nil
	}
	os.Setenv("TRACEPARENT", cfg.Traceparent())
	var red *redact.Redactor
	redact := func(s string) string {
		// The secrets are known once prepare has read the flags; no
		// event with content comes before.
		if red == nil {
			red = redactor(a, c.secretVars)
		}
		return red.String(s)
	}
	b := trace.NewBuilder(cfg, a.start, currentStamp().Version, redact)
	b.SetProviderFamily(provider.Family)
	return &tracing{cfg: cfg, b: b}
}

// hook gives cfg's tool calls and checks their own span as TRACEPARENT:
// a traced build step a tool starts is a child of that tool call's span.
// MCP servers, started before the run, keep the run span's.
func (t *tracing) hook(cfg *runner.Config) {
	if t == nil {
		return
	}
	cfg.ToolEnviron = func(callID string) []string {
		return traceparentVar(t.b.ToolTraceparent(callID))
	}
	cfg.CheckEnviron = func(cmd string, attempt int) []string {
		return traceparentVar(t.b.CheckTraceparent(cmd, attempt))
	}
}

func traceparentVar(tp string) []string {
	if tp == "" {
		return nil
	}
	return []string{"TRACEPARENT=" + tp}
}

// tee is where the emitter writes with tracing on: every event to the
// trace, and to out (stdout, or nothing) as before. A failed write to out
// stops only out.
type tee struct {
	trace io.Writer
	out   io.Writer
	err   error
}

func (t *tee) Write(p []byte) (int, error) {
	t.trace.Write(p)
	if t.out != nil && t.err == nil {
		_, t.err = t.out.Write(p)
	}
	return len(p), nil
}

// WriteParts gives the trace the whole line and out the parts.
func (t *tee) WriteParts(parts ...[]byte) error {
	line := event.Join(parts...)
	t.trace.Write(line)
	if t.out != nil && t.err == nil {
		if pw, ok := t.out.(event.PartsWriter); ok {
			t.err = pw.WriteParts(parts...)
		} else {
			_, t.err = t.out.Write(line)
		}
	}
	return nil
}

// finish exports the trace: at most cfg.Timeout (1 s) more, a warning on
// stderr when the collector does not take it, never the exit code.
func (t *tracing) finish(a *app) {
	if t == nil || !t.b.Done() {
		return
	}
	if err := t.cfg.Export(context.Background(), t.b.Request()); err != nil {
		fmt.Fprintf(a.stderr, "awl: warning: traces not exported: %v\n", err)
	}
}
