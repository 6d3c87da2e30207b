package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/awlrun/awl/provider/providertest"
)

// serveEnv is a directory for `awl mcp serve` and its sessions, and the
// environment it runs with against the fake model.
type serveEnv struct {
	dir, sessions string
	model         *providertest.Server
	env           []string
}

func newServeEnv(t *testing.T) *serveEnv {
	t.Helper()
	model := providertest.New()
	t.Cleanup(model.Close)
	dir := t.TempDir()
	e := &serveEnv{dir: dir, sessions: filepath.Join(dir, "sessions"), model: model}
	e.env = append(os.Environ(),
		"AWL_SESSION_DIR="+e.sessions,
		"HOME="+filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "home", ".config"),
		"OPENAI_BASE_URL="+model.URL,
		"OPENAI_API_KEY="+sentinelKey,
	)
	return e
}

// command is `awl mcp serve` with the fake model and flags.
func (e *serveEnv) command(flags ...string) *exec.Cmd {
	cmd := exec.Command("awl", append([]string{"mcp", "serve", "--provider", "openai-chat", "--model", "m"}, flags...)...)
	cmd.Dir = e.dir
	cmd.Env = e.env
	return cmd
}

// connect starts the server under go-sdk's client.
func (e *serveEnv) connect(t *testing.T, opts *sdk.ClientOptions, flags ...string) (*sdk.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := e.command(flags...)
	cmd.Stderr = testWriter{t}
	client := sdk.NewClient(&sdk.Implementation{Name: "awl-test", Version: "1"}, opts)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd, TerminateDuration: 15 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, cmd
}

// testWriter logs what it is written.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("stderr: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// structured is a call result's structured content.
func structured(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return m
}

func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "")
}

// verifySession runs `awl sessions verify` on path.
func (e *serveEnv) verifySession(t *testing.T, path string) {
	t.Helper()
	cmd := exec.Command("awl", "sessions", "verify", path)
	cmd.Env, cmd.Dir = e.env, e.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("awl sessions verify %s: %v\n%s", path, err, out)
	}
}

// entries are the session file's lines, decoded.
func entries(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
	return out
}

// lastRun is the last run entry of the session at path, nil when none.
func lastRun(t *testing.T, path string) map[string]any {
	var run map[string]any
	for _, e := range entries(t, path) {
		if e["type"] == "run" {
			run = e
		}
	}
	return run
}

// waitFor polls cond for up to d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// alive tells whether the process pid exists (and is no zombie of ours).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || !strings.Contains(string(b), ") Z ")
}

// The go-sdk client lists the tools, calls run with a progress token,
// resumes the returned session, and cancels a third call while its tool
// runs: the answers, ids and usage come back, progress arrives, and every
// session verifies, the cancelled one ended as an interrupt ends a run,
// its tool's process gone.
func TestMCPServeGoSDK(t *testing.T) {
	e := newServeEnv(t)
	var mu sync.Mutex
	var progress []string
	opts := &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, req.Params.Message)
		mu.Unlock()
	}}
	cs, _ := e.connect(t, opts, "--tools", "bash,read")
	ctx := context.Background()
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" && v != "2025-06-18" {
		t.Errorf("protocol version %q", v)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "run,resume,fork" {
		t.Fatalf("tools %v", names)
	}

	e.model.Enqueue(
		providertest.ToolCall("openai-chat", "call_1", "bash", `{"command":"echo hi"}`),
		providertest.Text("openai-chat", "One."),
	)
	params := &sdk.CallToolParams{Name: "run", Arguments: map[string]any{"prompt": "first"}}
	params.SetProgressToken("p1")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	first := structured(t, res)
	if res.IsError || resultText(res) != "One." || first["exit_code"] != 0.0 || first["reason"] != "completed" || first["turns"] != 2.0 {
		t.Fatalf("run: %s %+v", resultText(res), first)
	}
	id, _ := first["session_id"].(string)
	mu.Lock()
	got := strings.Join(progress, "\n")
	mu.Unlock()
	if !strings.Contains(got, "session "+id) || !strings.Contains(got, `bash {"command":"echo hi"}`) {
		t.Errorf("progress:\n%s", got)
	}

	e.model.Enqueue(providertest.Text("openai-chat", "Two."))
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "resume", Arguments: map[string]any{"session": id, "prompt": "second"}})
	if err != nil {
		t.Fatal(err)
	}
	second := structured(t, res)
	if res.IsError || resultText(res) != "Two." || second["session_id"] != id {
		t.Fatalf("resume: %s %+v", resultText(res), second)
	}

	// The third call runs a command that would take 30 s; it is cancelled
	// once the command has started.
	pidFile := filepath.Join(e.dir, "pid")
	e.model.Enqueue(providertest.ToolCall("openai-chat", "call_3", "bash", `{"command":"echo $$ > pid; exec sleep 30"}`))
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "resume", Arguments: map[string]any{"session": id, "prompt": "third"}})
		done <- err
	}()
	waitFor(t, 20*time.Second, "the command to start", func() bool {
		b, err := os.ReadFile(pidFile)
		return err == nil && strings.HasSuffix(string(b), "\n")
	})
	b, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled call returned %v", err)
	}
	path, _ := first["session_path"].(string)
	waitFor(t, 15*time.Second, "the cancelled run's run entry", func() bool {
		r := lastRun(t, path)
		return r != nil && r["reason"] == "interrupted"
	})
	waitFor(t, 5*time.Second, "the command to be stopped", func() bool { return !alive(pid) })
	e.verifySession(t, path)
	// Every tool call has its result; the cancelled one is an error.
	var results []string
	for _, en := range entries(t, path) {
		msg, _ := en["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, c := range content {
			if c := c.(map[string]any); c["type"] == "toolResult" {
				results = append(results, c["toolUseId"].(string)+":"+strconv.FormatBool(c["isError"] == true))
			}
		}
	}
	if strings.Join(results, " ") != "call_1:false call_3:true" {
		t.Errorf("tool results %v", results)
	}

	// The server still answers after the cancellation.
	e.model.Enqueue(providertest.Text("openai-chat", "Four."))
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "resume", Arguments: map[string]any{"session": id, "prompt": "fourth"}})
	if err != nil || resultText(res) != "Four." {
		t.Fatalf("after the cancellation: %v %+v", err, res)
	}
	e.verifySession(t, path)
}
