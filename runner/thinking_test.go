package runner_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/modelinfo"
	"github.com/awlrun/awl/session"
)

// thinkingRefusal is the Messages API's refusal of a token budget by a
// model that takes adaptive thinking only, as Anthropic documents it.
func thinkingRefusal(t *testing.T) []byte {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "provider", "testdata", "wire", "refusals", "anthropic-thinking-enabled.json"))
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func thinkingOf(body []byte) (typ, effort string, budget int64) {
	return gjson.GetBytes(body, "thinking.type").Str, gjson.GetBytes(body, "output_config.effort").Str, gjson.GetBytes(body, "thinking.budget_tokens").Int()
}

// TestAdaptiveFallback: a model the table does not know is sent a token
// budget; on exactly the refusal of it, the request goes once more in the
// adaptive form, a retry event says so, and the session records it so
// that a resume, and the rest of the run, send the adaptive form at once.
func TestAdaptiveFallback(t *testing.T) {
	g := newSchemaRig(t, "anthropic")
	g.srv.Enqueue(providertest.Response{Status: 400, Body: thinkingRefusal(t)})
	g.srv.Enqueue(providertest.ToolCall("anthropic", "c1", "ls", `{}`))
	g.answer("done")
	cfg := func(c *runner.Config) {
		c.Model = "claude-next-9"
		c.Reasoning = "high"
		c.Prices = modelinfo.Default()
	}
	first := g.run(cfg)
	if first.Err != nil {
		t.Fatal(first.Err)
	}
	reqs := g.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if typ, _, budget := thinkingOf(reqs[0].Body); typ != "enabled" || budget != 24576 {
		t.Fatalf("first request: thinking %s budget %d, want the budget form", typ, budget)
	}
	for i, r := range reqs[1:] {
		if typ, effort, budget := thinkingOf(r.Body); typ != "adaptive" || effort != "high" || budget != 0 {
			t.Fatalf("request %d: thinking %s effort %q budget %d, want adaptive with effort high", i+2, typ, effort, budget)
		}
	}
	// Apart from the thinking, the request sent again is the one refused.
	strip := func(b []byte) string {
		s := string(b)
		for _, p := range []string{"thinking", "output_config", "max_tokens"} {
			var err error
			if s, err = sjson.Delete(s, p); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	if strip(reqs[0].Body) != strip(reqs[1].Body) {
		t.Fatalf("the adaptive request differs beyond its thinking:\n%s\n%s", reqs[0].Body, reqs[1].Body)
	}
	ev := g.events.String()
	if n := strings.Count(ev, `"type":"retry"`); n != 1 || !strings.Contains(ev, `"status":400`) || !strings.Contains(ev, "adaptive thinking") {
		t.Fatalf("want one retry event naming adaptive thinking, got %d in:\n%s", n, ev)
	}
	s, err := session.Load(first.SessionPath)
	if err != nil {
		t.Fatal(err)
	}
	var recorded []string
	for _, e := range s.ActivePath() {
		if e.Type == runner.TypeThinkingForm {
			recorded = append(recorded, string(e.Fields))
		}
	}
	if len(recorded) != 1 || !strings.Contains(recorded[0], `"form":"adaptive"`) || !strings.Contains(recorded[0], `"model":"claude-next-9"`) {
		t.Fatalf("thinkingForm entries %v", recorded)
	}

	// A resume pays no refusal: its first request is adaptive.
	g.answer("again")
	second := g.run(func(c *runner.Config) { cfg(c); c.Resume = openResumed(t, first.SessionPath); c.Prompt = "more" })
	if second.Err != nil {
		t.Fatal(second.Err)
	}
	reqs = g.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests after the resume, want 4", len(reqs))
	}
	if typ, effort, _ := thinkingOf(reqs[3].Body); typ != "adaptive" || effort != "high" {
		t.Fatalf("resumed request: thinking %s effort %q", typ, effort)
	}
	// The first run's requests are a prefix of the resumed one's.
	prev := gjson.GetBytes(reqs[2].Body, "messages").Array()
	next := gjson.GetBytes(reqs[3].Body, "messages").Array()
	for i := range prev[:len(prev)-1] {
		if prev[i].Raw != next[i].Raw {
			t.Fatalf("message %d changed on resume", i)
		}
	}
}

// TestAdaptiveFallbackOnlyForThatRefusal: a model the table knows keeps
// its form whatever the server says, and another 400 is no fallback.
func TestAdaptiveFallbackOnlyForThatRefusal(t *testing.T) {
	for _, tc := range []struct {
		name, model, body string
	}{
		{"known budget model", "claude-sonnet-4-5", ""},
		{"other 400", "claude-next-9", `{"type":"error","error":{"type":"invalid_request_error","message":"thinking.budget_tokens: must be at least 1024"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newSchemaRig(t, "anthropic")
			body := []byte(tc.body)
			if tc.body == "" {
				body = thinkingRefusal(t)
			}
			g.srv.Enqueue(providertest.Response{Status: 400, Body: body})
			res := g.run(func(c *runner.Config) { c.Model = tc.model; c.Reasoning = "low"; c.Prices = modelinfo.Default() })
			if code, _ := runner.Classify(res.Err); code != runner.ExitProvider || len(g.srv.Requests()) != 1 {
				t.Fatalf("exit %d after %d requests (%v)", code, len(g.srv.Requests()), res.Err)
			}
		})
	}
}

// TestTableThinkingForms: the table's form is sent from the first
// request, and the refusal does not turn a native output schema off.
func TestTableThinkingForms(t *testing.T) {
	for model, want := range map[string]string{"claude-opus-4-7": "adaptive", "claude-sonnet-4-5-20250929": "enabled", "claude-3-5-haiku-latest": ""} {
		g := newSchemaRig(t, "anthropic")
		g.answer(`{"verdict":"approve","reasons":[]}`)
		res := g.run(func(c *runner.Config) {
			c.Model, c.Reasoning, c.Prices = model, "medium", modelinfo.Default()
			c.OutputSchema = mustSchema(t, verdictSchema)
		})
		if res.Err != nil {
			t.Fatal(model, res.Err)
		}
		body := g.srv.Requests()[0].Body
		if typ, _, _ := thinkingOf(body); typ != want {
			t.Errorf("%s: thinking %q, want %q", model, typ, want)
		}
		if !gjson.GetBytes(body, "output_config.format").Exists() {
			t.Errorf("%s: no native schema", model)
		}
	}
	// An unknown model refused with a schema in force: adaptive, schema kept.
	g := newSchemaRig(t, "anthropic")
	g.srv.Enqueue(providertest.Response{Status: 400, Body: thinkingRefusal(t)})
	g.answer(`{"verdict":"approve","reasons":[]}`)
	res := g.run(func(c *runner.Config) {
		c.Model, c.Reasoning, c.Prices = "claude-next-9", "low", modelinfo.Default()
		c.OutputSchema = mustSchema(t, verdictSchema)
	})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	body := g.srv.Requests()[1].Body
	if typ, effort, _ := thinkingOf(body); typ != "adaptive" || effort != "low" || !gjson.GetBytes(body, "output_config.format").Exists() {
		t.Fatalf("after the refusal: %s", body)
	}
}
