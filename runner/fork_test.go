package runner_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/tool"
	"github.com/awlrun/awl/session"
)

// forkEnv is what the fork tests run in: a work directory, a store and a
// fake server speaking api.
type forkEnv struct {
	t     *testing.T
	api   string
	work  string
	store *session.Store
	srv   *providertest.Server
	prov  provider.Provider
	now   time.Time
}

func newForkEnv(t *testing.T, api string) *forkEnv {
	t.Helper()
	e := &forkEnv{t: t, api: api, work: t.TempDir(), now: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)}
	e.store = &session.Store{Dir: filepath.Join(t.TempDir(), "sessions")}
	e.srv = providertest.New()
	t.Cleanup(e.srv.Close)
	var err error
	e.prov, err = provider.New(api, provider.Options{APIKey: "k", BaseURL: e.srv.URL, MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *forkEnv) config(prompt string) runner.Config {
	env := map[string]string{"SHELL": "/bin/bash", "XDG_CONFIG_HOME": filepath.Join(e.work, "no-config")}
	now := e.now
	return runner.Config{
		Store:    e.store,
		Cwd:      e.work,
		Prompt:   prompt,
		Provider: e.prov,
		Model:    "m-1",
		Tools:    tool.Builtins(tool.Env{Dir: e.work}),
		Known:    []string{"bash", "read", "write", "edit", "ls", "glob", "grep", "view_image"},
		Events:   event.NewEmitter(nil, nil),
		Now:      func() time.Time { return now },
		Getenv:   func(k string) string { return env[k] },
	}
}

func (e *forkEnv) run(cfg runner.Config) runner.Result {
	e.t.Helper()
	return mustRun(e.t, cfg)
}

// mustRun runs cfg and fails tb if the run fails.
func mustRun(tb testing.TB, cfg runner.Config) runner.Result {
	tb.Helper()
	res := runner.Run(context.Background(), cfg)
	if res.Err != nil {
		tb.Fatalf("run %q: %v", cfg.Prompt, res.Err)
	}
	return res
}

// messagesOf returns the messages of a request body, cache markers aside.
func messagesOf(api string, body []byte) []string {
	var out []string
	for _, m := range gjson.GetBytes(body, wires[api].messages).Array() {
		out = append(out, strip(m.Raw))
	}
	return out
}

// TestForkExtendsItsSourceByteForByte: a fork's first request begins with
// exactly the messages of the source's last request and its answer, on the
// three wire APIs, so the provider's prompt cache hits across the fork;
// the source file is byte-identical after; the fork's header names its
// origin; and continuing the source afterwards is unaffected.
func TestForkExtendsItsSourceByteForByte(t *testing.T) {
	for api := range wires {
		t.Run(api, func(t *testing.T) {
			e := newForkEnv(t, api)
			e.srv.Enqueue(providertest.Stream(api, providertest.Turn{Calls: []providertest.Call{{ID: "c1", Name: "bash", Input: `{"command":"echo planned"}`}}, InputTokens: 10, OutputTokens: 5}))
			e.srv.Enqueue(providertest.Stream(api, providertest.Turn{Text: "the plan", InputTokens: 10, OutputTokens: 5}))
			src := e.run(e.config("make a plan"))
			before, err := os.ReadFile(src.SessionPath)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := session.OpenShared(src.SessionPath)
			if err != nil {
				t.Fatal(err)
			}
			leaf := ref.ActivePath()[len(ref.ActivePath())-1].ID
			e.srv.Enqueue(providertest.Stream(api, providertest.Turn{Text: "variant a", InputTokens: 10, OutputTokens: 5}))
			cfg := e.config("variant a")
			cfg.Fork = ref
			fork := e.run(cfg)
			if fork.SessionID == src.SessionID || fork.SessionPath == src.SessionPath {
				t.Fatalf("the fork reused its source: %s", fork.SessionPath)
			}
			after, err := os.ReadFile(src.SessionPath)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Fatalf("forking changed the source session file")
			}
			reqs := e.srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3", len(reqs))
			}
			last, first := messagesOf(api, reqs[1].Body), messagesOf(api, reqs[2].Body)
			if len(first) <= len(last)+1 {
				t.Fatalf("the fork's request has %d messages, the source's last %d", len(first), len(last))
			}
			for i := range last {
				if first[i] != last[i] {
					t.Fatalf("fork request message %d differs from the source's last request:\nnow %s\nwas %s", i, first[i], last[i])
				}
			}
			for _, f := range wires[api].fixed {
				if a, b := strip(gjson.GetBytes(reqs[1].Body, f).Raw), strip(gjson.GetBytes(reqs[2].Body, f).Raw); a != b {
					t.Fatalf("%s changed across the fork:\n%s\nwas\n%s", f, b, a)
				}
			}
			if !strings.Contains(first[len(last)], "the plan") {
				t.Fatalf("the message after the source's last request is not its answer: %s", first[len(last)])
			}
			fs, err := session.Load(fork.SessionPath)
			if err != nil {
				t.Fatal(err)
			}
			if fs.Header.ForkedFrom != src.SessionID || fs.Header.ForkedAt != leaf {
				t.Fatalf("fork header: forkedFrom %q forkedAt %q, want %q %q", fs.Header.ForkedFrom, fs.Header.ForkedAt, src.SessionID, leaf)
			}
			// The fork's file begins with the source's lines after the header.
			srcLines := bytes.SplitAfterN(before, []byte("\n"), 2)[1]
			forkBytes, _ := os.ReadFile(fork.SessionPath)
			if !bytes.HasPrefix(bytes.SplitAfterN(forkBytes, []byte("\n"), 2)[1], srcLines) {
				t.Fatalf("the fork does not start with its source's entries, byte for byte")
			}
			// The source continues as if there had been no fork.
			e.srv.Enqueue(providertest.Stream(api, providertest.Turn{Text: "resumed", InputTokens: 10, OutputTokens: 5}))
			cfg = e.config("go on")
			cfg.Resume = openResumed(t, src.SessionPath)
			e.run(cfg)
			again := messagesOf(api, e.srv.Requests()[3].Body)
			for i := range last {
				if again[i] != last[i] {
					t.Fatalf("resumed source request message %d differs", i)
				}
			}
			if strings.Contains(strings.Join(again, ""), "variant a") {
				t.Fatalf("the fork's prompt reached the source")
			}
		})
	}
}

