package runner_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/redact"
	"github.com/awlrun/awl/runner/tool"
)

// schemaTool is an MCP-like tool with a server's schema, counting calls.
type schemaTool struct {
	name, schema string
	calls        atomic.Int32
}

func (s *schemaTool) Name() string            { return s.name }
func (s *schemaTool) Description() string     { return "A server's tool." }
func (s *schemaTool) Schema() json.RawMessage { return json.RawMessage(s.schema) }
func (s *schemaTool) ReadOnly() bool          { return false }
func (s *schemaTool) Run(_ context.Context, in json.RawMessage) tool.Result {
	s.calls.Add(1)
	return tool.Result{Content: "picked " + string(in)}
}

// TestToolSchemasLowered: on every API, a tool with a root union is
// offered as an object with the union's properties; arguments that the
// server's own schema refuses come back to the model as a tool error and
// the tool is not called; arguments it takes are run. A tool whose schema
// no object can match is not offered, with a notice.
func TestToolSchemasLowered(t *testing.T) {
	for _, api := range []string{"anthropic", "openai", "openai-chat"} {
		t.Run(api, func(t *testing.T) {
			g := newLongRig(t, api, 1, 1<<30)
			pick := &schemaTool{name: "pick", schema: `{"oneOf":[{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"],"additionalProperties":false},{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}]}`}
			bad := &schemaTool{name: "word", schema: `{"type":"string"}`}
			g.srv.RespondWith(nil)
			g.srv.Enqueue(providertest.Stream(api, providertest.Turn{Calls: []providertest.Call{
				{ID: "c1", Name: "pick", Input: `{"id":1,"name":"x"}`}, // both: oneOf refuses it
				{ID: "c2", Name: "pick", Input: `{"id":"one"}`},
				{ID: "c3", Name: "pick", Input: `{"name":"x"}`},
			}}))
			g.srv.Enqueue(providertest.Text(api, "done"))
			cfg := g.config("pick", runner.Window{})
			cfg.Tools = []tool.Tool{pick, bad}
			res := runner.Run(context.Background(), cfg)
			if res.Err != nil {
				t.Fatalf("run failed: %v", res.Err)
			}
			reqs := g.srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			tools := gjson.GetBytes(reqs[0].Body, "tools").Array()
			if len(tools) != 1 {
				t.Fatalf("%d tools offered, want only pick: %s", len(tools), gjson.GetBytes(reqs[0].Body, "tools").Raw)
			}
			sch := tools[0].Get("input_schema")
			if !sch.Exists() {
				sch = tools[0].Get("parameters")
				if !sch.Exists() {
					sch = tools[0].Get("function.parameters")
				}
			}
			if sch.Get("type").String() != "object" || sch.Get("oneOf").Exists() || !sch.Get("properties.id").Exists() || !sch.Get("properties.name").Exists() ||
				!strings.Contains(sch.Get("description").String(), "exactly one of these schemas") {
				t.Errorf("pick's schema as sent: %s", sch.Raw)
			}
			if n := pick.calls.Load(); n != 1 {
				t.Errorf("pick ran %d times, want once (c3)", n)
			}
			results := gjson.GetBytes(reqs[1].Body, wires[api].messages).Raw
			for _, want := range []string{"the arguments do not match the input schema of pick; it was not called", "picked {\"name\":\"x\"}"} {
				if !strings.Contains(results, strings.ReplaceAll(want, `"`, `\"`)) {
					t.Errorf("the results sent back do not say %q: %.600s", want, results)
				}
			}
			notes := g.eventsOf(t, "notice")
			if len(notes) != 1 || !strings.Contains(notes[0]["message"].(string), `tool word is not offered: the input schema's root is of type "string", not an object`) {
				t.Errorf("notices %v", notes)
			}
			if s := g.eventsOf(t, "session"); len(s) != 1 || len(s[0]["tools"].([]any)) != 1 {
				t.Errorf("session event tools: %v", s)
			}
		})
	}
}

// describedTool is an MCP-like tool whose server put a value of its
// configuration in its description and its schema.
type describedTool struct{ desc, schema string }

func (d describedTool) Name() string            { return "query" }
func (d describedTool) Description() string     { return d.desc }
func (d describedTool) Schema() json.RawMessage { return json.RawMessage(d.schema) }
func (d describedTool) ReadOnly() bool          { return true }
func (d describedTool) Run(context.Context, json.RawMessage) tool.Result {
	return tool.Result{Content: "ok"}
}

// TestToolSpecsRedacted: a server that puts a secret its configuration
// gave it into a tool's description (a database URL with its password)
// or schema (escaped, as a JSON encoder may write it) does not bring it
// to the model: on every API, the request carries the redaction.
func TestToolSpecsRedacted(t *testing.T) {
	const secret = "postgres://app:pa55-w0rd@db.internal/app"
	for _, api := range []string{"anthropic", "openai", "openai-chat"} {
		t.Run(api, func(t *testing.T) {
			g := newLongRig(t, api, 1, 1<<30)
			g.srv.RespondWith(nil)
			g.srv.Enqueue(providertest.Text(api, "done"))
			cfg := g.config("hello", runner.Window{})
			cfg.Tools = []tool.Tool{describedTool{
				desc:   "Runs SQL against " + secret + ".",
				schema: `{"type":"object","properties":{"sql":{"type":"string","description":"SQL for \u0070ostgres://app:pa55-w0rd@db.internal/app"}}}`,
			}}
			cfg.Redact = redact.New([]redact.Secret{{Name: "DB_URL", Value: secret}})
			if res := runner.Run(context.Background(), cfg); res.Err != nil {
				t.Fatalf("run failed: %v", res.Err)
			}
			body := string(g.srv.Requests()[0].Body)
			if strings.Contains(body, "pa55-w0rd") || strings.Count(body, "[redacted:DB_URL]") != 2 {
				t.Errorf("the tool's description and schema as sent:\n%s", body)
			}
		})
	}
}
