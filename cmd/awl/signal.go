package main

import (
	"context"
	"crypto/rand"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/awlrun/awl/runner"
)

// SignalError is the cause of a context cancelled by SIGINT or SIGTERM.
type SignalError struct{ Sig os.Signal }

func (e SignalError) Error() string { return "interrupted by " + e.Sig.String() }

// ExitCode is 143 for SIGTERM and 130 otherwise (SIGINT), as a shell's
// 128 + the signal's number.
func (e SignalError) ExitCode() int {
	if e.Sig == syscall.SIGTERM {
		return runner.ExitTerm
	}
	return runner.ExitInterrupt
}

// ExitReason is "interrupted".
func (e SignalError) ExitReason() string { return "interrupted" }

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
//
// The signals are asked for in a goroutine: the first signal.Notify waits
// for the runtime to start a thread of its own for them, about 0.3 ms that
// a run spends instead reading its flags and choosing its tools
// (docs/performance.md). Until then SIGINT and SIGTERM end the process as
// they would have before main: with nothing written yet, there is nothing
// to end cleanly. The returned context carries the wait (awaitSignals):
// a run waits before it reads stdin, takes a session's lock or creates a
// session, and every other command waits before it starts.
func signalContext(parent context.Context, catchPipe bool) (context.Context, func()) {
	if catchPipe {
		// At once: the first write may come before the goroutine's
		// Notify (the rare case that stdout is descriptor 1 itself).
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	}
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	notified := make(chan struct{})
	go func() {
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		close(notified)
		// While this thread is up: the process's first crypto/rand read
		// sets up the vDSO getrandom state, 0.2-0.3 ms that the new
		// session's id would otherwise pay before the first request.
		var b [16]byte
		rand.Read(b[:])
	}()
	ctx = context.WithValue(ctx, signalsKey{}, notified)
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
		<-notified
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// signalsKey is the context key of the channel signalContext closes once
// SIGINT and SIGTERM are caught.
type signalsKey struct{}

// awaitSignals returns once ctx's signals are caught; at once for a
// context signalContext did not make.
func awaitSignals(ctx context.Context) {
	if ch, ok := ctx.Value(signalsKey{}).(chan struct{}); ok {
		<-ch
	}
}
