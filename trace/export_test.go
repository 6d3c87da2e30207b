package trace

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// stalled is a network on which the collector never answers: each round
// trip records the deadline its request's context carries and returns
// only once that context ends.
type stalled struct {
	deadline time.Time
	slack    time.Duration // how far the deadline lies beyond Timeout from the round trip's start
	ended    error
}

func (s *stalled) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	now := time.Now()
	dl, ok := ctx.Deadline()
	if !ok {
		// No deadline: nothing would end the export but the collector.
		// Fail as a refused export would, rather than hang the test.
		s.ended = context.Canceled
		return nil, context.Canceled
	}
	s.deadline, s.slack = dl, dl.Sub(now)
	<-ctx.Done()
	s.ended = ctx.Err()
	return nil, ctx.Err()
}

// TestExportBounded: a collector that never answers cannot hold awl's exit
// beyond Config.Timeout: the export's request carries a deadline no later
// than Timeout from when it was sent (time passing only brings it nearer,
// so a bound of Timeout never fails this, while a longer one does), the
// export returns once that deadline passed and not before (the network
// here answers nothing, ever), and the error names the bound. Both OTLP
// transports, over HTTP/1.1 and gRPC.
func TestExportBounded(t *testing.T) {
	for _, grpc := range []bool{false, true} {
		proto := "http/protobuf"
		if grpc {
			proto = "grpc"
		}
		t.Run(proto, func(t *testing.T) {
			cfg, warn := FromEnv(env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL", proto))
			if cfg == nil {
				t.Fatal(warn)
			}
			if cfg.Timeout != time.Second {
				t.Fatalf("Timeout %s, want the documented 1 s", cfg.Timeout)
			}
			net := &stalled{}
			cfg.transport = net
			b := NewBuilder(cfg, time.Now(), "v1", nil)
			b.Write([]byte(`{"type":"session","session_id":"s1","provider":"anthropic","model":"m"}` + "\n" +
				`{"type":"result","session_id":"s1","exit_code":0,"reason":"completed"}` + "\n"))
			err := cfg.Export(context.Background(), b.Request())
			if net.deadline.IsZero() {
				t.Fatalf("the export's request has no deadline (err %v): a silent collector would hold awl's exit for good", err)
			}
			if net.slack > cfg.Timeout {
				t.Errorf("the export's deadline is %s after its request, beyond the %s bound", net.slack, cfg.Timeout)
			}
			if net.ended != context.DeadlineExceeded {
				t.Errorf("the export's request ended with %v, want its deadline", net.ended)
			}
			if err == nil || !strings.Contains(err.Error(), "no answer within 1s") {
				t.Errorf("export error %v, want one naming the 1s bound", err)
			}
		})
	}
}
