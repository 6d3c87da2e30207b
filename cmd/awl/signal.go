package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// SignalError is the cause of a context cancelled by SIGINT or SIGTERM.
type SignalError struct{ Sig os.Signal }

func (e SignalError) Error() string { return "interrupted by " + e.Sig.String() }

// Signal returns the signal, so runner.Classify can pick 130 or 143.
func (e SignalError) Signal() os.Signal { return e.Sig }

// signalContext returns a context cancelled, with a SignalError cause, on the
// first SIGINT or SIGTERM.
//
// It also ignores SIGPIPE: a consumer that closes stdout early (`| head -1`)
// must not kill a run halfway through a tool call; writes to the closed pipe
// fail instead, events stop, and the run finishes its session.
func signalContext(parent context.Context) (context.Context, func()) {
	signal.Ignore(syscall.SIGPIPE)
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			cancel(SignalError{Sig: s})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}
