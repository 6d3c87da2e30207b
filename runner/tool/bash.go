package tool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Bash time limits.
const (
	// DefaultBashTimeout is how long a command may run when the model does
	// not say.
	DefaultBashTimeout = 120 * time.Second
	// DefaultMaxBashTimeout caps the timeout the model may ask for when
	// Env.MaxBashTimeout is zero.
	DefaultMaxBashTimeout = 10 * time.Minute
	// bashPipeGrace is how long output is still read after the command was
	// killed or exited while something it started keeps the output open.
	bashPipeGrace = 2 * time.Second
)

var bashParams = params{
	{name: "command", kind: kindString, required: true, desc: "The command line, run by `bash -c`."},
	{name: "timeout", kind: kindInteger, desc: "Timeout in seconds (default 120). The command's whole process group is killed when it expires."},
}

type bashTool struct{ env Env }

const bashDescription = "Run a shell command with `bash -c` in the working directory and return its combined stdout and stderr, then its exit code. " +
	"stdin is /dev/null: nothing can prompt for input. The default timeout is 120 seconds; on timeout the command and everything it started are killed. " +
	"Long output keeps its first and last 25 KiB. Start background processes with their output redirected (`cmd > log 2>&1 &`): output written after the command exits is not read."

type bashArgs struct {
	Command string `json:"command"`
	Timeout *int   `json:"timeout"`
}

func (t bashTool) run(ctx context.Context, in bashArgs) Result {
	if strings.TrimSpace(in.Command) == "" {
		return errorf("bash: command is empty")
	}
	timeout, note := DefaultBashTimeout, ""
	if in.Timeout != nil {
		if *in.Timeout < 1 {
			return errorf("bash: timeout must be at least 1 second, got %d", *in.Timeout)
		}
		maxT := t.env.MaxBashTimeout
		if maxT <= 0 {
			maxT = DefaultMaxBashTimeout
		}
		timeout = time.Duration(*in.Timeout) * time.Second
		if timeout > maxT {
			timeout = maxT
			note = fmt.Sprintf("(timeout capped at %s)\n", seconds(maxT))
		}
	}
	environ := t.env.Environ
	if environ == nil {
		environ = os.Environ()
	}
	res := runBash(ctx, t.env.resolve("."), withCallEnviron(ctx, environ), in.Command, timeout, note, t.env.Confine, false)
	return confinedResult(res, t.env.Confine)
}

// RunCommand runs command with `bash -c` in dir as the bash tool runs the
// model's commands (its own process group killed after timeout, stdin
// /dev/null, output cut like bash output), with environ (nil: the
// process's own), which should be the tools' own, without secrets, and
// ctx's WithEnviron. It is for commands the user gave (--check). confine,
// when not nil, confines it as it confines the model's commands: the user
// wrote the command, but what it runs (a test suite) the model may have
// written. Unlike a tool call's, what the command leaves running in its
// process group is killed when it ends: a check is over once it has its
// exit code, and nothing of it outlives the run, sandbox or not.
func RunCommand(ctx context.Context, dir string, environ []string, command string, timeout time.Duration, confine Confiner) Result {
	if environ == nil {
		environ = os.Environ()
	}
	return confinedResult(runBash(ctx, dir, withCallEnviron(ctx, environ), command, timeout, "", confine, true), confine)
}

type environKey struct{}

// WithEnviron returns ctx carrying variables ("NAME=value") that a
// process started for this call (bash, RunCommand) gets on top of its
// environment, replacing a variable of the same name: the tool call's own
// TRACEPARENT.
func WithEnviron(ctx context.Context, kv ...string) context.Context {
	if len(kv) == 0 {
		return ctx
	}
	return context.WithValue(ctx, environKey{}, kv)
}

// withCallEnviron is environ with ctx's WithEnviron variables in place of
// any of the same name.
func withCallEnviron(ctx context.Context, environ []string) []string {
	kv, _ := ctx.Value(environKey{}).([]string)
	if len(kv) == 0 {
		return environ
	}
	out := make([]string, 0, len(environ)+len(kv))
	for _, e := range environ {
		name, _, _ := strings.Cut(e, "=")
		if !slices.ContainsFunc(kv, func(v string) bool { return strings.HasPrefix(v, name+"=") }) {
			out = append(out, e)
		}
	}
	return append(out, kv...)
}

