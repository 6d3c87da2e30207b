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
