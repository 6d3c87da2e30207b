package runner_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/projection"
	"github.com/awlrun/awl/session"
)

// TestLongRunForgetsWhatWasSummarised: a long compacting run lets go of
// the entries its compactions summarised, and every request it sends is
// still the projection of the session file as it stands when the request
// is sent, which holds every entry: the run's own memory of the session
// and the file agree on what the model sees. The file keeps every entry.
func TestLongRunForgetsWhatWasSummarised(t *testing.T) {
	const window, turns = 20000, 120
	g := newLongRig(t, "anthropic", turns, window)
	checked := 0
	g.srv.RespondWith(func(n int, req providertest.Request) providertest.Response {
		if !isSummaryRequest(req) {
			files, _ := filepath.Glob(filepath.Join(g.model.sessDir, "*", "*.jsonl"))
			s, err := session.Load(files[0])
			if err != nil {
				t.Errorf("request %d: %v", n, err)
			} else if want, got := project(t, "anthropic", projection.Project(s.ActivePath())), strip(gjson.GetBytes(req.Body, "messages").Raw); got != want {
				t.Errorf("request %d is not the projection of the session file:\n got %.300s…\nwant %.300s…", n, got, want)
			} else {
				checked++
			}
		}
		return g.model.respond(n, req)
	})
	sess, err := g.store.Create(g.work, "anthropic", "m-1")
	if err != nil {
		t.Fatal(err)
	}
	cfg := g.config("read big.txt again and again", runner.Window{Tokens: window})
	cfg.Resume = sess // so that the test sees what the run held at its end
	res := runner.Run(context.Background(), cfg)
	if res.Err != nil {
		t.Fatalf("run failed: %v", res.Err)
	}
	if comps := len(g.eventsOf(t, "compaction")); comps < 3 || checked != turns {
		t.Fatalf("%d compactions and %d requests checked; want 3 or more and %d", comps, checked, turns)
	}
	file, err := session.Load(res.SessionPath)
	if err != nil {
		t.Fatal(err)
	}
	if held, all := len(sess.Entries), len(file.Entries); held*3 > all {
		t.Errorf("the run held %d of the session's %d entries at its end; want under a third", held, all)
	}
	if first := file.Entries[0]; first.Message == nil || first.Message.Role != "system" || len(file.ActivePath()) != len(file.Entries) {
		t.Errorf("the session file does not hold the whole run from its system prompt")
	}
}
