package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/awlrun/awl/provider/providertest"
)

// TestSecretsRedactedEverywhere (issue 47): a secret the model uses as a
// tool's name and call id, and the encoded forms of secrets a tool prints
// (the OTLP header as OTEL_EXPORTER_OTLP_HEADERS spells it,
// percent-encoded; the API key in a Basic Authorization header), and a
// check command that holds a secret (its check_start event), reach no
// session line, event, later request, span (names and gen_ai.tool.name
// included, without content capture) or HTML report.
func TestSecretsRedactedEverywhere(t *testing.T) {
	rcv := newOTLPReceiver(t)
	srv, dir := traceEnv(t, rcv.URL)
	const header = "tok%2FSECRET%3D4242" // decoded: tok/SECRET=4242
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-collector-token="+header)
	basic := base64.StdEncoding.EncodeToString([]byte("ci-bot:" + sentinelKey))
	srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{InputTokens: 1, OutputTokens: 1, Calls: []providertest.Call{
		{ID: "call-" + sentinelKey, Name: sentinelKey, Input: `{}`},
		{ID: "call_2", Name: "bash", Input: `{"command":"echo 'x-collector-token=` + header + `'; echo 'Authorization: Basic ` + basic + `'"}`},
	}}))
	srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{InputTokens: 1, OutputTokens: 1,
		Text: "done: " + header + " and Basic " + basic}))
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"run", "--no-stdin", "-o", "ndjson", "--stream", "--check", "test -n '" + sentinelKey + "'", "go"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	_, req := rcv.spans(t)
	wire, _ := proto.Marshal(req)
	if rcv.headers[0].Get("X-Collector-Token") != "tok/SECRET=4242" {
		t.Errorf("the OTLP header sent: %q", rcv.headers[0].Get("X-Collector-Token"))
	}
	if !strings.Contains(out.String(), `"name":"[redacted:ANTHROPIC_API_KEY]"`) {
		t.Errorf("no tool_start with the redacted name:\n%s", out.String())
	}
	places := map[string][]byte{"stdout": out.Bytes(), "stderr": errb.Bytes(), "the trace": wire}
	for i, r := range srv.Requests() {
		places["request "+string(rune('1'+i))] = r.Body
	}
	sess, _ := filepath.Glob(filepath.Join(dir, "sessions", "*", "*.jsonl"))
	if len(sess) != 1 {
		t.Fatalf("sessions: %v", sess)
	}
	places["the session"], _ = os.ReadFile(sess[0])
	var html, herr bytes.Buffer
	_, id, _ := strings.Cut(strings.TrimSuffix(filepath.Base(sess[0]), ".jsonl"), "_")
	if code := Main(context.Background(), []string{"sessions", "report", "--html", "-", id}, nil, &html, &herr); code != 0 {
		t.Fatalf("sessions report: exit %d: %s", code, herr.String())
	}
	places["the report"] = html.Bytes()
	for where, data := range places {
		for _, secret := range []string{sentinelKey, header, "tok/SECRET=4242", basic[8:24]} {
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s holds %q", where, secret)
			}
		}
	}
	if !bytes.Contains(places["the session"], []byte("[redacted:OTEL_EXPORTER_OTLP_HEADERS]")) ||
		!bytes.Contains(places["the report"], []byte("[redacted:ANTHROPIC_API_KEY]")) {
		t.Errorf("the session or the report lacks the redactions:\n%s", places["the session"])
	}
}
