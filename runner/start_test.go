package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/session"
)

// eventTypes is the type of each event the rig's run emitted, in order.
func (g *budgetRig) eventTypes() []string {
	var types []string
	for _, line := range strings.Split(strings.TrimSpace(g.events.String()), "\n") {
		types = append(types, gjson.Get(line, "type").Str)
	}
	return types
}

// A new session is made with the first prompt's entries in it: the
// session event comes first, then those entries' events, each the line
// the file holds after the header.
func TestNewSessionMadeWithFirstEntries(t *testing.T) {
	g := newBudgetRig(t)
	g.toolTurns(0, "claude-sonnet-4-5")
	res := g.run(context.Background(), "claude-sonnet-4-5", nil)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	lines := strings.Split(strings.TrimSpace(g.events.String()), "\n")
	if gjson.Get(lines[0], "type").Str != "session" || gjson.Get(lines[0], "path").Str != res.SessionPath {
		t.Fatalf("first event %s, want the session event for %s", lines[0], res.SessionPath)
	}
	file := strings.Split(strings.TrimSpace(string(mustRead(t, res.SessionPath))), "\n")
	for i, line := range lines[1:4] {
		if gjson.Get(line, "type").Str != "entry" || gjson.Get(line, "entry").Raw != file[1+i] {
			t.Errorf("event %d %s, want the entry event of line %d, %s", 1+i, line, 1+i, file[1+i])
		}
	}
	if last := gjson.Get(file[3], "type").Str; last != "turnContext" && last != "message" {
		t.Errorf("line 3 is a %s entry", last)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A context that cannot be gathered (an AGENTS.md that is a directory)
// fails the run only once the session exists and its event is out: the
// session event, the run entry's, the result, and nothing appended but
// the run entry, nothing sent.
func TestNewSessionGatherFailureAfterSessionEvent(t *testing.T) {
	g := newBudgetRig(t)
	if err := os.Mkdir(filepath.Join(g.work, "AGENTS.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := g.run(context.Background(), "claude-sonnet-4-5", nil)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "gather context") {
		t.Fatalf("err %v, want the gather failure", res.Err)
	}
	if got := strings.Join(g.eventTypes(), " "); got != "session entry result" {
		t.Errorf("events %q, want \"session entry result\" (the run entry)", got)
	}
	first := gjson.Parse(strings.SplitN(g.events.String(), "\n", 2)[0])
	if res.SessionID == "" || first.Get("session_id").Str != res.SessionID || first.Get("path").Str != res.SessionPath {
		t.Errorf("session event %s, want the session %s at %s", first.Raw, res.SessionID, res.SessionPath)
	}
	s, err := session.Load(res.SessionPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range s.Entries {
		if e.Type != "run" {
			t.Errorf("entry of type %s appended after the gather failed", e.Type)
		}
	}
	if len(g.srv.Requests()) != 0 {
		t.Errorf("%d requests sent", len(g.srv.Requests()))
	}
}

// When the new session cannot be made, the run fails with the creation's
// error and emits no session event.
func TestNewSessionCreateFailure(t *testing.T) {
	g := newBudgetRig(t)
	if err := os.WriteFile(g.store.Dir, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := g.run(context.Background(), "claude-sonnet-4-5", nil)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "cannot create a session") {
		t.Fatalf("err %v, want the creation's", res.Err)
	}
	if got := strings.Join(g.eventTypes(), " "); got != "result" {
		t.Errorf("events %q, want only the result", got)
	}
	if res.SessionID != "" {
		t.Errorf("session id %q for a session never made", res.SessionID)
	}
}

// warmProbe is the rig's provider, noting what the session store held
// when the runner asked it to warm its connection.
type warmProbe struct {
	provider.Provider
	dir   string
	calls int
	files []string // in the store when Warm was called
}

func (w *warmProbe) Warm() {
	w.calls++
	w.files, _ = filepath.Glob(filepath.Join(w.dir, "*", "*"))
}

// A new run asks the provider to open its connection before it creates the
// session, so the connect runs while the session's fsyncs wait; once.
func TestWarmBeforeTheSessionIsMade(t *testing.T) {
	g := newBudgetRig(t)
	g.toolTurns(1, "claude-sonnet-4-5")
	probe := &warmProbe{Provider: g.prov, dir: g.store.Dir}
	res := g.run(context.Background(), "claude-sonnet-4-5", func(c *runner.Config) { c.Provider = probe })
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if probe.calls != 1 || len(probe.files) != 0 {
		t.Errorf("Warm called %d times, with %v in the store; want once, before any session file", probe.calls, probe.files)
	}
	// A run that has no prompt sends nothing, and warms nothing.
	probe.calls = 0
	g.path = ""
	g.run(context.Background(), "claude-sonnet-4-5", func(c *runner.Config) { c.Provider, c.Prompt = probe, " " })
	if probe.calls != 0 {
		t.Errorf("Warm called %d times for a run with no prompt", probe.calls)
	}
}
