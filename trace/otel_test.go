package trace

import (
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env      func(string) string
		endpoint string // "" means off
		warn     string
	}{
		{env(), "", ""},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/"), "http://c:4318/v1/traces", ""},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://t/x"), "https://t/x", ""},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_SDK_DISABLED", "TRUE"), "", ""},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_TRACES_EXPORTER", "none"), "", ""},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_TRACES_EXPORTER", "zipkin"), "", "otlp only"},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317/", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), "http://c:4317/", ""},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"), "http://c:4318/v1/traces", ""},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"), "", "http/protobuf or grpc"},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "c:4318"), "", "not an http or https URL"},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "  "), "", ""},
	} {
		cfg, warn := FromEnv(tc.env)
		got := ""
		if cfg != nil {
			got = cfg.Endpoint
		}
		if got != tc.endpoint || (tc.warn == "") != (warn == "") || !strings.Contains(warn, tc.warn) {
			t.Errorf("endpoint %q warn %q; want %q, %q", got, warn, tc.endpoint, tc.warn)
		}
	}
	cfg, _ := FromEnv(env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c", "OTEL_EXPORTER_OTLP_HEADERS", "a=1,b=x%3Dy, bad ,=z",
		"OTEL_RESOURCE_ATTRIBUTES", "service.name=fromattrs,k=v", "TRACEPARENT", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"))
	if cfg.Headers["a"] != "1" || cfg.Headers["b"] != "x=y" || len(cfg.Headers) != 2 {
		t.Errorf("headers %v", cfg.Headers)
	}
	var service string
	for _, kv := range cfg.Resource {
		if kv.Key == "service.name" {
			service = kv.Value.(string)
		}
	}
	if service != "fromattrs" {
		t.Errorf("service.name %q, want the resource attribute's when OTEL_SERVICE_NAME is unset", service)
	}
	if hex.EncodeToString(cfg.TraceID[:]) != "0af7651916cd43dd8448eb211c80319c" || hex.EncodeToString(cfg.Parent[:]) != "b7ad6b7169203331" {
		t.Errorf("parent context %x %x", cfg.TraceID, cfg.Parent)
	}
	if tp := cfg.Traceparent(); !strings.HasPrefix(tp, "00-0af7651916cd43dd8448eb211c80319c-") || strings.Contains(tp, "b7ad6b7169203331") {
		t.Errorf("own traceparent %s", tp)
	}
}

