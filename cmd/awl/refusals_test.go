package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awlrun/awl/provider/providertest"
)

// refusalServer serves file's recorded refusal body (provider/testdata/
// wire/refusals) from a fake model the run's environment points every API
// at, and writes the run's schema.json, whose one property ok is a
// boolean.
func refusalServer(t *testing.T, file string) ([]byte, *providertest.Server) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "provider", "testdata", "wire", "refusals", file))
	if err != nil {
		t.Fatal(err)
	}
	srv := providertest.New()
	t.Cleanup(srv.Close)
	keyEnv(t, srv)
	t.Setenv("ANTHROPIC_API_KEY", "sk-test-key")
	t.Setenv("OPENAI_API_KEY", "sk-test-key")
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	schema := `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`
	if err := os.WriteFile("schema.json", []byte(schema), 0o644); err != nil {
		t.Fatal(err)
	}
	return body, srv
}

// TestRecordedRefusalRuns runs awl against each API's real refusal of a
// bad tool schema and of an unsupported parameter (provider/testdata/wire/
// refusals): the run fails at once with exit 5, after the one request (a
// 400 is not retried, and a tool schema's refusal is not taken for the
// output schema's), and the result event and stderr carry the status and
// the API's message.
func TestRecordedRefusalRuns(t *testing.T) {
	for _, tc := range []struct{ file, provider, message string }{
		{"anthropic-bad-tool-schema.json", "anthropic", "tools.16.custom.input_schema: JSON schema is invalid."},
		{"anthropic-unsupported-parameter.json", "anthropic", "`temperature` and `top_p` cannot both be specified for this model."},
		{"openai-chat-bad-tool-schema.json", "openai-chat", "Invalid schema for function 'mongodb-list-databases': In context=(), object schema missing properties."},
		{"openai-chat-unsupported-parameter.json", "openai-chat", "Unsupported parameter: 'max_tokens' is not supported with this model."},
		{"openai-responses-bad-tool-schema.json", "openai", "Invalid schema for function 'GMAIL_CREATE_EMAIL_DRAFT'"},
		{"openai-responses-unsupported-parameter.json", "openai", "Unsupported parameter: 'temperature' is not supported with this model."},
	} {
		t.Run(tc.file, func(t *testing.T) {
			body, srv := refusalServer(t, tc.file)
			srv.Enqueue(providertest.Response{Status: 400, Body: body})
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), []string{"run", "--no-stdin", "--provider", tc.provider, "-o", "ndjson", "--output-schema", "schema.json", "hi"}, nil, &stdout, &stderr)
			if code != 5 {
				t.Fatalf("exit %d, want 5\n%s", code, stderr.String())
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests, want the one refused", n)
			}
			lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			var res struct {
				Type     string `json:"type"`
				ExitCode int    `json:"exit_code"`
				Reason   string `json:"reason"`
				Error    string `json:"error"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
				t.Fatalf("last event %q: %v", lines[len(lines)-1], err)
			}
			if want := tc.provider + ": Bad Request (400): "; res.Type != "result" || res.ExitCode != 5 || res.Reason != "provider_error" || !strings.HasPrefix(res.Error, want) || !strings.Contains(res.Error, tc.message) {
				t.Errorf("result event %+v, want exit 5, reason provider_error, an error that begins %q and holds %q", res, want, tc.message)
			}
			if !strings.Contains(stderr.String(), tc.message) {
				t.Errorf("stderr does not give the API's message %q:\n%s", tc.message, stderr.String())
			}
		})
	}
}

// TestRecordedTooLongRuns runs awl against each API's real refusal of a
// request as too long: the request is compacted (a summary request,
// reason overflow) and sent once more, the limit learnt where the refusal
// states one under the window in force (OpenAI Chat's 4097; Anthropic's
// 200000 is the table's window, and Responses states none). Each run
// completes (exit 0) with the answer. The prompt is long enough (some
// 1,500 tokens) for the summary to be shorter than what it replaces: a
// summary that is not is never appended (runner's
// TestSummaryNotShorterPrunes).
func TestRecordedTooLongRuns(t *testing.T) {
	for _, tc := range []struct {
		file, provider string
		requests       int
		limit          string // the contextLimit entry's tokens, "" for none
		notice         string
	}{
		{"anthropic-too-long.json", "anthropic", 3, "200000", "states a limit of 200000 tokens, which is the window from now on"},
		{"openai-chat-too-long.json", "openai-chat", 3, "4097", "states a limit of 4097 tokens, which is the window from now on"},
		{"openai-responses-too-long.json", "openai", 3, "", ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			body, srv := refusalServer(t, tc.file)
			answer := `{"ok":true}`
			srv.Enqueue(providertest.Response{Status: 400, Body: body})
			srv.Enqueue(providertest.Text(tc.provider, "the user said hi"))
			srv.Enqueue(providertest.Text(tc.provider, answer))
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), []string{"run", "--no-stdin", "--provider", tc.provider, "-o", "ndjson", "--output-schema", "schema.json", "hi " + strings.Repeat("and more ", 700)}, nil, &stdout, &stderr)
			if code != 0 {
				t.Fatalf("exit %d, want 0\n%s", code, stderr.String())
			}
			reqs := srv.Requests()
			if len(reqs) != tc.requests {
				t.Fatalf("%d requests, want %d", len(reqs), tc.requests)
			}
			var res struct {
				ExitCode int    `json:"exit_code"`
				Reason   string `json:"reason"`
				Text     string `json:"text"`
			}
			var compactions []string
			var limits, notices []string
			for line := range strings.Lines(stdout.String()) {
				var ev struct {
					Type    string `json:"type"`
					Reason  string `json:"reason"`
					Message string `json:"message"`
					Entry   struct {
						Type   string          `json:"type"`
						Tokens json.RawMessage `json:"tokens"`
					} `json:"entry"`
				}
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					t.Fatalf("event %q: %v", line, err)
				}
				switch {
				case ev.Type == "result":
					json.Unmarshal([]byte(line), &res)
				case ev.Type == "compaction":
					compactions = append(compactions, ev.Reason)
				case ev.Type == "notice":
					notices = append(notices, ev.Message)
				case ev.Type == "entry" && ev.Entry.Type == "contextLimit":
					limits = append(limits, string(ev.Entry.Tokens))
				}
			}
			if res.ExitCode != 0 || res.Reason != "completed" || res.Text != answer {
				t.Errorf("result %+v, want exit 0, completed, %s", res, answer)
			}
			if tc.limit == "" && len(limits) != 0 || tc.limit != "" && (len(limits) != 1 || limits[0] != tc.limit) {
				t.Errorf("contextLimit entries %q, want %q", limits, tc.limit)
			}
			if tc.notice != "" && (len(notices) != 1 || !strings.Contains(notices[0], tc.notice) || !strings.Contains(stderr.String(), tc.notice)) {
				t.Errorf("notices %q and stderr %q, want one holding %q", notices, stderr.String(), tc.notice)
			}
			// One compaction, then the same turn once more.
			if len(compactions) != 1 || compactions[0] != "overflow" {
				t.Errorf("compactions %q, want one, reason overflow", compactions)
			}
			if !bytes.Contains(reqs[2].Body, []byte("the user said hi")) {
				t.Errorf("the request after the compaction does not carry its summary: %.300s", reqs[2].Body)
			}
		})
	}
}

// TestRecordedSchemaRefusalRuns runs awl against each API's real refusal
// of an output schema: Anthropic's of a keyword, OpenAI Chat's of a keyword
// in response_format, the Responses API's of text.format.schema as an HTTP
// 400 and as an error event in the stream. Each turns the native parameter
// off for the rest of the run with one notice (event and stderr) naming
// the API's message, and sends the same request again without it; the
// answer is then held to the schema by awl alone: an answer that does not
// validate gets the gate's feedback (a third request, still without the
// parameter) and the valid one ends the run, exit 0, with no compaction.
// With --schema-retries 0 the invalid answer ends it with exit 7.
func TestRecordedSchemaRefusalRuns(t *testing.T) {
	for _, tc := range []struct {
		file, provider string
		inStream       bool   // the body is an error event in a 200 stream
		native         string // what marks the native parameter in a request
		notice         string
	}{
		{"anthropic-bad-schema.json", "anthropic", false, `"output_config"`,
			"the server rejected native structured output (anthropic: Bad Request (400): output_format.schema: For 'integer' type, property 'minimum' is not supported)"},
		{"openai-chat-bad-schema.json", "openai-chat", false, `"response_format"`,
			"the server rejected native structured output (openai-chat: Bad Request (400): Invalid schema for response_format 'default': In context=('properties', 'description'), 'default' is not permitted.)"},
		{"openai-responses-bad-schema.json", "openai", false, `"text":{"format"`,
			"the server rejected native structured output (openai: Bad Request (400): Invalid schema for response_format 'response': In context=(), 'required' is required to be supplied"},
		{"openai-responses-bad-schema-event.json", "openai", true, `"text":{"format"`,
			"the server rejected native structured output (openai: Invalid schema for response_format 'codex_output_schema'. Please ensure it is a valid JSON Schema.)"},
	} {
		for _, retries := range []string{"2", "0"} {
			t.Run(tc.file+"/retries="+retries, func(t *testing.T) {
				body, srv := refusalServer(t, tc.file)
				if tc.inStream {
					var c bytes.Buffer
					if err := json.Compact(&c, body); err != nil {
						t.Fatal(err)
					}
					srv.Enqueue(providertest.Response{Body: []byte("event: error\ndata: " + c.String() + "\n\n")})
				} else {
					srv.Enqueue(providertest.Response{Status: 400, Body: body})
				}
				answer := `{"ok":true}`
				srv.Enqueue(providertest.Text(tc.provider, `{"ok":"yes"}`))
				srv.Enqueue(providertest.Text(tc.provider, answer))
				var stdout, stderr bytes.Buffer
				code := Main(context.Background(), []string{"run", "--no-stdin", "--provider", tc.provider, "-o", "ndjson", "--output-schema", "schema.json", "--schema-retries", retries, "hi"}, nil, &stdout, &stderr)
				want, wantReqs, wantReason := 0, 3, "completed"
				if retries == "0" {
					want, wantReqs, wantReason = 7, 2, "schema_invalid"
				}
				if code != want {
					t.Fatalf("exit %d, want %d\n%s", code, want, stderr.String())
				}
				reqs := srv.Requests()
				if len(reqs) != wantReqs {
					t.Fatalf("%d requests, want %d", len(reqs), wantReqs)
				}
				var res struct {
					ExitCode   int             `json:"exit_code"`
					Reason     string          `json:"reason"`
					Structured json.RawMessage `json:"structured"`
					Problems   []string        `json:"problems"`
				}
				var notices, others []string
				for line := range strings.Lines(stdout.String()) {
					var ev struct {
						Type    string `json:"type"`
						Message string `json:"message"`
					}
					if err := json.Unmarshal([]byte(line), &ev); err != nil {
						t.Fatalf("event %q: %v", line, err)
					}
					switch ev.Type {
					case "result":
						json.Unmarshal([]byte(line), &res)
					case "notice":
						notices = append(notices, ev.Message)
					case "compaction", "retry":
						others = append(others, ev.Type)
					}
				}
				if res.ExitCode != want || res.Reason != wantReason {
					t.Errorf("result %+v, want exit %d, %s", res, want, wantReason)
				}
				if want == 0 && string(res.Structured) != answer {
					t.Errorf("structured %s, want %s", res.Structured, answer)
				}
				if want == 7 && (len(res.Problems) == 0 || !strings.Contains(res.Problems[0], "/ok")) {
					t.Errorf("problems %q, want the answer's /ok", res.Problems)
				}
				if len(notices) != 1 || !strings.Contains(notices[0], tc.notice) || strings.Count(stderr.String(), "rejected native structured output") != 1 || !strings.Contains(stderr.String(), tc.notice) {
					t.Errorf("notices %q and stderr %q, want one holding %q", notices, stderr.String(), tc.notice)
				}
				if len(others) != 0 {
					t.Errorf("events %q, want no compaction and no retry", others)
				}
				if !bytes.Contains(reqs[0].Body, []byte(tc.native)) {
					t.Errorf("the first request has no %s: %.300s", tc.native, reqs[0].Body)
				}
				for i, r := range reqs[1:] {
					if bytes.Contains(r.Body, []byte(tc.native)) {
						t.Errorf("request %d still sends %s after the refusal: %.300s", i+2, tc.native, r.Body)
					}
				}
				if want == 0 && !bytes.Contains(reqs[2].Body, []byte("did not match the output schema")) {
					t.Errorf("the third request does not carry the gate's feedback: %.500s", reqs[2].Body)
				}
			})
		}
	}
}