// TestConcurrentForksLeaveTheSourceIntact: many forks of one session at
// once all succeed, each a session of its own, and the source stays byte
// for byte as it was; a resume of the source while a fork holds its
// shared lock is refused as busy.
func TestConcurrentForksLeaveTheSourceIntact(t *testing.T) {
	e := newForkEnv(t, "anthropic")
	e.srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{Text: "the plan", InputTokens: 10, OutputTokens: 5}))
	src := e.run(e.config("make a plan"))
	before, _ := os.ReadFile(src.SessionPath)

	const n = 8
	for range n {
		e.srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{Text: "variant", InputTokens: 10, OutputTokens: 5}))
	}
	refs := make([]*session.Session, n)
	for i := range refs {
		var err error
		if refs[i], err = session.OpenShared(src.SessionPath); err != nil {
			t.Fatalf("shared open %d: %v", i, err)
		}
	}
	// While forks hold the source, a writer cannot take it.
	if _, err := session.Open(src.SessionPath); err == nil {
		t.Fatal("a resume opened the source while forks read it")
	} else if se := (*session.Error)(nil); !asSessionError(err, &se) || se.Kind != session.KindLocked {
		t.Fatalf("resume during forks: %v, want a busy session", err)
	}
	var wg sync.WaitGroup
	paths := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := e.config(fmt.Sprintf("variant %d", i))
			cfg.Fork = refs[i]
			res := runner.Run(context.Background(), cfg)
			paths[i], errs[i] = res.SessionPath, res.Err
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("fork %d: %v", i, errs[i])
		}
		if seen[paths[i]] || paths[i] == src.SessionPath {
			t.Fatalf("fork %d reused %s", i, paths[i])
		}
		seen[paths[i]] = true
		fs, err := session.Load(paths[i])
		if err != nil {
			t.Fatal(err)
		}
		if fs.Header.ForkedFrom != src.SessionID {
			t.Fatalf("fork %d: forkedFrom %q", i, fs.Header.ForkedFrom)
		}
	}
	after, _ := os.ReadFile(src.SessionPath)
	if !bytes.Equal(before, after) {
		t.Fatal("concurrent forks changed the source")
	}
	// Every lock is released: the source can be continued now.
	s, err := session.Open(src.SessionPath)
	if err != nil {
		t.Fatalf("resume after the forks: %v", err)
	}
	s.Close()
}

// danglingSource runs a session ("make a plan", answered), then appends
// what a later run killed after the model asked for a tool leaves: its
// prompt "run it" and the call dangling_1, with no result.
func (e *forkEnv) danglingSource() runner.Result {
	e.t.Helper()
	e.srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{Text: "the plan", InputTokens: 10, OutputTokens: 5}))
	src := e.run(e.config("make a plan"))
	s, err := session.Open(src.SessionPath)
	if err != nil {
		e.t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Append(session.Entry{Type: "message", Provider: "anthropic", Model: "m-1", Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("run it")}}}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := s.Append(session.Entry{Type: "message", Message: &conv.Message{Role: conv.RoleAssistant, StopReason: conv.StopToolUse, Content: []conv.Block{{Type: conv.BlockToolUse, ID: "dangling_1", Name: "bash", Input: `{"command":"sleep 100"}`}}}}); err != nil {
		e.t.Fatal(err)
	}
	return src
}

