package runner

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Exit codes: a contract, documented in the README and repeated in the
// result event's exit_code.
const (
	ExitOK        = 0
	ExitInternal  = 1
	ExitUsage     = 2
	ExitSession   = 3
	ExitConfig    = 4
	ExitProvider  = 5
	ExitLimit     = 6
	ExitSchema    = 7 // --output-schema: the answer never validated
	ExitCheck     = 8 // --check: a check still failed
	ExitDenied    = 9 // --fail-on-deny: the tool policy denied a call
	ExitTimeout   = 124
	ExitInterrupt = 130
	ExitTerm      = 143
)

// IsLimit reports whether code is the exit code of a run a limit stopped:
// a turn, output, token or cost limit, or --timeout. Such a session stays
// resumable.
func IsLimit(code int) bool { return code == ExitLimit || code == ExitTimeout }

// UsageError is bad input from the user: flags, prompt, prompt file, image.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// ExitCode is 2.
func (e *UsageError) ExitCode() int { return ExitUsage }

// ExitReason is "usage_error".
func (e *UsageError) ExitReason() string { return "usage_error" }

// Usagef returns a UsageError.
func Usagef(msg string) error { return &UsageError{Msg: msg} }

// LimitError says a limit stopped the run; the session stays resumable.
type LimitError struct {
	Reason string // "max_turns" or "max_output_tokens"
	Msg    string
}

func (e *LimitError) Error() string { return e.Msg }

// ExitCode is 6: the session stays resumable.
func (e *LimitError) ExitCode() int { return ExitLimit }

// ExitReason is the limit's Reason.
func (e *LimitError) ExitReason() string { return e.Reason }

// ConfigError is a configuration that cannot be run, such as an MCP server
// that did not start under --mcp-strict (exit 4).
type ConfigError struct {
	Reason string // the result event's reason, e.g. "mcp_server_failed"
	Msg    string
}

func (e *ConfigError) Error() string { return e.Msg }

// ExitCode is 4.
func (e *ConfigError) ExitCode() int { return ExitConfig }

// ExitReason is the error's Reason.
func (e *ConfigError) ExitReason() string { return e.Reason }

// DeniedError ends a run that would have completed, with --fail-on-deny,
// when the tool policy denied some of its calls: a CI job must not pass
// with its work refused.
type DeniedError struct{ Calls int }

func (e *DeniedError) Error() string {
	if e.Calls == 1 {
		return "the tool policy denied 1 call (--fail-on-deny)"
	}
	return fmt.Sprintf("the tool policy denied %d calls (--fail-on-deny)", e.Calls)
}

// ExitCode is 9.
func (e *DeniedError) ExitCode() int { return ExitDenied }

// ExitReason is "denied".
func (e *DeniedError) ExitReason() string { return "denied" }

// TimeoutError is the cause of a run stopped by --timeout.
type TimeoutError struct{ After time.Duration }

func (e *TimeoutError) Error() string { return "stopped by --timeout " + e.After.String() }

// ExitCode is 124, as timeout(1)'s.
func (e *TimeoutError) ExitCode() int { return ExitTimeout }

// ExitReason is "timeout".
func (e *TimeoutError) ExitReason() string { return "timeout" }

// An ExitCoder is an error that owns its exit code and the reason the
// result event gives with it: each kind of error that ends a run
// implements it where the kind is defined, and the README's exit-code
// table is the one list of them (held to the binary by
// TestReadmeExitCodeTable in cmd/awl).
type ExitCoder interface {
	error
	ExitCode() int
	ExitReason() string
}

// Classify maps an error to its exit code and result reason: the first
// ExitCoder of its chain, the outermost, decides; a context's deadline is
// a timeout, and any other error an internal one.
func Classify(err error) (code int, reason string) {
	if err == nil {
		return ExitOK, "completed"
	}
	var ec ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode(), ec.ExitReason()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ExitTimeout, "timeout"
	}
	return ExitInternal, "internal_error"
}
