package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/event"
)

// firstFsyncHeld makes the store's first fsync (the new session's) wait
// until release is closed, at most 5 s, then do err or the real fsync.
func firstFsyncHeld(g *budgetRig, release <-chan struct{}, err error) {
	var once sync.Once
	g.store.Fsync = func(f *os.File) error {
		first := false
		once.Do(func() { first = true })
		if !first {
			return f.Sync()
		}
		select {
		case <-release:
		case <-time.After(5 * time.Second): // the run waited for it: the test fails
		}
		if err != nil {
			return err
		}
		return f.Sync()
	}
}

// A new session's first request is sent while its first entries' fsync
// runs, and nothing says they are stored before it returns: when the
// request arrives, no event is out and the session has no file at its
// name. Then the events come in their usual order.
func TestFirstRequestWhileTheSessionIsMadeDurable(t *testing.T) {
	g := newBudgetRig(t)
	release := make(chan struct{})
	firstFsyncHeld(g, release, nil)
	var out testenv.Buffer
	var seen string
	var files []string
	g.srv.RespondWith(func(n int, req providertest.Request) providertest.Response {
		if n == 1 {
			seen = out.String()
			files, _ = filepath.Glob(filepath.Join(g.store.Dir, "*", "*.jsonl"))
			close(release)
		}
		return providertest.Stream("anthropic", providertest.Turn{Model: "claude-sonnet-4-5", Text: "done", InputTokens: 10, OutputTokens: 2})
	})
	res := g.run(context.Background(), "claude-sonnet-4-5", func(c *runner.Config) { c.Events = event.NewEmitter(&out, nil) })
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if seen != "" || len(files) != 0 {
		t.Errorf("when the first request arrived, events %q and session files %v were out; want none before the fsync returned", seen, files)
	}
	var types []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		types = append(types, gjson.Get(l, "type").Str)
	}
	if got := strings.Join(types, " "); !strings.HasPrefix(got, "session entry entry entry entry") || !strings.HasSuffix(got, "entry entry result") {
		t.Errorf("events %q, want the session event, the first entries, the answer, the run entry and the result", got)
	}
	file := string(mustRead(t, res.SessionPath))
	if !strings.Contains(file, `"done"`) || !strings.Contains(file, `"type":"run"`) {
		t.Errorf("session file lacks the answer or the run entry:\n%s", file)
	}
}

// When the new session's fsync fails, the session never existed: no
// event said it did, the result names none, the run fails with the
// creation's error, and no file is left, whatever the request sent
// meanwhile answered.
func TestFirstRequestSessionFsyncFails(t *testing.T) {
	g := newBudgetRig(t)
	release := make(chan struct{})
	close(release)
	firstFsyncHeld(g, release, errors.New("disk on fire"))
	g.toolTurns(0, "claude-sonnet-4-5")
	res := g.run(context.Background(), "claude-sonnet-4-5", nil)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "create session") || !strings.Contains(res.Err.Error(), "disk on fire") {
		t.Fatalf("err %v, want the creation's failure", res.Err)
	}
	if got := strings.Join(g.eventTypes(), " "); got != "result" {
		t.Errorf("events %q, want only the result", got)
	}
	if res.SessionID != "" || res.SessionPath != "" || g.result().Get("session_id").Str != "" || g.result().Get("session_path").Exists() {
		t.Errorf("result names session %q at %q (%s) that was never made", res.SessionID, res.SessionPath, g.result().Raw)
	}
	if code, _ := runner.Classify(res.Err); code != runner.ExitSession {
		t.Errorf("exit code %d, want %d as for any failed creation", code, runner.ExitSession)
	}
	left, _ := filepath.Glob(filepath.Join(g.store.Dir, "*", "*"))
	left2, _ := filepath.Glob(filepath.Join(g.store.Dir, "*", ".*"))
	if len(left)+len(left2) != 0 {
		t.Errorf("files left in the store: %v %v", left, left2)
	}
}