// TestForkClosesDanglingToolCallsInTheForkOnly: a source killed between a
// tool call and its result is closed, in the fork, with an interrupted
// result, as a resume would; the source keeps its dangling call.
func TestForkClosesDanglingToolCallsInTheForkOnly(t *testing.T) {
	e := newForkEnv(t, "anthropic")
	src := e.danglingSource()
	before, _ := os.ReadFile(src.SessionPath)

	ref, err := session.OpenShared(src.SessionPath)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{Text: "variant", InputTokens: 10, OutputTokens: 5}))
	cfg := e.config("variant")
	cfg.Fork = ref
	fork := e.run(cfg)
	after, _ := os.ReadFile(src.SessionPath)
	if !bytes.Equal(before, after) {
		t.Fatal("the fork closed the source's dangling call in the source")
	}
	body := string(e.srv.Requests()[1].Body)
	if !strings.Contains(body, "dangling_1") || !strings.Contains(body, "interrupted: the run stopped") {
		t.Fatalf("the fork's request does not close the dangling call: %s", body)
	}
	forkBytes, _ := os.ReadFile(fork.SessionPath)
	if !bytes.Contains(forkBytes, []byte(`"toolUseId":"dangling_1"`)) {
		t.Fatal("the fork's file has no result for the dangling call")
	}
}

// TestSessionIDNamesTheNewSession: a chosen id names the session (file and
// header), and a second session with it is refused, nothing written.
func TestSessionIDNamesTheNewSession(t *testing.T) {
	e := newForkEnv(t, "anthropic")
	const id = "3f2c1e0a-9b8d-4c7e-a6f5-0123456789ab"
	e.srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{Text: "ok", InputTokens: 10, OutputTokens: 5}))
	cfg := e.config("hello")
	cfg.SessionID = id
	res := e.run(cfg)
	if res.SessionID != id || !strings.HasSuffix(res.SessionPath, "_"+id+".jsonl") {
		t.Fatalf("session %s at %s, want id %s", res.SessionID, res.SessionPath, id)
	}
	cfg = e.config("again")
	cfg.SessionID = id
	again := runner.Run(context.Background(), cfg)
	if se := (*session.Error)(nil); !asSessionError(again.Err, &se) || se.Kind != session.KindExists {
		t.Fatalf("second session with the id: %v, want KindExists", again.Err)
	}
	if code, _ := runner.Classify(again.Err); code != runner.ExitSession {
		t.Fatalf("exit %d, want %d", code, runner.ExitSession)
	}
	if len(e.srv.Requests()) != 1 {
		t.Fatal("a refused session id still sent a request")
	}
	infos, err := e.store.List("")
	if err != nil || len(infos) != 1 {
		t.Fatalf("%d sessions (%v), want 1", len(infos), err)
	}
}

func asSessionError(err error, target **session.Error) bool { return errors.As(err, target) }

// A fork is made like a new session: its copied history, the closed
// dangling call and its first prompt's entries are made durable by one
// fsync, which runs while the first request is sent. When the request
// arrives, that fsync has not returned, no other has run, and the fork has
// no file at its name; after the run the fork holds, in order, the copy,
// the closed call and the prompt.
func TestForkIsMadeDurableByOneFsyncWhileTheRequestIsSent(t *testing.T) {
	e := newForkEnv(t, "anthropic")
	src := e.danglingSource()
	ref, err := session.OpenShared(src.SessionPath)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	fsyncs := 0
	release := make(chan struct{})
	e.store.Fsync = func(f *os.File) error {
		mu.Lock()
		fsyncs++
		first := fsyncs == 1
		mu.Unlock()
		if first {
			select {
			case <-release:
			case <-time.After(5 * time.Second): // the run waited for it: the test fails below
			}
		}
		return f.Sync()
	}
	var atRequest int
	var files []string
	e.srv.RespondWith(func(n int, req providertest.Request) providertest.Response {
		if n == 2 {
			mu.Lock()
			atRequest = fsyncs
			mu.Unlock()
			files, _ = filepath.Glob(filepath.Join(e.store.Dir, "*", "*.jsonl"))
			close(release)
		}
		return providertest.Stream("anthropic", providertest.Turn{Text: "variant", InputTokens: 10, OutputTokens: 5})
	})
	cfg := e.config("variant")
	cfg.Fork = ref
	fork := e.run(cfg)
	if atRequest != 1 || len(files) != 1 {
		t.Errorf("when the fork's request arrived: %d fsyncs begun, session files %v; want the fork's one fsync under way and only the source in place", atRequest, files)
	}
	b := mustRead(t, fork.SessionPath)
	closed := bytes.Index(b, []byte(`"toolUseId":"dangling_1"`))
	prompt := bytes.Index(b, []byte(`"variant"`))
	if copied := bytes.Index(b, []byte(`"make a plan"`)); copied < 0 || closed < copied || prompt < closed {
		t.Errorf("the fork's file holds the copy at %d, the closed call at %d and the prompt at %d; want them in that order:\n%s", copied, closed, prompt, b)
	}
}
