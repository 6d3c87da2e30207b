package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// elicitingServer has a tool "ask" that elicits input with schema and
// returns what the client answered.
func elicitingServer(t *testing.T, schema map[string]any) (Server, *sdk.InitializeParams) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"}, nil)
	var init sdk.InitializeParams
	var mu sync.Mutex
	srv.AddTool(&sdk.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		mu.Lock()
		init = *req.Session.InitializeParams()
		mu.Unlock()
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Which project?", RequestedSchema: schema})
		if err != nil {
			return nil, err
		}
		text := "action=" + res.Action
		for _, k := range []string{"name", "age", "verified"} {
			if v, ok := res.Content[k]; ok {
				text += " " + k + "=" + strings.TrimSpace(strings.ReplaceAll(sprint(v), "\n", ""))
			}
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
	})
	h := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(h.Close)
	return Server{Name: "asker", URL: h.URL}, &init
}

func sprint(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case bool:
		if v {
			return "true"
		}
		return "false"
	case float64:
		return trimFloat(v)
	}
	return "?"
}

func trimFloat(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// An elicitation whose required fields all have defaults is accepted with
// them at once; the result and the reporter say so.
func TestElicitationAcceptsDefaults(t *testing.T) {
	srv, init := elicitingServer(t, map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name":     map[string]any{"type": "string", "default": "John Doe"},
			"age":      map[string]any{"type": "integer", "default": 30},
			"verified": map[string]any{"type": "boolean", "default": true},
		},
		"required": []string{"name"},
	})
	dir := t.TempDir()
	m, stderr := start(t, []Server{srv}, Options{Dir: dir})
	var got []Elicitation
	ctx := WithCall(context.Background(), "call-1", func(e Elicitation) { got = append(got, e) })
	res := toolByName(t, m, "mcp__asker__ask").Run(ctx, []byte(`{}`))
	if res.IsError || !strings.HasPrefix(res.Content, "action=accept name=John Doe age=30 verified=true\n") || !strings.Contains(res.Content, "accepted with the schema's defaults") {
		t.Fatalf("result: %+v\n%s", res, stderr)
	}
	if len(got) != 1 || got[0].Action != "accept" || got[0].CallID != "call-1" || got[0].Tool != "mcp__asker__ask" || got[0].Message != "Which project?" || strings.Join(got[0].Fields, ",") != "age,name,verified" {
		t.Fatalf("reported: %+v", got)
	}
	caps := init.Capabilities
	if caps == nil || caps.Elicitation == nil || caps.Elicitation.Form == nil || caps.Elicitation.URL != nil {
		t.Errorf("elicitation capability: %+v", caps)
	}
	// No roots: a roots-aware server would trade its configured
	// directories for them (see capabilities).
	//lint:ignore SA1019 the roots capability is what is tested
	if caps != nil && (caps.RootsV2 != nil || caps.Roots.ListChanged) {
		t.Errorf("roots declared: %+v", caps)
	}
}

// A required field without a default is declined at once, well within the
// call timeout, never waited on.
func TestElicitationDeclinesWithoutDefault(t *testing.T) {
	srv, _ := elicitingServer(t, map[string]any{
		"type":       "object",
		"properties": map[string]any{"project": map[string]any{"type": "string"}, "name": map[string]any{"type": "string", "default": "x"}},
		"required":   []string{"project", "name"},
	})
	m, _ := start(t, []Server{srv}, Options{CallTimeout: time.Minute})
	var got []Elicitation
	ctx := WithCall(context.Background(), "c2", func(e Elicitation) { got = append(got, e) })
	res := toolByName(t, m, "mcp__asker__ask").Run(ctx, []byte(`{}`))
	if res.IsError || !strings.HasPrefix(res.Content, "action=decline\n") || !strings.Contains(res.Content, "required field(s) project have no default") {
		t.Fatalf("result: %+v", res)
	}
	if len(got) != 1 || got[0].Action != "decline" {
		t.Fatalf("reported: %+v", got)
	}
}
