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
			body, err := os.ReadFile(filepath.Join("..", "..", "provider", "testdata", "wire", "refusals", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			srv := providertest.New()
			defer srv.Close()
			keyEnv(t, srv)
			t.Setenv("ANTHROPIC_API_KEY", "sk-test-key")
			t.Setenv("OPENAI_API_KEY", "sk-test-key")
			t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
			srv.Enqueue(providertest.Response{Status: 400, Body: body})
			schema := `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`
			if err := os.WriteFile("schema.json", []byte(schema), 0o644); err != nil {
				t.Fatal(err)
			}
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

// TestRecordedTooLongAndSchemaRuns runs awl against each API's real
// refusal of a request as too long, and Anthropic's of an output schema
// keyword: a too-long request is compacted (a summary request, reason
// overflow) and sent once more, the limit learnt where the refusal states
// one under the window in force (OpenAI Chat's 4097; Anthropic's 200000
// is the table's window, and Responses states none); a refused schema
// turns the native parameter off with a notice, and the same request goes
// again without it. Each run completes (exit 0) with the answer.
func TestRecordedTooLongAndSchemaRuns(t *testing.T) {
	for _, tc := range []struct {
		file, provider string
		requests       int
		limit          string // the contextLimit entry's tokens, "" for none
		notice         string
	}{
		{"anthropic-too-long.json", "anthropic", 3, "", ""},
		{"openai-chat-too-long.json", "openai-chat", 3, "4097", "states a limit of 4097 tokens, which is the window from now on"},
		{"openai-responses-too-long.json", "openai", 3, "", ""},
		{"anthropic-bad-schema.json", "anthropic", 2, "", "the server rejected native structured output (anthropic: Bad Request (400): output_format.schema: For 'integer' type, property 'minimum' is not supported)"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("..", "..", "provider", "testdata", "wire", "refusals", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			srv := providertest.New()
			defer srv.Close()
			keyEnv(t, srv)
			t.Setenv("ANTHROPIC_API_KEY", "sk-test-key")
			t.Setenv("OPENAI_API_KEY", "sk-test-key")
			t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
			answer := `{"ok":true}`
			srv.Enqueue(providertest.Response{Status: 400, Body: body})
			if tc.requests == 3 {
				srv.Enqueue(providertest.Text(tc.provider, "the user said hi"))
			}
			srv.Enqueue(providertest.Text(tc.provider, answer))
			schema := `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`
			if err := os.WriteFile("schema.json", []byte(schema), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), []string{"run", "--no-stdin", "--provider", tc.provider, "-o", "ndjson", "--output-schema", "schema.json", "hi"}, nil, &stdout, &stderr)
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
			if tc.requests == 3 {
				// Too long: one compaction, then the same turn once more.
				if len(compactions) != 1 || compactions[0] != "overflow" {
					t.Errorf("compactions %q, want one, reason overflow", compactions)
				}
				if !bytes.Contains(reqs[2].Body, []byte("the user said hi")) {
					t.Errorf("the request after the compaction does not carry its summary: %.300s", reqs[2].Body)
				}
			} else {
				// The schema refused: the request again without it.
				if len(compactions) != 0 {
					t.Errorf("compactions %q, want none", compactions)
				}
				if !bytes.Contains(reqs[0].Body, []byte(`"output_config"`)) || bytes.Contains(reqs[1].Body, []byte(`"output_config"`)) {
					t.Errorf("output_config in the first request and not the second, want: %.200s / %.200s", reqs[0].Body, reqs[1].Body)
				}
			}
		})
	}
}
