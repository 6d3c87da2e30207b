package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/awlrun/awl/provider/providertest"
)

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes each request
// with the collector's protobuf definitions.
type otlpReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	reqs    []*coltracepb.ExportTraceServiceRequest
	headers []http.Header
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var m coltracepb.ExportTraceServiceRequest
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want POST /v1/traces, application/x-protobuf", http.StatusBadRequest)
			return
		}
		if err := proto.Unmarshal(body, &m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.reqs = append(r.reqs, &m)
		r.headers = append(r.headers, req.Header.Clone())
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *otlpReceiver) spans(t *testing.T) ([]*tracepb.Span, *coltracepb.ExportTraceServiceRequest) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) != 1 {
		t.Fatalf("%d export requests, want 1", len(r.reqs))
	}
	var out []*tracepb.Span
	for _, rs := range r.reqs[0].ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			out = append(out, ss.Spans...)
		}
	}
	return out, r.reqs[0]
}

func attr(s []*commonpb.KeyValue, k string) *commonpb.AnyValue {
	for _, kv := range s {
		if kv.Key == k {
			return kv.Value
		}
	}
	return nil
}

func traceEnv(t *testing.T, endpoint string) (*providertest.Server, string) {
	t.Helper()
	srv := providertest.New()
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("ANTHROPIC_API_KEY", sentinelKey)
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("AWL_SESSION_DIR", filepath.Join(dir, "sessions"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "cfg"))
	t.Setenv("AWL_PROVIDER", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "")
	t.Setenv("OTEL_SERVICE_NAME", "ci-agent")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci,vcs.ref=main%2Cx")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-collector-token=tok-SECRET-4242")
	t.Setenv("TRACEPARENT", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	t.Setenv("TRACESTATE", "vendor=x")
	return srv, dir
}

