package runner

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/provider/replay"
	"github.com/awlrun/awl/runner/sandbox"
	"github.com/awlrun/awl/session"
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

// Usagef returns a UsageError.
func Usagef(msg string) error { return &UsageError{Msg: msg} }

// LimitError says a limit stopped the run; the session stays resumable.
type LimitError struct {
	Reason string // "max_turns" or "max_output_tokens"
	Msg    string
}

func (e *LimitError) Error() string { return e.Msg }

// ConfigError is a configuration that cannot be run, such as an MCP server
// that did not start under --mcp-strict (exit 4).
type ConfigError struct {
	Reason string // the result event's reason, e.g. "mcp_server_failed"
	Msg    string
}

func (e *ConfigError) Error() string { return e.Msg }

// TimeoutError is the cause of a run stopped by --timeout.
type TimeoutError struct{ After time.Duration }

func (e *TimeoutError) Error() string { return "stopped by --timeout " + e.After.String() }

// SignalCause is implemented by a context cause that reports the signal that
// cancelled the run.
type SignalCause interface {
	error
	Signal() os.Signal
}

// Classify maps an error to its exit code and result reason. It is the one
// place where error kinds become exit codes.
func Classify(err error) (code int, reason string) {
	if err == nil {
		return ExitOK, "completed"
	}
	var sig SignalCause
	if errors.As(err, &sig) {
		if sig.Signal() == syscall.SIGTERM {
			return ExitTerm, "interrupted"
		}
		return ExitInterrupt, "interrupted"
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		return ExitUsage, "usage_error"
	}
	var se *session.Error
	if errors.As(err, &se) {
		return ExitSession, "session_error"
	}
	var le *LimitError
	if errors.As(err, &le) {
		return ExitLimit, le.Reason
	}
	var ge *GateError
	if errors.As(err, &ge) {
		return ge.Spec.ExitCode, ge.Spec.Reason
	}
	var ce *ConfigError
	if errors.As(err, &ce) {
		return ExitConfig, ce.Reason
	}
	var te *TimeoutError
	if errors.As(err, &te) {
		return ExitTimeout, "timeout"
	}
	var de *replay.DivergedError
	if errors.As(err, &de) {
		return ExitProvider, "replay_diverged"
	}
	var sbe *sandbox.UnsupportedError
	if errors.As(err, &sbe) {
		return ExitConfig, "sandbox_unavailable"
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		switch pe.Kind {
		case provider.KindConfig, provider.KindAuth:
			return ExitConfig, "provider_config"
		default:
			return ExitProvider, "provider_error"
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ExitTimeout, "timeout"
	}
	return ExitInternal, "internal_error"
}
