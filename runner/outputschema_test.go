package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/tool"
	"github.com/awlrun/awl/session"
)

const verdictSchema = `{
  "type": "object",
  "properties": {
    "verdict": {"enum": ["approve", "reject"]},
    "reasons": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["verdict", "reasons"],
  "additionalProperties": false
}`

// nativeParam is where each wire API carries the schema natively.
var nativeParam = map[string]string{
	"anthropic":   "output_config.format.schema",
	"openai":      "text.format.schema",
	"openai-chat": "response_format.json_schema.schema",
}

type schemaRig struct {
	t      *testing.T
	api    string
	srv    *providertest.Server
	prov   provider.Provider
	store  *session.Store
	work   string
	events bytes.Buffer
}

func newSchemaRig(t *testing.T, api string) *schemaRig {
	t.Helper()
	srv := providertest.New()
	t.Cleanup(srv.Close)
	prov, err := provider.New(api, provider.Options{APIKey: "k", BaseURL: srv.URL, MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	return &schemaRig{t: t, api: api, srv: srv, prov: prov,
		store: &session.Store{Dir: filepath.Join(t.TempDir(), "sessions")}, work: t.TempDir()}
}

func mustSchema(t *testing.T, s string) *runner.OutputSchema {
	t.Helper()
	sch, err := runner.CompileOutputSchema([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func (g *schemaRig) run(mod func(*runner.Config)) runner.Result {
	g.t.Helper()
	cfg := runner.Config{
		Store:    g.store,
		Cwd:      g.work,
		Prompt:   "review the change",
		Provider: g.prov,
		Model:    "m-1",
		Tools:    tool.Builtins(tool.Env{Dir: g.work}),
		Events:   event.NewEmitter(&g.events, nil),
		Now:      func() time.Time { return time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC) },
		Getenv: func(k string) string {
			return map[string]string{"SHELL": "/bin/bash", "XDG_CONFIG_HOME": filepath.Join(g.work, "none")}[k]
		},
		SchemaRetries: runner.DefaultSchemaRetries,
	}
	if mod != nil {
		mod(&cfg)
	}
	return runner.Run(context.Background(), cfg)
}

func (g *schemaRig) answer(texts ...string) {
	for _, s := range texts {
		g.srv.Enqueue(providertest.Text(g.api, s))
	}
}

func withSchema(s *runner.OutputSchema) func(*runner.Config) {
	return func(c *runner.Config) { c.OutputSchema = s }
}

func forEachAPI(t *testing.T, f func(t *testing.T, api string)) {
	for _, api := range []string{"anthropic", "openai", "openai-chat"} {
		t.Run(api, func(t *testing.T) { f(t, api) })
	}
}

func TestSchemaValidFirstTry(t *testing.T) {
	forEachAPI(t, func(t *testing.T, api string) {
		g := newSchemaRig(t, api)
		sch := mustSchema(t, verdictSchema)
		// A tool call first: native structured output leaves tools working.
		g.srv.Enqueue(providertest.ToolCall(api, "call_1", "ls", `{}`))
		g.answer(`{"verdict": "approve", "reasons": ["tests pass"]}`)
		res := g.run(withSchema(sch))
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		if got := string(res.Structured); got != `{"verdict":"approve","reasons":["tests pass"]}` {
			t.Fatalf("structured = %s", got)
		}
		reqs := g.srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want 2", len(reqs))
		}
		for i, rq := range reqs {
			if got := gjson.GetBytes(rq.Body, nativeParam[api]).Raw; got != sentSchema(t, api, sch.Raw) {
				t.Fatalf("request %d: %s = %s, want the schema", i+1, nativeParam[api], got)
			}
			if !strings.Contains(string(rq.Body), `<output_schema>`) {
				t.Fatalf("request %d lacks the schema instructions", i+1)
			}
			if len(gjson.GetBytes(rq.Body, "tools").Array()) == 0 {
				t.Fatalf("request %d offers no tools", i+1)
			}
		}
		ev := lastEvent(t, g.events.Bytes())
		if ev.Get("exit_code").Int() != 0 || ev.Get("structured.verdict").String() != "approve" {
			t.Fatalf("result event: %s", ev.Raw)
		}
	})
}

func TestSchemaInvalidThenFixed(t *testing.T) {
	forEachAPI(t, func(t *testing.T, api string) {
		g := newSchemaRig(t, api)
		g.answer(`{"verdict": "maybe", "reasons": []}`, "```json\n{\"verdict\": \"reject\", \"reasons\": [\"no tests\"]}\n```")
		res := g.run(withSchema(mustSchema(t, verdictSchema)))
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		if got := string(res.Structured); got != `{"verdict":"reject","reasons":["no tests"]}` {
			t.Fatalf("structured = %s", got)
		}
		reqs := g.srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want 2", len(reqs))
		}
		// The feedback is in the second request, and durable in the session.
		if !strings.Contains(string(reqs[1].Body), "/verdict: value must be one of") {
			t.Fatalf("request 2 lacks the validation errors: %s", reqs[1].Body)
		}
		data, err := os.ReadFile(res.SessionPath)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "did not match the output schema") {
			t.Fatal("the feedback is not in the session")
		}
	})
}

func TestSchemaStillInvalidExits7(t *testing.T) {
	forEachAPI(t, func(t *testing.T, api string) {
		g := newSchemaRig(t, api)
		g.answer("I approve.", `{"verdict":"approve"}`, `{"verdict":"approve","reasons":[],"extra":1}`)
		res := g.run(withSchema(mustSchema(t, verdictSchema)))
		code, reason := runner.Classify(res.Err)
		if code != 7 || reason != "schema_invalid" {
			t.Fatalf("exit %d %s (%v), want 7 schema_invalid", code, reason, res.Err)
		}
		if n := len(g.srv.Requests()); n != 3 {
			t.Fatalf("%d requests, want 3 (the answer and two retries)", n)
		}
		if res.Structured != nil || len(res.Problems) == 0 || !strings.Contains(strings.Join(res.Problems, "\n"), "extra") {
			t.Fatalf("structured %s, problems %q", res.Structured, res.Problems)
		}
		ev := lastEvent(t, g.events.Bytes())
		if ev.Get("exit_code").Int() != 7 || ev.Get("reason").String() != "schema_invalid" || len(ev.Get("problems").Array()) == 0 || ev.Get("structured").Exists() {
			t.Fatalf("result event: %s", ev.Raw)
		}
	})
}

func TestSchemaRetriesZero(t *testing.T) {
	g := newSchemaRig(t, "anthropic")
	g.answer("not json")
	res := g.run(func(c *runner.Config) {
		c.OutputSchema = mustSchema(t, verdictSchema)
		c.SchemaRetries = 0
	})
	if code, _ := runner.Classify(res.Err); code != 7 || len(g.srv.Requests()) != 1 {
		t.Fatalf("exit %d after %d requests", code, len(g.srv.Requests()))
	}
	if !strings.Contains(res.Err.Error(), "not one JSON value") {
		t.Fatalf("error %q does not say what was wrong", res.Err)
	}
}

// A compatible server that refuses the parameter: the run falls back once,
// says so, and sends no native parameter for the rest of the run.
func TestSchemaFallbackAfter400(t *testing.T) {
	forEachAPI(t, func(t *testing.T, api string) {
		g := newSchemaRig(t, api)
		param := map[string]string{"anthropic": "output_config.format", "openai": "text.format", "openai-chat": "response_format"}[api]
		g.srv.Enqueue(providertest.Response{Status: 400, Body: []byte(`{"error":{"message":"Unsupported parameter: '` + param + `' is not supported here","type":"invalid_request_error"}}`)})
		g.answer("nope", `{"verdict":"approve","reasons":[]}`)
		res := g.run(func(c *runner.Config) {
			c.OutputSchema = mustSchema(t, verdictSchema)
			c.System = "Be brief." // the default prompt belongs to its own tests
		})
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		reqs := g.srv.Requests()
		if len(reqs) != 3 {
			t.Fatalf("%d requests, want 3", len(reqs))
		}
		if !gjson.GetBytes(reqs[0].Body, nativeParam[api]).Exists() {
			t.Fatal("request 1 did not try native structured output")
		}
		for i := 1; i < 3; i++ {
			if gjson.GetBytes(reqs[i].Body, strings.SplitN(nativeParam[api], ".", 2)[0]).Exists() {
				t.Fatalf("request %d still sends the native parameter", i+1)
			}
		}
		// Apart from the parameter, the fallback request is the same.
		if !bytes.Equal(stripNative(t, api, reqs[0].Body), reqs[1].Body) {
			t.Fatalf("fallback request differs:\n%s\n%s", reqs[0].Body, reqs[1].Body)
		}
		if !strings.Contains(g.events.String(), `"type":"notice"`) {
			t.Fatal("no notice event")
		}
		if api == "openai-chat" {
			// The built-in tools' definitions belong to their own tests:
			// the golden file names them only.
			var names []string
			for _, n := range gjson.GetBytes(reqs[1].Body, "tools.#.function.name").Array() {
				names = append(names, n.String())
			}
			body, err := sjson.SetBytes(reqs[1].Body, "tools", names)
			if err != nil {
				t.Fatal(err)
			}
			checkRequestGolden(t, "openai-chat__fallback-after-400.json", body, g.work)
		}
	})
}

// Any other 400 is a provider error, not a fallback.
func TestSchemaOther400IsAnError(t *testing.T) {
	g := newSchemaRig(t, "openai-chat")
	g.srv.Enqueue(providertest.Response{Status: 400, Body: []byte(`{"error":{"message":"messages: too long"}}`)})
	res := g.run(withSchema(mustSchema(t, verdictSchema)))
	if code, _ := runner.Classify(res.Err); code != runner.ExitProvider || len(g.srv.Requests()) != 1 {
		t.Fatalf("exit %d after %d requests (%v)", code, len(g.srv.Requests()), res.Err)
	}
}

// A schema whose root is not an object goes by instructions alone.
func TestSchemaNonObjectRootIsNotNative(t *testing.T) {
	forEachAPI(t, func(t *testing.T, api string) {
		g := newSchemaRig(t, api)
		g.answer(`["a.go", "b.go"]`)
		res := g.run(withSchema(mustSchema(t, `{"type":"array","items":{"type":"string"}}`)))
		if res.Err != nil || string(res.Structured) != `["a.go","b.go"]` {
			t.Fatalf("%v %s", res.Err, res.Structured)
		}
		if gjson.GetBytes(g.srv.Requests()[0].Body, strings.SplitN(nativeParam[api], ".", 2)[0]).Exists() {
			t.Fatal("a non-object schema was sent natively")
		}
	})
}

func TestSchemaResume(t *testing.T) {
	forEachAPI(t, func(t *testing.T, api string) {
		g := newSchemaRig(t, api)
		sch := mustSchema(t, verdictSchema)
		g.answer(`{"verdict":"approve","reasons":[]}`)
		first := g.run(withSchema(sch))
		if first.Err != nil {
			t.Fatal(first.Err)
		}
		// Resumed without the flag: the recorded schema still applies.
		g.answer("plain words", `{"verdict":"reject","reasons":["late"]}`)
		second := g.run(func(c *runner.Config) { c.Resume = openResumed(t, first.SessionPath); c.Prompt = "and now?" })
		if second.Err != nil || string(second.Structured) != `{"verdict":"reject","reasons":["late"]}` {
			t.Fatalf("resume without the flag: %v %s", second.Err, second.Structured)
		}
		reqs := g.srv.Requests()
		if got := gjson.GetBytes(reqs[1].Body, nativeParam[api]).Raw; got != sentSchema(t, api, sch.Raw) {
			t.Fatalf("resumed request lacks the native schema: %q", got)
		}
		// The schema was not shown again: the prefix is unchanged.
		if n := strings.Count(string(reqs[2].Body), "<output_schema>"); n != 1 {
			t.Fatalf("schema instructions sent %d times, want 1", n)
		}
		// --output-schema none drops it: plain text passes, the model is told.
		g.answer("plain text is fine now")
		third := g.run(func(c *runner.Config) {
			c.Resume = openResumed(t, first.SessionPath)
			c.Prompt = "summarise"
			c.DropOutputSchema = true
		})
		if third.Err != nil || third.Structured != nil || third.Text != "plain text is fine now" {
			t.Fatalf("none: %v %s %q", third.Err, third.Structured, third.Text)
		}
		last := g.srv.Requests()[3].Body
		if gjson.GetBytes(last, strings.SplitN(nativeParam[api], ".", 2)[0]).Exists() {
			t.Fatal("--output-schema none still sends the native parameter")
		}
		if !strings.Contains(string(last), "no longer applies") {
			t.Fatal("the model was not told the schema no longer applies")
		}
		// And it stays dropped on the next resume.
		g.answer("still plain")
		fourth := g.run(func(c *runner.Config) { c.Resume = openResumed(t, first.SessionPath); c.Prompt = "more" })
		if fourth.Err != nil || fourth.Structured != nil {
			t.Fatalf("after none: %v %s", fourth.Err, fourth.Structured)
		}
	})
}

func TestCompileOutputSchemaErrors(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{"type": "object",`, "not JSON"},
		{`"object"`, "JSON object"},
		{`{"type": "objekt"}`, "/type: value must be one of"},
		{`{"properties": {"a": {"minimum": "3"}}}`, "/properties/a/minimum"},
		{`{"$ref": "other.json"}`, "self-contained"},
		{`{"type":"object"} trailing`, "not JSON"},
	} {
		_, err := runner.CompileOutputSchema([]byte(tc.schema))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", tc.schema, err, tc.want)
		}
	}
}

func TestValidateAnswer(t *testing.T) {
	sch := mustSchema(t, verdictSchema)
	for _, tc := range []struct {
		answer string
		ok     bool
		want   string
	}{
		{`{"verdict":"approve","reasons":[]}`, true, ""},
		{"  \n```json\n{\"verdict\":\"approve\",\"reasons\":[]}\n```\n", true, ""},
		{"```\n{\"verdict\":\"approve\",\"reasons\":[]}\n```", true, ""},
		{"\ufeff{\"verdict\":\"approve\",\"reasons\":[]}", true, ""},
		{"", false, "empty"},
		{`{"verdict":"approve","reasons":[]} {"again":1}`, false, "not one JSON value"},
		{"Here it is: {\"verdict\":\"approve\"}", false, "not one JSON value"},
		{`{"verdict":"approve","reasons":[1]}`, false, "/reasons/0"},
		{`{"reasons":[]}`, false, "verdict"},
		{"```json\n{}\n``` and more ```", false, "not one JSON value"},
	} {
		v, problems := sch.Validate(tc.answer)
		if tc.ok != (problems == nil) || (tc.ok && v == nil) {
			t.Errorf("%q: value %s problems %q", tc.answer, v, problems)
			continue
		}
		if !tc.ok && !strings.Contains(strings.Join(problems, "\n"), tc.want) {
			t.Errorf("%q: problems %q lack %q", tc.answer, problems, tc.want)
		}
	}
	// null is a value too, and survives as the structured result.
	v, problems := mustSchema(t, `{"type":"null"}`).Validate("null")
	if problems != nil || string(v) != "null" {
		t.Fatalf("null: %s %q", v, problems)
	}
}

func lastEvent(t *testing.T, out []byte) gjson.Result {
	t.Helper()
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	ev := gjson.ParseBytes(lines[len(lines)-1])
	if ev.Get("type").String() != "result" {
		t.Fatalf("last event is not the result: %s", lines[len(lines)-1])
	}
	return ev
}

// stripNative removes the native structured-output parameter from body.
func stripNative(t *testing.T, api string, body []byte) []byte {
	t.Helper()
	out, err := sjson.DeleteBytes(body, strings.SplitN(nativeParam[api], ".", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkRequestGolden compares body, indented and with the work directory
// replaced, with testdata/golden/name (rewritten when UPDATE_GOLDEN is set).
func checkRequestGolden(t *testing.T, name string, body []byte, work string) {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, body, "", "  "); err != nil {
		t.Fatal(err)
	}
	got := bytes.ReplaceAll(out.Bytes(), []byte(work), []byte("$WORK"))
	got = append(got, '\n')
	path := filepath.Join("testdata", "golden", name)
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("request differs from %s:\n%s", path, got)
	}
}

// BenchmarkSchemaGate is the cost the output-schema gate adds to a run's
// final turn: validating a review of 50 comments.
func BenchmarkSchemaGate(b *testing.B) {
	sch, err := runner.CompileOutputSchema([]byte(`{"type":"object","properties":{"verdict":{"enum":["approve","reject"]},"comments":{"type":"array","items":{"type":"object","properties":{"file":{"type":"string"},"line":{"type":"integer","minimum":1},"body":{"type":"string"}},"required":["file","line","body"],"additionalProperties":false}}},"required":["verdict","comments"],"additionalProperties":false}`))
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	sb.WriteString(`{"verdict":"reject","comments":[`)
	for i := range 50 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"file":"pkg/file%d.go","line":%d,"body":"This check misses the error returned by Close; wrap it and return it."}`, i, i+1)
	}
	sb.WriteString(`]}`)
	answer := sb.String()
	b.SetBytes(int64(len(answer)))
	b.ReportAllocs()
	for b.Loop() {
		if _, problems := sch.Validate(answer); problems != nil {
			b.Fatal(problems)
		}
	}
}

// A schema with characters JSON encoders like to escape (<, >, &, U+2028)
// and escapes of its own is recorded and compared byte for byte: resuming
// with the same file shows nothing again.
func TestSchemaResumeSameSchemaWithAwkwardText(t *testing.T) {
	g := newSchemaRig(t, "anthropic")
	raw := `{"type":"object","description":"a <b> & c \u2028 \u00e9 é","properties":{"x":{"type":"string","pattern":"^<[a-z]+>&$"}},"required":["x"]}`
	g.answer(`{"x":"<ab>&"}`, `{"x":"<cd>&"}`)
	first := g.run(withSchema(mustSchema(t, raw)))
	if first.Err != nil {
		t.Fatal(first.Err)
	}
	second := g.run(func(c *runner.Config) {
		c.Resume = openResumed(t, first.SessionPath)
		c.Prompt = "again"
		c.OutputSchema = mustSchema(t, raw)
	})
	if second.Err != nil {
		t.Fatal(second.Err)
	}
	if n := strings.Count(string(g.srv.Requests()[1].Body), "output_schema>"); n != 2 {
		t.Fatalf("schema shown %d times (open+close tags), want once", n/2)
	}
}

// sentSchema is the schema as the provider sends it natively to api:
// lowered for Anthropic, as it is for OpenAI.
func sentSchema(t *testing.T, api string, raw json.RawMessage) string {
	t.Helper()
	body, err := provider.EncodeRequest(api, provider.Request{Model: "m", OutputSchema: raw})
	if err != nil {
		t.Fatal(err)
	}
	return gjson.GetBytes(body, nativeParam[api]).Raw
}