func TestParseTraceparent(t *testing.T) {
	good := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	if _, _, ok := ParseTraceparent(good); !ok {
		t.Fatal("valid traceparent refused")
	}
	for _, bad := range []string{"", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331", "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"00-00000000000000000000000000000000-b7ad6b7169203331-01", "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
		"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-x",
		"00-0af7651916cd43dd8448eb211c80319z-b7ad6b7169203331-01"} {
		if _, _, ok := ParseTraceparent(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, _, ok := ParseTraceparent("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-later"); !ok {
		t.Error("a later version with more fields is read as 00")
	}
}

// TestEncodeDecodes: what Encode writes is a valid ExportTraceServiceRequest
// for the official definitions, every field where it belongs.
func TestEncodeDecodes(t *testing.T) {
	start := time.Unix(1700000000, 123456789)
	s := Span{Name: "chat m", Kind: KindClient, Start: start, End: start.Add(time.Second), TraceState: "a=b",
		Attrs:  []KV{Str("s", "v"), Int("i", -3), Float("f", 1.5), Bool("b", true), {"arr", []string{"x", "y"}}},
		Events: []Event{{Time: start, Name: "retry", Attrs: []KV{Int("n", 1)}}}, Status: StatusError, StatusMsg: "boom"}
	s.TraceID[0], s.SpanID[0], s.Parent[0] = 1, 2, 3
	body := Encode([]KV{Str("service.name", "awl")}, "scope", "v1", []Span{s})
	var m coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	got := m.ResourceSpans[0].ScopeSpans[0].Spans[0]
	a := got.Attributes
	if got.Name != "chat m" || got.Kind != 3 || got.StartTimeUnixNano != uint64(start.UnixNano()) || got.TraceId[0] != 1 || got.SpanId[0] != 2 || got.ParentSpanId[0] != 3 ||
		got.TraceState != "a=b" || got.Flags != 1 || got.Status.Message != "boom" || got.Status.Code != 2 || len(got.Events) != 1 || got.Events[0].Attributes[0].Value.GetIntValue() != 1 ||
		a[0].Value.GetStringValue() != "v" || a[1].Value.GetIntValue() != -3 || a[2].Value.GetDoubleValue() != 1.5 || !a[3].Value.GetBoolValue() ||
		a[4].Value.GetArrayValue().Values[1].GetStringValue() != "y" {
		t.Fatalf("decoded %v", got)
	}
	if m.ResourceSpans[0].Resource.Attributes[0].Key != "service.name" || m.ResourceSpans[0].ScopeSpans[0].Scope.Version != "v1" {
		t.Fatalf("resource or scope: %v", m.ResourceSpans[0])
	}
}

// TestBuilderCompactionAndChecks: a compaction is a span of its own,
// timed back from its duration, holding the retries of its summary
// request; each check attempt is a span, an error when it failed; a
// retry of a request that then failed for good is an event on that
// request's span; every span is a child of the run span.
func TestBuilderCompactionAndChecks(t *testing.T) {
	cfg, _ := FromEnv(env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1"))
	t0 := time.Unix(1700000000, 0)
	now := t0
	b := NewBuilder(cfg, t0, "v", nil)
	b.SetClock(func() time.Time { return now })
	feed := func(at time.Duration, line string) {
		now = t0.Add(at)
		b.Write([]byte(line + "\n"))
	}
	feed(0, `{"type":"session","session_id":"s1","provider":"anthropic","model":"m"}`)
	feed(5*time.Second, `{"type":"retry","attempt":1,"wait_ms":100,"status":529,"error":"busy"}`)
	feed(10*time.Second, `{"type":"compaction","reason":"threshold","tokens_before":9000,"tokens_after":900,"duration_ms":8000}`)
	feed(11*time.Second, `{"type":"check_start","cmd":"make test","attempt":1}`)
	feed(12*time.Second, `{"type":"check_end","cmd":"make test","attempt":1,"exit_code":2}`)
	if tp := b.CheckTraceparent("make test", 2); tp != "" {
		t.Errorf("a check not started has traceparent %s", tp)
	}
	feed(13*time.Second, `{"type":"check_start","cmd":"make test","attempt":2}`)
	tp := b.CheckTraceparent("make test", 2)
	feed(14*time.Second, `{"type":"check_end","cmd":"make test","attempt":2,"exit_code":0}`)
	feed(15*time.Second, `{"type":"retry","attempt":1,"wait_ms":100,"status":500,"error":"oops"}`)
	feed(16*time.Second, `{"type":"result","session_id":"s1","exit_code":5,"reason":"provider_error","error":"gone"}`)
	spans := b.Spans()
	if len(spans) != 5 {
		t.Fatalf("%d spans, want compaction, 2 checks, the failed chat, the run", len(spans))
	}
	root := spans[len(spans)-1]
	for _, s := range spans[:len(spans)-1] {
		if s.Parent != root.SpanID || s.TraceID != root.TraceID {
			t.Errorf("span %s is not the run span's child", s.Name)
		}
	}
	c := spans[0]
	if c.Name != "awl.compaction" || !c.Start.Equal(t0.Add(2*time.Second)) || !c.End.Equal(t0.Add(10*time.Second)) ||
		len(c.Events) != 1 || c.Events[0].Name != "retry" {
		t.Errorf("compaction span %+v", c)
	}
	c1, c2 := spans[1], spans[2]
	if c1.Name != "awl.check" || c1.Status != StatusError || c2.Status == StatusError || !c2.End.Equal(t0.Add(14*time.Second)) {
		t.Errorf("check spans %+v %+v", c1, c2)
	}
	if want := "00-" + hex.EncodeToString(cfg.TraceID[:]) + "-" + hex.EncodeToString(c2.SpanID[:]) + "-01"; tp != want {
		t.Errorf("check traceparent %s, want %s", tp, want)
	}
	chat := spans[3]
	if chat.Name != "chat m" || chat.Status != StatusError || len(chat.Events) != 1 {
		t.Errorf("failed chat span %+v", chat)
	}
	if root.Status != StatusError || root.Parent != ([8]byte{}) {
		t.Errorf("run span %+v", root)
	}
}

// TestBuilderProviderFamily: gen_ai.provider.name is the provider's family
// as the caller maps it (the provider registry: openai-chat is openai),
// and the name itself without a mapping.
func TestBuilderProviderFamily(t *testing.T) {
	cfg, _ := FromEnv(env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1"))
	for _, tc := range []struct {
		family func(string) string
		want   string
	}{
		{func(p string) string { return map[string]string{"openai-chat": "openai"}[p] }, "openai"},
		{nil, "openai-chat"},
	} {
		b := NewBuilder(cfg, time.Unix(1700000000, 0), "v", nil)
		b.SetProviderFamily(tc.family)
		b.Write([]byte(`{"type":"session","session_id":"s1","provider":"openai-chat","model":"m"}` + "\n" +
			`{"type":"result","session_id":"s1","exit_code":0,"reason":"completed"}` + "\n"))
		var got []string
		for _, s := range b.Spans() {
			for _, a := range s.Attrs {
				if a.Key == "gen_ai.provider.name" {
					got = append(got, a.Value.(string))
				}
			}
		}
		if len(got) == 0 || slices.ContainsFunc(got, func(v string) bool { return v != tc.want }) {
			t.Errorf("gen_ai.provider.name %v, want %q", got, tc.want)
		}
	}
}