// TestTraceTree runs awl with a tool call and a retry against a real OTLP
// receiver: one export whose spans form the tree run → chat, execute_tool,
// chat, in the caller's trace (TRACEPARENT), with the GenAI attributes;
// the tool saw its own span as TRACEPARENT; no prompt, tool text or collector
// credential is in the trace, the session or the output.
func TestTraceTree(t *testing.T) {
	rcv := newOTLPReceiver(t)
	srv, dir := traceEnv(t, rcv.URL)
	srv.Enqueue(providertest.Response{Status: 529, Header: http.Header{"Retry-After-Ms": {"5"}}, Body: []byte(`{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`)})
	srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{Model: "claude-test-1", InputTokens: 100, OutputTokens: 20,
		Calls: []providertest.Call{{ID: "call_1", Name: "bash", Input: `{"command":"echo \"tp=$TRACEPARENT\"; echo private-tool-output"}`}}}))
	srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{Model: "claude-test-1", InputTokens: 200, OutputTokens: 10, Text: "all done, private-answer"}))
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"run", "--no-stdin", "-o", "json", "--max-retries", "2", "private-prompt", "please"}, nil, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	spans, req := rcv.spans(t)
	if len(spans) != 4 {
		t.Fatalf("%d spans, want 4 (run, chat, tool, chat)", len(spans))
	}
	byName := map[string][]*tracepb.Span{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
		if hex.EncodeToString(s.TraceId) != "0af7651916cd43dd8448eb211c80319c" {
			t.Fatalf("span %s: trace %x, want the caller's", s.Name, s.TraceId)
		}
		if s.TraceState != "vendor=x" {
			t.Errorf("span %s: tracestate %q", s.Name, s.TraceState)
		}
		if s.EndTimeUnixNano < s.StartTimeUnixNano || s.StartTimeUnixNano == 0 {
			t.Errorf("span %s: times %d..%d", s.Name, s.StartTimeUnixNano, s.EndTimeUnixNano)
		}
	}
	root := byName["invoke_agent awl"]
	if len(root) != 1 || hex.EncodeToString(root[0].ParentSpanId) != "b7ad6b7169203331" {
		t.Fatalf("run span: %v", root)
	}
	r := root[0]
	sid := attr(r.Attributes, "gen_ai.conversation.id").GetStringValue()
	if !strings.Contains(out.String(), `"session_id":"`+sid+`"`) || sid == "" {
		t.Errorf("run span session %q not the run's: %s", sid, out.String())
	}
	// A `go build` binary (as this test's) has no ldflags stamp: the
	// version is the stamp `awl --version` prints.
	if v := attr(r.Attributes, "awl.version").GetStringValue(); v == "" || v != currentStamp().Version {
		t.Errorf("run span awl.version %q, want %q", v, currentStamp().Version)
	}
	if attr(r.Attributes, "awl.exit_code").GetIntValue() != 0 || attr(r.Attributes, "awl.reason").GetStringValue() != "completed" ||
		attr(r.Attributes, "gen_ai.operation.name").GetStringValue() != "invoke_agent" || attr(r.Attributes, "awl.turns").GetIntValue() != 2 {
		t.Errorf("run span attributes: %v", r.Attributes)
	}
	chats := byName["chat claude-sonnet-5-5"]
	if len(chats) != 2 {
		t.Fatalf("chat spans: %v", byName)
	}
	c1 := chats[0]
	for k, want := range map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-sonnet-5-5",
		"gen_ai.response.model": "claude-test-1", "gen_ai.usage.input_tokens": int64(100), "gen_ai.usage.output_tokens": int64(20),
		"gen_ai.usage.cache_read.input_tokens": int64(0),
	} {
		v := attr(c1.Attributes, k)
		switch w := want.(type) {
		case string:
			if v.GetStringValue() != w {
				t.Errorf("chat %s = %v, want %q", k, v, w)
			}
		case int64:
			if v.GetIntValue() != w {
				t.Errorf("chat %s = %v, want %d", k, v, w)
			}
		}
	}
	if c1.Kind != tracepb.Span_SPAN_KIND_CLIENT || len(c1.Events) != 1 || c1.Events[0].Name != "retry" ||
		attr(c1.Events[0].Attributes, "http.response.status_code").GetIntValue() != 529 {
		t.Errorf("first chat: kind %v, events %v; want a client span with the retry", c1.Kind, c1.Events)
	}
	tools := byName["execute_tool bash"]
	if len(tools) != 1 || attr(tools[0].Attributes, "gen_ai.tool.call.id").GetStringValue() != "call_1" ||
		attr(tools[0].Attributes, "awl.tool.exit_code").GetIntValue() != 0 || attr(tools[0].Attributes, "awl.tool.denied") == nil {
		t.Fatalf("tool span: %v", tools)
	}
	for _, s := range []*tracepb.Span{c1, chats[1], tools[0]} {
		if !bytes.Equal(s.ParentSpanId, r.SpanId) {
			t.Errorf("span %s is not a child of the run span", s.Name)
		}
	}
	if !(c1.EndTimeUnixNano <= tools[0].StartTimeUnixNano && tools[0].EndTimeUnixNano <= chats[1].StartTimeUnixNano) {
		t.Errorf("spans out of order: chat ..%d, tool %d..%d, chat %d..", c1.EndTimeUnixNano, tools[0].StartTimeUnixNano, tools[0].EndTimeUnixNano, chats[1].StartTimeUnixNano)
	}
	res0 := req.ResourceSpans[0].Resource.Attributes
	if attr(res0, "service.name").GetStringValue() != "ci-agent" || attr(res0, "deployment.environment").GetStringValue() != "ci" || attr(res0, "vcs.ref").GetStringValue() != "main,x" {
		t.Errorf("resource: %v", res0)
	}
	if rcv.headers[0].Get("X-Collector-Token") != "tok-SECRET-4242" {
		t.Errorf("the OTLP headers were not sent")
	}
	// The tool's process ran in the trace, as a child of its own span.
	wantTP := "tp=00-0af7651916cd43dd8448eb211c80319c-" + hex.EncodeToString(tools[0].SpanId) + "-01"
	reqs := srv.Requests()
	if !strings.Contains(string(reqs[len(reqs)-1].Body), wantTP) {
		t.Errorf("the tool's TRACEPARENT is not its span's %s", wantTP)
	}
	// Nothing private by default; no credential anywhere.
	wire, _ := proto.Marshal(req)
	for _, private := range []string{"private-prompt", "private-tool-output", "private-answer", "echo"} {
		if bytes.Contains(wire, []byte(private)) {
			t.Errorf("the trace holds %q without content capture", private)
		}
	}
	sess, _ := filepath.Glob(filepath.Join(dir, "sessions", "*", "*.jsonl"))
	for _, p := range append(sess, "") {
		var data []byte
		if p == "" {
			data = append(append(out.Bytes(), errb.Bytes()...), wire...)
		} else {
			data, _ = os.ReadFile(p)
		}
		if bytes.Contains(data, []byte("tok-SECRET-4242")) || bytes.Contains(data, []byte(sentinelKey)) {
			t.Errorf("%s holds a secret", cmpOr(p, "the output or trace"))
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestTraceCapturesContentRedacted: with content capture on, prompts, the
// answer and tool arguments and results are in the trace, secrets
// redacted.
func TestTraceCapturesContentRedacted(t *testing.T) {
	rcv := newOTLPReceiver(t)
	srv, _ := traceEnv(t, rcv.URL)
	t.Setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
	t.Setenv("MY_TOKEN", "hunter2-hunter2-hunter2")
	srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{InputTokens: 1, OutputTokens: 1,
		Calls: []providertest.Call{{ID: "call_1", Name: "bash", Input: `{"command":"echo visible-output"}`}}}))
	srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{InputTokens: 1, OutputTokens: 1, Text: "the answer"}))
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"run", "--no-stdin", "--redact-env", "MY_TOKEN", "use hunter2-hunter2-hunter2 please"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	_, req := rcv.spans(t)
	wire, _ := proto.Marshal(req)
	for _, want := range []string{"[redacted:MY_TOKEN] please", "the answer", "echo visible-output", "visible-output\n"} {
		if !bytes.Contains(wire, []byte(want)) {
			t.Errorf("the trace lacks %q", want)
		}
	}
	if bytes.Contains(wire, []byte("hunter2")) || bytes.Contains(wire, []byte("tok-SECRET-4242")) {
		t.Error("a secret reached the trace")
	}
}

