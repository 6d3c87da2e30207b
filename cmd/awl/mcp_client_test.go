package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/awlrun/awl/provider/providertest"
)

// runWithHTTPServer runs `awl run` in-process with an mcp-config naming an
// HTTP MCP server built by mk, and a fake model answering with answers. It
// returns the exit code, stdout and stderr.
func runWithHTTPServer(t *testing.T, srv *sdk.Server, answers []providertest.Response, extra ...string) (int, string, string) {
	t.Helper()
	h := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(h.Close)
	model := providertest.New()
	t.Cleanup(model.Close)
	model.Enqueue(answers...)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"web":{"type":"http","url":"`+h.URL+`"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWL_SESSION_DIR", filepath.Join(dir, "sessions"))
	t.Setenv("HOME", filepath.Join(dir, "home"))
	t.Setenv("OPENAI_BASE_URL", model.URL)
	// -C would change the test process's directory for good: t.Chdir
	// restores it.
	t.Chdir(dir)
	args := append([]string{"run", "--no-stdin", "--provider", "openai-chat", "--model", "m", "--mcp-config", cfg, "--mcp-strict"}, extra...)
	args = append(args, "go")
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// The client version sent in initialize is the one `awl --version` shows:
// "dev" in a plain build, never empty.
func TestMCPClientVersionIsAwlVersion(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "s", Version: "1"}, nil)
	var mu sync.Mutex
	var got *sdk.Implementation
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if p, ok := req.GetParams().(*sdk.InitializeParams); ok && method == "initialize" {
				mu.Lock()
				got = p.ClientInfo
				mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	code, _, stderr := runWithHTTPServer(t, srv, []providertest.Response{providertest.Text("openai-chat", "ok")})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var v bytes.Buffer
	Main(context.Background(), []string{"--version"}, strings.NewReader(""), &v, &v)
	want := strings.Fields(v.String())[1]
	mu.Lock()
	defer mu.Unlock()
	if got == nil || got.Name != "awl" || got.Version != want || want == "" {
		t.Fatalf("clientInfo %+v, want awl %q (awl --version: %q)", got, want, v.String())
	}
}

// A server's elicitation during a call is answered at once and reported as
// an mcp_elicitation event that the events schema accepts.
func TestMCPElicitationEvent(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "s", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Proceed?", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean", "default": true}}, "required": []string{"ok"},
		}})
		if err != nil {
			return nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "answered " + res.Action}}}, nil
	})
	code, stdout, stderr := runWithHTTPServer(t, srv, []providertest.Response{
		providertest.ToolCall("openai-chat", "call_1", "mcp__web__ask", `{}`),
		providertest.Text("openai-chat", "done"),
	}, "--output", "ndjson")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var ev string
	for _, line := range strings.Split(stdout, "\n") {
		if strings.Contains(line, `"type":"mcp_elicitation"`) {
			ev = line
		}
	}
	for _, want := range []string{`"server":"web"`, `"name":"mcp__web__ask"`, `"call_id":"call_1"`, `"message":"Proceed?"`, `"action":"accept"`, `"fields":["ok"]`} {
		if !strings.Contains(ev, want) {
			t.Fatalf("event %q lacks %s\n%s", ev, want, stdout)
		}
	}
	if err := validateEvents(stdout); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, `answered accept\n[the MCP server asked for input`) {
		t.Errorf("the tool result lacks the note:\n%s", stdout)
	}
}
