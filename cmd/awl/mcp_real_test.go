package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/provider/providertest"
)

// npmServer is the path of an MCP server installed from npm into
// runner/mcp/testdata/npm. Without it (or node, or with MCP_NPM_OFFLINE=1)
// the test skips, and in CI fails.
func npmServer(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "runner", "mcp", "testdata", "npm", "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if why := testenv.NPMServerMissing(p); why != "" {
		testenv.Require(t, why)
	}
	return p
}

// mcpGoServer builds runner/mcp/testdata/mcpgo, a server written with
// github.com/mark3labs/mcp-go: a module of its own, which awl never links.
func mcpGoServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpgo")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join("..", "..", "runner", "mcp", "testdata", "mcpgo")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the mcp-go server: %v\n%s", err, out)
	}
	return bin
}

// jsonStrings are the strings anywhere in a JSON document.
func jsonStrings(v any, out *[]string) {
	switch v := v.(type) {
	case string:
		*out = append(*out, v)
	case []any:
		for _, e := range v {
			jsonStrings(e, out)
		}
	case map[string]any:
		for _, e := range v {
			jsonStrings(e, out)
		}
	}
}

// holds says whether some string of the JSON document b contains each of
// wants.
func holds(t *testing.T, b []byte, wants ...string) bool {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	var ss []string
	jsonStrings(v, &ss)
	for _, s := range ss {
		all := true
		for _, w := range wants {
			all = all && strings.Contains(s, w)
		}
		if all {
			return true
		}
	}
	return false
}

// Three real servers, none of them written for awl's tests, list and call
// their tools in `awl run` on each of the three APIs: server-memory and
// server-sequential-thinking (npm, TypeScript SDK) and a server written
// with mark3labs/mcp-go. The scripted model calls a tool of each, then
// reads back what server-memory stored; each result reaches the next
// request and the session, and the memory server really kept the entity.
func TestRealServersOnEveryAPI(t *testing.T) {
	memory := npmServer(t, "mcp-server-memory")
	thinking := npmServer(t, "mcp-server-sequential-thinking")
	gotools := mcpGoServer(t)
	model := providertest.New()
	t.Cleanup(model.Close)
	t.Setenv("ANTHROPIC_BASE_URL", model.URL)
	t.Setenv("OPENAI_BASE_URL", model.URL+"/v1")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
	t.Setenv("OPENAI_API_KEY", "sk-test")
	for _, api := range []struct{ provider, wire string }{
		{"anthropic", "anthropic"},
		{"openai", "openai"}, // Responses
		{"openai-chat", "openai-chat"},
	} {
		t.Run(api.provider, func(t *testing.T) {
			dir := t.TempDir()
			memFile := filepath.Join(dir, "memory.jsonl")
			cfg := map[string]any{"mcpServers": map[string]any{
				"memory":   map[string]any{"command": memory, "env": map[string]string{"MEMORY_FILE_PATH": memFile}},
				"thinking": map[string]any{"command": thinking, "env": map[string]string{"DISABLE_THOUGHT_LOGGING": "true"}},
				"gotools":  map[string]any{"command": gotools},
			}}
			b, _ := json.Marshal(cfg)
			cfgPath := filepath.Join(dir, "mcp.json")
			if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("AWL_SESSION_DIR", filepath.Join(dir, "sessions"))
			t.Setenv("HOME", filepath.Join(dir, "home"))
			t.Chdir(dir)
			before := len(model.Requests())
			model.Enqueue(
				providertest.Stream(api.wire, providertest.Turn{Calls: []providertest.Call{
					{ID: "call_mem", Name: "mcp__memory__create_entities", Input: `{"entities":[{"name":"awl","entityType":"tool","observations":["runs agents in CI"]}]}`},
					{ID: "call_think", Name: "mcp__thinking__sequentialthinking", Input: `{"thought":"first step","nextThoughtNeeded":false,"thoughtNumber":1,"totalThoughts":1}`},
					{ID: "call_add", Name: "mcp__gotools__add", Input: `{"a":2,"b":40}`},
					{ID: "call_shout", Name: "mcp__gotools__shout", Input: `{"words":["hi","there"]}`},
				}}),
				providertest.ToolCall(api.wire, "call_open", "mcp__memory__open_nodes", `{"names":["awl"]}`),
				providertest.Text(api.wire, "done"),
			)
			// The servers' stderr lines are written by their copying
			// goroutines, awl's own by the run: a file takes both, a
			// bytes.Buffer would race.
			var stdout, stderr testenv.Buffer
			code := Main(context.Background(), []string{"run", "--no-stdin", "--provider", api.provider, "--model", "m",
				"--mcp-config", cfgPath, "--mcp-strict", "-o", "ndjson", "go"}, strings.NewReader(""), &stdout, &stderr)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr.String())
			}
			if err := validateEvents(stdout.String()); err != nil {
				t.Fatal(err)
			}
			reqs := model.Requests()[before:]
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3\n%s", len(reqs), stderr.String())
			}
			// The first request offers the tools of all three servers.
			for _, name := range []string{"mcp__memory__create_entities", "mcp__memory__open_nodes", "mcp__thinking__sequentialthinking", "mcp__gotools__add", "mcp__gotools__shout"} {
				if !holds(t, reqs[0].Body, name) {
					t.Errorf("request 1 does not offer %s", name)
				}
			}
			// Each result is in the next request, and only there.
			results := map[int][]string{
				1: {`"entityType": "tool"`, `"thoughtHistoryLength": 1`, "sum=42", "HI THERE!"},
				2: {`"relations": []`},
			}
			for i, wants := range results {
				for _, w := range wants {
					if !holds(t, reqs[i].Body, w) {
						t.Errorf("request %d lacks the result %q:\n%s", i+1, w, reqs[i].Body)
					}
					if holds(t, reqs[i-1].Body, w) {
						t.Errorf("request %d already holds %q", i, w)
					}
				}
			}
			if !holds(t, reqs[2].Body, `"relations": []`, "runs agents in CI") {
				t.Errorf("request 3 lacks what open_nodes read back")
			}
			// server-memory kept the entity in its file.
			if mem, err := os.ReadFile(memFile); err != nil || !strings.Contains(string(mem), `"runs agents in CI"`) {
				t.Errorf("memory file: %q %v", mem, err)
			}
			// The session holds every result.
			var path string
			for _, line := range strings.Split(stdout.String(), "\n") {
				var ev struct{ Type, Path string }
				if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "session" {
					path = ev.Path
				}
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatalf("session %q: %v", path, err)
			}
			defer f.Close()
			var got []string
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 1<<24)
			for sc.Scan() {
				var e struct {
					Message struct {
						Content []struct{ Type, ToolCallID, Content string }
					}
				}
				json.Unmarshal(sc.Bytes(), &e)
				for _, c := range e.Message.Content {
					if c.Type == "toolResult" {
						got = append(got, c.Content)
					}
				}
			}
			all := strings.Join(got, "\n")
			for _, w := range []string{`"entityType": "tool"`, `"thoughtHistoryLength": 1`, "sum=42", "HI THERE!", "runs agents in CI"} {
				if !strings.Contains(all, w) {
					t.Errorf("the session's tool results lack %q:\n%s", w, all)
				}
			}
			if len(got) != 5 {
				t.Errorf("%d tool results in the session, want 5", len(got))
			}
		})
	}
}