// TestTraceNeverInTheWay: a collector that never answers costs the
// export's bounded timeout at exit and a warning, never the exit code; a
// failed run is traced with its exit code; tracing off sends nothing and
// sets no TRACEPARENT. The collector here takes the connection and holds
// it, answering nothing, until the test ends: the run can only have ended
// because the export gave up at its deadline, which the warning names (the
// deadline itself, no later than 1 s from the request: the trace package's
// TestExportBounded). No wall time is measured.
func TestTraceNeverInTheWay(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	release := make(chan struct{})
	defer close(release)
	go func() { // accepts, reads, never answers, lets go at the end
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case accepted <- struct{}{}:
			default:
			}
			go io.Copy(io.Discard, c)
			go func() { <-release; c.Close() }()
		}
	}()
	srv, _ := traceEnv(t, "http://"+ln.Addr().String())
	srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{InputTokens: 1, OutputTokens: 1, Text: "ok"}))
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"run", "--no-stdin", "hi"}, nil, &out, &errb)
	if code != 0 || strings.TrimSpace(out.String()) != "ok" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out.String(), errb.String())
	}
	select {
	case <-accepted:
	default:
		t.Fatalf("the collector never saw the export: stderr %s", errb.String())
	}
	if !strings.Contains(errb.String(), "awl: warning: traces not exported: export to http://"+ln.Addr().String()+"/v1/traces: no answer within 1s") {
		t.Fatalf("stderr %q: want the warning that the export gave up at its 1s deadline", errb.String())
	}

	// A failed run (no key) is a trace too, with its exit code.
	rcv := newOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", rcv.URL+"/v1/traces")
	t.Setenv("ANTHROPIC_API_KEY", "")
	errb.Reset()
	if code := Main(context.Background(), []string{"run", "--no-stdin", "hi"}, nil, &out, &errb); code != 4 {
		t.Fatalf("exit %d, want 4: %s", code, errb.String())
	}
	spans, _ := rcv.spans(t)
	if len(spans) != 1 || attr(spans[0].Attributes, "awl.exit_code").GetIntValue() != 4 || spans[0].Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Fatalf("failed run spans: %v", spans)
	}

	// Off: OTEL_SDK_DISABLED wins, nothing is sent.
	t.Setenv("OTEL_SDK_DISABLED", "true")
	t.Setenv("TRACEPARENT", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	t.Setenv("ANTHROPIC_API_KEY", sentinelKey)
	srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{InputTokens: 1, OutputTokens: 1, Text: "ok"}))
	if code := Main(context.Background(), []string{"run", "--no-stdin", "hi"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d", code)
	}
	rcv.mu.Lock()
	n := len(rcv.reqs)
	rcv.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d exports with OTEL_SDK_DISABLED=true, want none more", n-1)
	}
	if tp := os.Getenv("TRACEPARENT"); tp != "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" {
		// t.Setenv restores it; an untraced run leaves it as it was.
		t.Errorf("TRACEPARENT changed by an untraced run: %s", tp)
	}
}

