package runner_test

import (
	"path/filepath"
	"testing"

	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/session"
)

// TestBeforeCreate: Config.BeforeCreate is called once per new session
// and per fork, when no file of the session is in the store yet, and the
// run goes on to create it only after the call returns; a resumed session
// is never created, so it is not called.
func TestBeforeCreate(t *testing.T) {
	e := newForkEnv(t, "anthropic")
	files := func() []string {
		m, _ := filepath.Glob(filepath.Join(e.store.Dir, "*", "*"))
		m2, _ := filepath.Glob(filepath.Join(e.store.Dir, "*", ".*"))
		return append(m, m2...)
	}
	var calls int
	var seen [][]string
	hook := func() {
		calls++
		seen = append(seen, files())
	}
	turn := providertest.Stream("anthropic", providertest.Turn{Text: "ok", InputTokens: 10, OutputTokens: 2})

	e.srv.Enqueue(turn)
	cfg := e.config("first")
	cfg.BeforeCreate = hook
	src := e.run(cfg)
	if calls != 1 || len(seen[0]) != 0 {
		t.Fatalf("new session: %d calls, files at the call %v; want 1 call and no file yet", calls, seen)
	}

	ref, err := session.OpenShared(src.SessionPath)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.Enqueue(turn)
	cfg = e.config("fork")
	cfg.Fork, cfg.BeforeCreate = ref, hook
	fork := e.run(cfg)
	if calls != 2 {
		t.Fatalf("fork: %d calls in all, want 2", calls)
	}
	if len(seen[1]) != 1 || seen[1][0] != src.SessionPath {
		t.Fatalf("fork: the store held %v when BeforeCreate was called; want its source %s alone", seen[1], src.SessionPath)
	}
	if fork.SessionPath == src.SessionPath {
		t.Fatalf("fork: no new session (%s)", fork.SessionPath)
	}

	resumed, err := e.store.Open(fork.SessionPath)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.Enqueue(turn)
	cfg = e.config("resume")
	cfg.Resume, cfg.BeforeCreate = resumed, hook
	e.run(cfg)
	if calls != 2 {
		t.Fatalf("resume: BeforeCreate called (%d calls in all), though no session is created", calls)
	}
}
