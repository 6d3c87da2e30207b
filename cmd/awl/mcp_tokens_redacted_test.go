package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner/mcp/oauth"
)

// TestMCPTokensRedactedFromToolOutput (issue 47): a tool that prints the
// MCP OAuth token file, with and without the sandbox, brings neither the
// tokens awl loaded from it nor those it obtained by refreshing them
// during the run into the session, the events or a request: they join
// the run's redactor as awl comes to hold them. A token file of a server
// this run does not use is redacted too.
func TestMCPTokensRedactedFromToolOutput(t *testing.T) {
	f := newOAuthFake(t)
	dir, cfg, home, sessions := f.runEnv(t)
	t.Setenv("BROWSER", "")
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o755)
	t.Chdir(work)
	tokenDir := filepath.Join(home, ".local", "state", "awl", "mcp-tokens")
	os.MkdirAll(tokenDir, 0o700)
	// The stored pair: its access token has expired, so the run refreshes
	// it, and the fake issues a new pair awl did not hold at start.
	f.mu.Lock()
	f.refresh = "rt-0-stored5ecretbeef"
	f.mu.Unlock()
	tokenFile := oauth.TokenFile(tokenDir, "web", f.srv.URL+"/mcp")
	stored := map[string]any{"server": "web", "url": f.srv.URL + "/mcp", "client_id": "client-1",
		"auth_url": f.srv.URL + "/authorize", "token_url": f.srv.URL + "/token", "auth_style": 1,
		"token": map[string]any{"access_token": "at-0-stored5ecretc0ffee", "token_type": "Bearer",
			"refresh_token": "rt-0-stored5ecretbeef", "expiry": time.Now().Add(-time.Hour).Format(time.RFC3339)}}
	b, _ := json.Marshal(stored)
	os.WriteFile(tokenFile, b, 0o600)
	other := filepath.Join(tokenDir, "other-0123456789ab.json")
	os.WriteFile(other, []byte(`{"server":"other","client_secret":"cs-other-5ecret-0451","token":{"access_token":"at-other-5ecret-0451","refresh_token":"rt-other-5ecret-0451"}}`), 0o600)

	model := providertest.New()
	t.Cleanup(model.Close)
	t.Setenv("OPENAI_BASE_URL", model.URL)
	cat := fmt.Sprintf(`{"command":"cat %s %s"}`, tokenFile, other)
	var places = map[string]string{}
	for _, sandbox := range []string{"off", "workspace-write"} {
		model.Enqueue(providertest.ToolCall("openai-chat", "call_1", "mcp__web__whoami", `{}`),
			providertest.ToolCall("openai-chat", "call_2", "bash", cat), providertest.Text("openai-chat", "done"))
		var out, errb bytes.Buffer
		code := Main(context.Background(), []string{"run", "--no-stdin", "-o", "ndjson", "--provider", "openai-chat", "--model", "m",
			"--mcp-config", cfg, "--mcp-strict", "--sandbox", sandbox, "--sandbox-best-effort", "go"}, strings.NewReader(""), &out, &errb)
		if code != 0 {
			t.Fatalf("run (sandbox %s): exit %d\n%s", sandbox, code, errb.String())
		}
		if !strings.Contains(out.String(), "[redacted:MCP_CREDENTIAL]") {
			t.Errorf("sandbox %s: the token file's contents are not in the events, redacted:\n%s", sandbox, out.String())
		}
		places["events, sandbox "+sandbox] = out.String()
		places["stderr, sandbox "+sandbox] = errb.String()
	}
	f.mu.Lock()
	refreshes := f.refreshes
	f.mu.Unlock()
	if refreshes < 2 {
		t.Fatalf("%d refreshes: the runs did not obtain new tokens", refreshes)
	}
	filepath.WalkDir(sessions, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			places[p] = string(b)
		}
		return nil
	})
	for i, r := range model.Requests() {
		places[fmt.Sprintf("model request %d", i+1)] = string(r.Body)
	}
	secrets := append(f.tokens(), "at-0-stored5ecretc0ffee", "rt-0-stored5ecretbeef", "cs-other-5ecret-0451", "at-other-5ecret-0451", "rt-other-5ecret-0451")
	for _, tok := range secrets {
		for where, text := range places {
			if strings.Contains(text, tok) {
				t.Errorf("%s holds %s", where, tok)
			}
		}
	}
}

// TestMCPConfigCredentialsRedacted: what the MCP configuration gives awl
// to reach a server (a header's value, an OAuth client secret, each from a
// variable the tools' environment may still hold) joins the redactor when
// the server starts, whether or not it starts.
func TestMCPConfigCredentialsRedacted(t *testing.T) {
	f := newOAuthFake(t)
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("HOME", filepath.Join(dir, "home"))
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("BROWSER", "")
	t.Setenv("AWL_SESSION_DIR", filepath.Join(dir, "sessions"))
	t.Setenv("MCP_CC_SECRET", "cc-secret-0123456789")
	t.Setenv("MCP_HDR", "hdr-key-9876543210")
	cfg := filepath.Join(dir, "mcp.json")
	os.WriteFile(cfg, []byte(`{"mcpServers":{"cc":{"type":"http","url":"`+f.srv.URL+`/mcp","headers":{"X-Api-Key":"${MCP_HDR}"},`+
		`"oauth":{"grant":"client_credentials","client_id":"x","client_secret":"${MCP_CC_SECRET}"}}}}`), 0o644)
	model := providertest.New()
	t.Cleanup(model.Close)
	t.Setenv("OPENAI_BASE_URL", model.URL)
	model.Enqueue(providertest.ToolCall("openai-chat", "call_1", "bash", `{"command":"echo \"$MCP_CC_SECRET $MCP_HDR\""}`),
		providertest.Text("openai-chat", "done"))
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"run", "--no-stdin", "-o", "ndjson", "--provider", "openai-chat", "--model", "m",
		"--mcp-config", cfg, "go"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	if !strings.Contains(out.String(), "[redacted:MCP_CREDENTIAL] [redacted:MCP_CREDENTIAL]") {
		t.Errorf("the tool's output is not redacted in the events:\n%s", out.String())
	}
	all := out.String() + errb.String()
	for _, r := range model.Requests() {
		all += string(r.Body)
	}
	for _, v := range []string{"cc-secret-0123456789", "hdr-key-9876543210"} {
		if strings.Contains(all, v) {
			t.Errorf("%s reached the events, stderr or a request", v)
		}
	}
}
