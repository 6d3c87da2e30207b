package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// DefaultHookTimeout is how long a pre-tool hook may take (--tool-hook-timeout).
const DefaultHookTimeout = 30 * time.Second

// maxHookOutput bounds what a hook may print on stdout; more denies.
const maxHookOutput = 1 << 20

// Hook is a pre-tool hook (--tool-hook): a command run with bash -c before
// each allowed call, which allows it, denies it, or allows it with a
// changed input. It runs outside the sandbox, in Dir, with Env (the tools'
// environment, without secrets).
type Hook struct {
	Cmd     string
	Timeout time.Duration
	Env     []string
	Dir     string
}

// HookRequest is the JSON object a hook reads on stdin.
type HookRequest struct {
	SessionID string          `json:"session_id"`
	Turn      int             `json:"turn"`
	Tool      string          `json:"tool"`
	CallID    string          `json:"call_id"`
	Input     json.RawMessage `json:"input"`
	Cwd       string          `json:"cwd"`
}

// HookDecision is what the hooks decided about a call.
type HookDecision struct {
	// Decision is "allow" or "deny".
	Decision string
	// Hook is the command of the hook that denied the call, or of the
	// last that changed its input, or of the last that allowed it.
	Hook string
	// Reason says why a call was denied.
	Reason string
	// Input is the changed input, nil when no hook changed it.
	Input json.RawMessage
}

// RunHooks runs the hooks in order on the call req: the first deny wins;
// a changed input is what the next hook sees. A hook that exits non-zero,
// prints anything but one decision, or outlives its timeout denies the
// call: hooks fail closed.
func RunHooks(ctx context.Context, hooks []Hook, req HookRequest) HookDecision {
	out := HookDecision{Decision: "allow"}
	for _, h := range hooks {
		d := h.run(ctx, req)
		if d.Decision == "deny" {
			return d
		}
		if d.Input != nil {
			req.Input, out.Input, out.Hook = d.Input, d.Input, h.Cmd
		}
	}
	if out.Hook == "" && len(hooks) > 0 {
		out.Hook = hooks[len(hooks)-1].Cmd
	}
	return out
}

// hookAnswer is what a hook prints.
type hookAnswer struct {
	Decision *string         `json:"decision"`
	Reason   string          `json:"reason"`
	Input    json.RawMessage `json:"input"`
}

func (h Hook) run(ctx context.Context, req HookRequest) HookDecision {
	deny := func(format string, args ...any) HookDecision {
		return HookDecision{Decision: "deny", Hook: h.Cmd, Reason: fmt.Sprintf(format, args...)}
	}
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	enc.SetEscapeHTML(false) // a command's > stays >
	if err := enc.Encode(req); err != nil {
		return deny("the call could not be given to the hook: %v", err)
	}
	stdout, stderr, err := h.exec(ctx, in.Bytes())
	if err != nil {
		msg := err.Error()
		if s := lastLine(stderr); s != "" {
			msg += ": " + s
		}
		return deny("the hook failed (%s)", msg)
	}
	var a hookAnswer
	dec := json.NewDecoder(bytes.NewReader(stdout))
	if err := dec.Decode(&a); err != nil {
		return deny("the hook did not print one JSON decision: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return deny("the hook printed more than one JSON decision")
	}
	switch {
	case a.Decision == nil:
		return deny(`the hook's answer has no "decision"`)
	case *a.Decision == "deny":
		reason := a.Reason
		if reason == "" {
			reason = "no reason given"
		}
		return deny("%s", reason)
	case *a.Decision == "ask":
		// Claude Code's hooks may ask the user: a run has no one to ask.
		if a.Reason != "" {
			return deny("the hook asks for a person's approval (%s), and no one can answer in this run", a.Reason)
		}
		return deny("the hook asks for a person's approval, and no one can answer in this run")
	case *a.Decision != "allow":
		return deny(`the hook's decision %q is neither "allow" nor "deny"`, *a.Decision)
	}
	if len(a.Input) > 0 && !bytes.Equal(bytes.TrimSpace(a.Input), []byte("null")) {
		if t := bytes.TrimSpace(a.Input); len(t) == 0 || t[0] != '{' {
			return deny(`the hook's "input" is not a JSON object`)
		}
		return HookDecision{Decision: "allow", Hook: h.Cmd, Input: a.Input}
	}
	return HookDecision{Decision: "allow", Hook: h.Cmd}
}

// exec runs the hook with stdin in, and returns what it printed.
func (h Hook) exec(ctx context.Context, in []byte) (stdout, stderr []byte, err error) {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultHookTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command("bash", "-c", h.Cmd)
	cmd.Dir, cmd.Env = h.Dir, h.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut limited
	out.max, errOut.max = maxHookOutput, 4<<10
	cmd.Stdout, cmd.Stderr = &out, &errOut
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		// The hook's whole process group: a hook's children must not
		// outlive its refusal.
		killGroup(cmd)
		<-done
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, errOut.Bytes(), fmt.Errorf("it took longer than %s (--tool-hook-timeout)", timeout)
		}
		return nil, errOut.Bytes(), fmt.Errorf("the run was stopped: %v", context.Cause(ctx))
	}
	killGroup(cmd) // what it left running
	if out.over {
		return nil, errOut.Bytes(), fmt.Errorf("it printed more than %d bytes", maxHookOutput)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil, errOut.Bytes(), fmt.Errorf("%s", ee.String())
	}
	return out.Bytes(), errOut.Bytes(), err
}

// limited keeps the first max bytes written to it, and whether more came.
// (Not an embedded bytes.Buffer: io.Copy would use its ReadFrom, past the
// limit.)
type limited struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); len(p) > room {
		l.over = true
		if room > 0 {
			l.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return l.buf.Write(p)
}

func (l *limited) Bytes() []byte { return l.buf.Bytes() }

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
