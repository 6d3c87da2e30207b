package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/awlrun/awl/runner"
)

// SignalError is the cause of a context cancelled by SIGINT or SIGTERM.
type SignalError struct{ Sig os.Signal }

func (e SignalError) Error() string { return "interrupted by " + e.Sig.String() }

// Signal returns the signal, so runner.Classify can pick 130 or 143.
func (e SignalError) Signal() os.Signal { return e.Sig }

// signalGrace is how long a run has, after SIGINT or SIGTERM, to stop its
// work, write its session and print its result before awl exits anyway: a
// write to a stdout nobody reads (`awl run -o ndjson | sleep 60`) blocks for
// good, and a CI runner that sends TERM before KILL would otherwise wait
// out its whole grace period. The session is durable entry by entry, so it
// stays valid; only the result event may be lost.
const signalGrace = 1500 * time.Millisecond

// signalContext returns a context cancelled, with a SignalError cause, on the
// first SIGINT or SIGTERM. If the process is still running signalGrace
// later, or on a second signal, it exits at once with 130 (SIGINT) or 143
// (SIGTERM), as the run would have.
//
// With catchPipe it also catches SIGPIPE, for a stdout or stderr that is
// descriptor 1 or 2 itself (stdStreams says why it usually is not): a
// consumer that closes stdout early (`| head -1`) must not kill a run
// halfway through a tool call. The signal is caught and dropped rather
// than ignored because an ignored signal stays ignored across exec: every
// tool would inherit it, and `yes | head -1` would print "Broken pipe" and
// exit 1 instead of dying of SIGPIPE (141). A caught signal is reset to its
// default in the program a tool execs; Go catches SIGPIPE from its start
// whether or not it is asked to, so tools start with the default either way.
func signalContext(parent context.Context, catchPipe bool) (context.Context, func()) {
	if catchPipe {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	}
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		var s os.Signal
		select {
		case s = <-ch:
			cancel(SignalError{Sig: s})
		case <-done:
			return
		}
		t := time.NewTimer(signalGrace)
		select {
		case <-t.C:
		case s = <-ch:
		case <-done:
			return
		}
		code, _ := runner.Classify(SignalError{Sig: s})
		os.Exit(code)
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}
