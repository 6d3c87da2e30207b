package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
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
	if rcv.headers[0].Get("X-Collector-Token") != "tok/SECRET=4242" {
		t.Errorf("the OTLP header sent: %q", rcv.headers[0].Get("X-Collector-Token"))
	}
	if !strings.Contains(out.String(), `"name":"[redacted:ANTHROPIC_API_KEY]"`) {
		t.Errorf("no tool_start with the redacted name:\n%s", out.String())
	}
	places := runPlaces(t, rcv, srv, dir, &out, &errb)
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

// runPlaces are the places a finished run (in dir, against srv, traced to
// rcv) wrote to or sent: its stdout and stderr, the trace as exported,
// each request to the model, the session file and its HTML report.
func runPlaces(t *testing.T, rcv *otlpReceiver, srv *providertest.Server, dir string, out, errb *bytes.Buffer) map[string][]byte {
	t.Helper()
	_, req := rcv.spans(t)
	wire, _ := proto.Marshal(req)
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
	return places
}

// TestMCPEnvValuesRedactedEverywhere (issue 47): every value an MCP
// server's configuration gives it in env, literal or from a ${VAR} the
// tools' environment still holds, and what a ${VAR} in its args expands
// to (a tool may read a command line in /proc), is a secret: a tool that prints it, as
// it is, base64-encoded, or in the configuration file it reads, brings it
// into no session line, event, request, span or report, with and without
// the sandbox. What is clearly no secret (PATH, an existing directory)
// stays readable.
func TestMCPEnvValuesRedactedEverywhere(t *testing.T) {
	const fromVar, literal, argVar = "db-pass-5ecret-0451", "literal-5ecret-token-77", "arg-tok-5ecret-8080"
	for _, sandbox := range []string{"off", "workspace-write"} {
		t.Run(sandbox, func(t *testing.T) {
			rcv := newOTLPReceiver(t)
			srv, dir := traceEnv(t, rcv.URL)
			t.Setenv("MCP_DB_PASS", fromVar)
			t.Setenv("MCP_ARG_TOKEN", argVar)
			plain := filepath.Join(dir, "plain-config-dir")
			os.Mkdir(plain, 0o755)
			cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"db": map[string]any{
				"command": "false", "args": []string{"--token", "${MCP_ARG_TOKEN}", "${HOME}"},
				"env": map[string]string{"DB_PASS": "${MCP_DB_PASS}", "API_TOKEN": literal, "PATH": "${PATH}", "DB_CONFIG_DIR": plain}}}})
			os.WriteFile(filepath.Join(dir, "mcp.json"), cfg, 0o644)
			input, _ := json.Marshal(map[string]string{"command": `echo "$MCP_DB_PASS $MCP_ARG_TOKEN"; printf %s "$MCP_DB_PASS" | base64; cat mcp.json; base64 -w0 mcp.json; echo; printf '%s\n' ` + plain})
			srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{InputTokens: 1, OutputTokens: 1,
				Calls: []providertest.Call{{ID: "call_1", Name: "bash", Input: string(input)}}}))
			srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{InputTokens: 1, OutputTokens: 1, Text: "done"}))
			var out, errb bytes.Buffer
			if code := Main(context.Background(), []string{"run", "--no-stdin", "-o", "ndjson", "--mcp-config", "mcp.json",
				"--sandbox", sandbox, "--sandbox-best-effort", "go"}, nil, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			places := runPlaces(t, rcv, srv, dir, &out, &errb)
			b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
			for where, data := range places {
				for _, secret := range []string{fromVar, literal, argVar, b64(fromVar)[4:20], b64(literal)[4:24]} {
					if bytes.Contains(data, []byte(secret)) {
						t.Errorf("%s holds %q", where, secret)
					}
				}
			}
			if !bytes.Contains(places["the session"], []byte("[redacted:MCP_CREDENTIAL]")) || !bytes.Contains(places["the session"], []byte(plain+`\n`)) {
				t.Errorf("the session lacks the redactions, or redacted what is no secret:\n%s", places["the session"])
			}
		})
	}
}
