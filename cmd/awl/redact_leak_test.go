package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awlrun/awl/provider/providertest"
)

// redactLeakSecret is a --redact-env value the fake provider puts in its
// error messages.
const redactLeakSecret = "sk-redact-SENTINEL-0123456789"

// providerError is an Anthropic error answer whose message holds the
// secret; retryable statuses come with a retry-after-ms of 1.
func providerError(status int) providertest.Response {
	h := http.Header{}
	if status >= 500 || status == 429 {
		h.Set("retry-after-ms", "1")
	}
	return providertest.Response{Status: status, Header: h,
		Body: []byte(`{"type":"error","error":{"type":"api_error","message":"the upstream rejected token ` + redactLeakSecret + `"}}`)}
}

// redactRig is a fake provider and an environment with MY_TOKEN set to
// the secret.
func redactRig(t *testing.T) *providertest.Server {
	srv := providertest.New()
	t.Cleanup(srv.Close)
	keyEnv(t, srv)
	t.Setenv("ANTHROPIC_API_KEY", "sk-key-0123456789")
	t.Setenv("MY_TOKEN", redactLeakSecret)
	return srv
}

// TestRetryNoteRedacted: a retried request whose error message holds a
// --redact-env value shows it redacted in the retry event on stdout and in
// the note on stderr.
func TestRetryNoteRedacted(t *testing.T) {
	srv := redactRig(t)
	srv.Enqueue(providerError(529), providertest.Text("anthropic", "done"))
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"run", "--no-stdin", "-o", "ndjson", "--redact-env", "MY_TOKEN", "hi"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	checkRedacted(t, stdout.String(), `"type":"retry"`, "stdout")
	checkRedacted(t, stderr.String(), "retry 1", "stderr")
}

// TestErrorRedacted: a request that fails for good with a --redact-env
// value in its error shows it redacted in the result event's error on
// stdout and in the error message on stderr.
func TestErrorRedacted(t *testing.T) {
	srv := redactRig(t)
	for _, output := range []string{"ndjson", "json", "text"} {
		srv.Enqueue(providerError(400))
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), []string{"run", "--no-stdin", "-o", output, "--redact-env", "MY_TOKEN", "hi"}, nil, &stdout, &stderr); code == 0 {
			t.Fatalf("-o %s: exit 0 for a rejected request\n%s", output, stderr.String())
		}
		if output != "text" {
			checkRedacted(t, stdout.String(), `"error":"anthropic: Bad Request (400): the upstream rejected token [redacted:MY_TOKEN]"}`, "-o "+output+" stdout")
		} else if strings.Contains(stdout.String(), redactLeakSecret) {
			t.Errorf("-o text: the secret reached stdout: %s", stdout.String())
		}
		checkRedacted(t, stderr.String(), "the upstream rejected token [redacted:MY_TOKEN]", "-o "+output+" stderr")
	}
}

// checkRedacted fails unless out holds want (so the text that would carry
// the secret is there) and [redacted:MY_TOKEN], and not the secret.
func checkRedacted(t *testing.T, out, want, what string) {
	t.Helper()
	if strings.Contains(out, redactLeakSecret) {
		t.Errorf("%s: the secret leaked:\n%s", what, out)
	}
	if !strings.Contains(out, want) || !strings.Contains(out, "[redacted:MY_TOKEN]") {
		t.Errorf("%s: want %q with [redacted:MY_TOKEN]:\n%s", what, want, out)
	}
}

// TestEscapedSecretInToolInput: a model that writes a --redact-env value
// with JSON escapes in a tool input ("\u0073k-…" decodes to the secret)
// gets it redacted as decoded: the command runs with the redacted text,
// and neither the session, the events, stderr nor the next request holds
// the secret, decoded or escaped.
func TestEscapedSecretInToolInput(t *testing.T) {
	srv := redactRig(t)
	escaped := `\u0073` + redactLeakSecret[1:9] + `\u002d` + redactLeakSecret[10:]
	input := `{"command":"echo ` + escaped + ` > out.txt; echo \"` + escaped + `\""}`
	srv.Enqueue(providertest.ToolCall("anthropic", "c1", "bash", input), providertest.Text("anthropic", "done"))
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"run", "--no-stdin", "-o", "ndjson", "--redact-env", "MY_TOKEN", "go"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	leaked := func(what, out string) {
		t.Helper()
		if strings.Contains(out, redactLeakSecret) || strings.Contains(out, redactLeakSecret[10:]) {
			t.Errorf("%s holds the secret:\n%s", what, out)
		}
	}
	checkRedacted(t, stdout.String(), `"type":"tool_start"`, "stdout")
	leaked("stdout", stdout.String())
	leaked("stderr", stderr.String())
	sessions, _ := filepath.Glob(filepath.Join(os.Getenv("AWL_SESSION_DIR"), "*", "*.jsonl"))
	if len(sessions) != 1 {
		t.Fatalf("sessions: %q", sessions)
	}
	b, err := os.ReadFile(sessions[0])
	if err != nil {
		t.Fatal(err)
	}
	checkRedacted(t, string(b), `"toolUse"`, "the session")
	leaked("the session", string(b))
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	checkRedacted(t, string(reqs[1].Body), `"tool_use"`, "the second request")
	leaked("the second request", string(reqs[1].Body))
	out, err := os.ReadFile("out.txt")
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "[redacted:MY_TOKEN]\n" {
		t.Errorf("the command wrote %q, want the redacted text it was run with", out)
	}
}