// runBash runs command in dir in its own process group, killing the group
// when timeout passes or ctx is done, and, with reapGroup, when the
// command ends.
func runBash(ctx context.Context, dir string, environ []string, command string, timeout time.Duration, note string, confine Confiner, reapGroup bool) Result {
	if ctx.Err() != nil {
		return errorf("bash: not run: the run was stopped (%v)", context.Cause(ctx))
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	out := newCapture(OutputHeadBytes, OutputTailBytes)
	cmd := exec.CommandContext(runCtx, "bash", "-c", command)
	cmd.Dir = dir
	cmd.Stdin = nil // /dev/null
	cmd.Stdout = out
	cmd.Stderr = out
	// git would otherwise open an editor or ask for credentials; with
	// these it goes on or fails instead of waiting for a person.
	cmd.Env = append(environ[:len(environ):len(environ)], "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true")
	isolate(cmd)
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	cmd.WaitDelay = bashPipeGrace
	start := cmd.Start
	if confine != nil {
		start = func() error { return confine.Start(cmd) }
	}

	// The parent-death signal fires when the OS thread that started the
	// child ends, not the process: keep this goroutine on its thread until
	// the child has been waited for. (A confined child is started from a
	// thread of its own that waits for it.)
	runtime.LockOSThread()
	err := start()
	if err == nil {
		// Its process group is its pid (isolate); the reaper kills it
		// if awl dies before the call ends.
		TrackGroup(cmd.Process.Pid, true)
		err = cmd.Wait()
		TrackGroup(cmd.Process.Pid, false)
	}
	runtime.UnlockOSThread()
	if cmd.Process == nil {
		return errorf("bash: could not start: %v", err)
	}
	if runCtx.Err() != nil || reapGroup {
		// Whatever Wait reported, make sure nothing of the group survives.
		_ = killGroup(cmd.Process)
	}

	var b strings.Builder
	b.WriteString(note)
	text := out.String()
	b.WriteString(text)
	if text != "" && !strings.HasSuffix(text, "\n") {
		b.WriteByte('\n')
	}
	state := cmd.ProcessState
	isErr := true
	var exitCode *int
	switch {
	case state != nil && state.Exited():
		// bash ended on its own; its exit code is the result even if
		// something it left behind was killed afterwards.
		switch {
		case runCtx.Err() != nil:
			b.WriteString("(processes the command left running kept the output open; they were killed when the run stopped or the timeout passed)\n")
		case errors.Is(err, exec.ErrWaitDelay):
			fmt.Fprintf(&b, "(a background process kept the output open after the command exited; output after %s was not read)\n", seconds(bashPipeGrace))
		}
		fmt.Fprintf(&b, "exit code: %d", state.ExitCode())
		isErr = state.ExitCode() != 0
		code := state.ExitCode()
		exitCode = &code
	case ctx.Err() != nil:
		fmt.Fprintf(&b, "cancelled: the run was stopped (%v); the command's process group was killed", context.Cause(ctx))
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		fmt.Fprintf(&b, "timed out after %s; the command's process group was killed", seconds(timeout))
	case state == nil:
		fmt.Fprintf(&b, "bash failed: %v", err)
	default:
		if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			fmt.Fprintf(&b, "killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
		} else {
			fmt.Fprintf(&b, "bash ended abnormally: %v", state)
		}
	}
	return Result{Content: b.String(), IsError: isErr, ExitCode: exitCode}
}

// seconds formats d as whole seconds, the unit the model asks in.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%ds", int64(d/time.Second))
}

// confinedResult adds the confinement's note to a failed result, so the
// model can tell a blocked write or connection from another failure.
func confinedResult(res Result, confine Confiner) Result {
	if confine != nil && res.IsError {
		if !strings.HasSuffix(res.Content, "\n") {
			res.Content += "\n"
		}
		res.Content += confine.Note()
	}
	return res
}
