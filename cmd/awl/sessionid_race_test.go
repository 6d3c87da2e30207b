package main

import (
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/session"
)

// TestSessionIDRace: twenty awl processes given one --session-id, started
// together, each waiting for its prompt on stdin (read after the early
// existence check), then given it at once. Exactly one exits 0; every
// other one exits 3 with nothing written and no request made; the store
// holds one session file, a valid session. (session's
// TestCreateWithIDConcurrently makes all twenty reach the creation
// together; this is the same contract through the CLI.)
func TestSessionIDRace(t *testing.T) {
	tmp, awl := linkedAwl(t)
	srv := providertest.New()
	defer srv.Close()
	const n = 20
	for range n {
		srv.Enqueue(providertest.Text("anthropic", "done"))
	}
	sessions := filepath.Join(tmp, "sessions")
	env := awlEnv(tmp, srv.URL, sessions)
	const id = "5b1d3c9e-7a2f-4e6b-9c8d-0123456789ab"
	cmds := make([]*exec.Cmd, n)
	stdins := make([]io.WriteCloser, n)
	outs := make([]*strings.Builder, n)
	for i := range n {
		cmd := exec.Command(awl, "run", "--stdin", "-o", "json", "--session-id", id)
		cmd.Dir, cmd.Env = tmp, env
		outs[i] = &strings.Builder{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		w, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i], stdins[i] = cmd, w
	}
	for _, w := range stdins {
		io.WriteString(w, "go")
	}
	for _, w := range stdins {
		w.Close()
	}
	won := 0
	for i, cmd := range cmds {
		err := cmd.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
			won++
		case errors.As(err, &ee) && ee.ExitCode() == 3:
			if !strings.Contains(outs[i].String(), "session "+id+" already exists") {
				t.Errorf("process %d: exit 3 without naming the taken id:\n%s", i, outs[i])
			}
		default:
			t.Errorf("process %d: %v, want exit 0 or 3:\n%s", i, err, outs[i])
		}
	}
	if won != 1 {
		t.Fatalf("%d processes exited 0, want 1", won)
	}
	if got := len(srv.Requests()); got != 1 {
		t.Errorf("%d requests made, want 1", got)
	}
	paths, _ := filepath.Glob(filepath.Join(sessions, "*", "*"))
	if len(paths) != 1 || session.SessionIDFromPath(paths[0]) != id {
		t.Fatalf("session files %q, want one named by the id", paths)
	}
	s, err := session.Load(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if s.Header.ID != id || len(s.Entries) == 0 {
		t.Errorf("the session: id %s, %d entries", s.Header.ID, len(s.Entries))
	}
}
