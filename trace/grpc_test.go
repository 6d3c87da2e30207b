package trace

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// traceService is a gRPC OTLP trace receiver (grpc-go's server, the
// collector's service definition).
type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	mu   sync.Mutex
	reqs []*coltracepb.ExportTraceServiceRequest
	md   []metadata.MD
	fail error
}

func (s *traceService) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	md, _ := metadata.FromIncomingContext(ctx)
	s.reqs, s.md = append(s.reqs, req), append(s.md, md)
	if s.fail != nil {
		return nil, s.fail
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func grpcReceiver(t *testing.T) (*traceService, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	svc := &traceService{}
	coltracepb.RegisterTraceServiceServer(srv, svc)
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	return svc, "http://" + ln.Addr().String()
}

// TestExportGRPC: with OTEL_EXPORTER_OTLP_PROTOCOL=grpc the spans reach a
// real gRPC receiver (cleartext HTTP/2), with the OTLP headers as
// metadata; a receiver's error status is an export error naming it; a
// receiver that is not there costs at most the timeout.
func TestExportGRPC(t *testing.T) {
	svc, endpoint := grpcReceiver(t)
	cfg, warn := FromEnv(env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc",
		"OTEL_EXPORTER_OTLP_HEADERS", "x-token=t%3D1", "OTEL_EXPORTER_OTLP_TIMEOUT", "60000"))
	if cfg == nil || !cfg.GRPC {
		t.Fatalf("grpc not configured: %q", warn)
	}
	b := NewBuilder(cfg, time.Now(), "v1", nil)
	b.Write([]byte(`{"type":"session","session_id":"s1","provider":"anthropic","model":"m"}` + "\n" +
		`{"type":"result","session_id":"s1","exit_code":0,"reason":"completed"}` + "\n"))
	if err := cfg.Export(context.Background(), b.Request()); err != nil {
		t.Fatal(err)
	}
	svc.mu.Lock()
	if len(svc.reqs) != 1 || svc.reqs[0].ResourceSpans[0].ScopeSpans[0].Spans[0].Name != "invoke_agent awl" {
		t.Fatalf("received %v", svc.reqs)
	}
	if got := svc.md[0].Get("x-token"); len(got) != 1 || got[0] != "t=1" {
		t.Errorf("metadata x-token %v", got)
	}
	svc.fail = status.Error(codes.Unavailable, "collector is full")
	svc.mu.Unlock()
	err := cfg.Export(context.Background(), b.Request())
	if err == nil || !strings.Contains(err.Error(), "gRPC status 14: collector is full") {
		t.Fatalf("a refused export: %v", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accepts, never answers
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	silent, _ := FromEnv(env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ln.Addr().String(), "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"))
	silent.Timeout = 100 * time.Millisecond
	if err := silent.Export(context.Background(), b.Request()); err == nil || !strings.Contains(err.Error(), "no answer within") {
		t.Fatalf("a silent receiver: %v", err)
	}
}