// TestTraceToolAndCheckParents: each process a tool call or a --check
// starts gets a TRACEPARENT naming that call's or that check attempt's own
// span (a traced build step inside it joins the trace there), not the run
// TestTraceOfAFailureBeforeTheRun: as docs/tracing.md says, a run that
// fails in its setup (an unknown tool) is a trace of one span with exit 2,
// and a command line that does not parse sends none.
func TestTraceOfAFailureBeforeTheRun(t *testing.T) {
	for _, c := range []struct {
		args  []string
		spans int
	}{
		{[]string{"--tools", "bash,nosuch"}, 1},
		{[]string{"--no-such-flag"}, 0},
		{[]string{"--max-turns", "x"}, 0},
	} {
		rcv := newOTLPReceiver(t)
		traceEnv(t, rcv.URL)
		var out, errb bytes.Buffer
		if code := Main(context.Background(), append(append([]string{"run", "--no-stdin"}, c.args...), "hi"), nil, &out, &errb); code != 2 {
			t.Fatalf("%v: exit %d, want 2: %s", c.args, code, errb.String())
		}
		rcv.mu.Lock()
		n := len(rcv.reqs)
		rcv.mu.Unlock()
		if c.spans == 0 && n != 0 {
			t.Errorf("%v: %d exports; a command line that does not parse sends none", c.args, n)
		}
		if c.spans > 0 {
			spans, _ := rcv.spans(t)
			if len(spans) != c.spans || attr(spans[0].Attributes, "awl.exit_code").GetIntValue() != 2 {
				t.Errorf("%v: spans %v, want one run span with exit 2", c.args, spans)
			}
		}
	}
}

// span; two calls, two spans, two parents.
func TestTraceToolAndCheckParents(t *testing.T) {
	rcv := newOTLPReceiver(t)
	srv, dir := traceEnv(t, rcv.URL)
	srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{InputTokens: 1, OutputTokens: 1,
		Calls: []providertest.Call{{ID: "call_a", Name: "bash", Input: `{"command":"echo \"$TRACEPARENT\" > a.tp"}`}}}))
	srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{InputTokens: 1, OutputTokens: 1,
		Calls: []providertest.Call{{ID: "call_b", Name: "bash", Input: `{"command":"echo \"$TRACEPARENT\" > b.tp"}`}}}))
	srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{InputTokens: 1, OutputTokens: 1, Text: "done"}))
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"run", "--no-stdin", "--check", `echo "$TRACEPARENT" > check.tp`, "go"}, nil, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	spans, _ := rcv.spans(t)
	byCall := map[string]*tracepb.Span{}
	var root *tracepb.Span
	for _, s := range spans {
		switch s.Name {
		case "invoke_agent awl":
			root = s
		case "execute_tool bash":
			byCall[attr(s.Attributes, "gen_ai.tool.call.id").GetStringValue()] = s
		case "awl.check":
			byCall["check"] = s
		}
	}
	if root == nil || len(byCall) != 3 {
		t.Fatalf("spans %v", spans)
	}
	for file, key := range map[string]string{"a.tp": "call_a", "b.tp": "call_b", "check.tp": "check"} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		s := byCall[key]
		want := "00-0af7651916cd43dd8448eb211c80319c-" + hex.EncodeToString(s.SpanId) + "-01"
		if got := strings.TrimSpace(string(data)); got != want {
			t.Errorf("%s's TRACEPARENT %s, want its span's %s (the run span is %x)", key, got, want, root.SpanId)
		}
		if !bytes.Equal(s.ParentSpanId, root.SpanId) {
			t.Errorf("span %s is not a child of the run span", key)
		}
	}
	if bytes.Equal(byCall["call_a"].SpanId, byCall["call_b"].SpanId) {
		t.Error("two tool calls share a span id")
	}
}
