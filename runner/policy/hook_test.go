package policy

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHooks: each way a hook can answer, and fail: a hook fails closed.
func TestHooks(t *testing.T) {
	dir := t.TempDir()
	req := HookRequest{SessionID: "s", Turn: 2, Tool: "bash", CallID: "c1", Input: json.RawMessage(`{"command":"ls"}`), Cwd: dir}
	for _, c := range []struct {
		name, cmd, decision, reason, input string
	}{
		{"allow", `echo '{"decision":"allow"}'`, "allow", "", ""},
		{"allow, extra keys", `echo '{"decision":"allow","note":1}'`, "allow", "", ""},
		{"deny", `echo '{"decision":"deny","reason":"no ls on Mondays"}'`, "deny", "no ls on Mondays", ""},
		{"deny without reason", `echo '{"decision":"deny"}'`, "deny", "no reason given", ""},
		{"changed input", `echo '{"decision":"allow","input":{"command":"ls -la"}}'`, "allow", "", `{"command":"ls -la"}`},
		{"reads the call", `jq -c '{decision:"allow",input:{command:(.input.command+" #"+.tool+" "+.call_id+" "+(.turn|tostring)+" "+.session_id)}}'`, "allow", "", `{"command":"ls #bash c1 2 s"}`},
		{"runs in the run's directory", `test "$PWD" = "$(jq -r .cwd)" && echo '{"decision":"allow"}'`, "allow", "", ""},
		{"input not an object", `echo '{"decision":"allow","input":"rm -rf /"}'`, "deny", `"input" is not a JSON object`, ""},
		{"exits non-zero", `echo '{"decision":"allow"}'; echo boom >&2; exit 3`, "deny", "exit status 3: boom", ""},
		{"crashes", `kill -SEGV $$`, "deny", "signal: segmentation fault", ""},
		{"killed", `kill -KILL $$`, "deny", "signal: killed", ""},
		{"garbage", `echo 'sure, go ahead'`, "deny", "did not print one JSON decision", ""},
		{"two decisions", `echo '{"decision":"allow"}{"decision":"deny"}'`, "deny", "more than one JSON decision", ""},
		{"nothing", `true`, "deny", "did not print one JSON decision", ""},
		{"no decision", `echo '{"reason":"x"}'`, "deny", `no "decision"`, ""},
		{"unknown decision", `echo '{"decision":"maybe"}'`, "deny", `"maybe" is neither`, ""},
		{"ask: no one to ask", `echo '{"decision":"ask"}'`, "deny", "asks for a person's approval, and no one can answer in this run", ""},
		{"ask with a reason", `echo '{"decision":"ask","reason":"touches prod"}'`, "deny", "approval (touches prod), and no one", ""},
		{"huge output", `head -c 2000000 /dev/zero | tr '\0' ' '; echo '{"decision":"allow"}'`, "deny", "more than 1048576 bytes", ""},
		{"hangs", `sleep 30`, "deny", "longer than 300ms", ""},
		{"hangs with a child holding stdout", `(sleep 30 &) ; sleep 30`, "deny", "longer than 300ms", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Only the hanging hooks meet the timeout: the others get
			// one a loaded machine never reaches (jq took over 300 ms to
			// start at load 25).
			timeout := 60 * time.Second
			if strings.HasPrefix(c.name, "hangs") {
				timeout = 300 * time.Millisecond
			}
			start := time.Now()
			d := RunHooks(context.Background(), []Hook{{Cmd: c.cmd, Timeout: timeout, Dir: dir, Env: []string{"PATH=" + os.Getenv("PATH")}}}, req)
			if d.Decision != c.decision || !strings.Contains(d.Reason, c.reason) || string(d.Input) != c.input {
				t.Errorf("got %+v (input %s), want %s %q %s", d, d.Input, c.decision, c.reason, c.input)
			}
			if d.Decision == "deny" && d.Hook != c.cmd {
				t.Errorf("the denial names hook %q", d.Hook)
			}
			if el := time.Since(start); timeout < time.Second && el > 5*time.Second {
				t.Errorf("took %v", el)
			}
		})
	}
}

// TestHooksInOrder: hooks run in order, each sees the input the one
// before left, and the first deny wins (the later hooks do not run).
func TestHooksInOrder(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	env := []string{"PATH=" + os.Getenv("PATH")}
	req := HookRequest{Tool: "bash", CallID: "c", Input: json.RawMessage(`{"command":"a"}`), Cwd: dir}
	add := `jq -c '{decision:"allow",input:{command:(.input.command+"b")}}'`
	d := RunHooks(context.Background(), []Hook{{Cmd: add, Dir: dir, Env: env}, {Cmd: add, Dir: dir, Env: env}}, req)
	if d.Decision != "allow" || string(d.Input) != `{"command":"abb"}` {
		t.Errorf("chained: %+v %s", d, d.Input)
	}
	d = RunHooks(context.Background(), []Hook{
		{Cmd: `echo '{"decision":"deny","reason":"first"}'`, Dir: dir, Env: env},
		{Cmd: "touch " + mark + `; echo '{"decision":"allow"}'`, Dir: dir, Env: env},
	}, req)
	if d.Decision != "deny" || d.Reason != "first" {
		t.Errorf("first deny: %+v", d)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("a hook after a deny ran")
	}
	// A hook gets the environment it is given, nothing of awl's.
	t.Setenv("AWL_TEST_SECRET", "s3cret")
	d = RunHooks(context.Background(), []Hook{{Cmd: `test -z "$AWL_TEST_SECRET" && echo '{"decision":"allow"}'`, Dir: dir, Env: env}}, req)
	if d.Decision != "allow" {
		t.Errorf("the hook saw awl's environment: %+v", d)
	}
}
