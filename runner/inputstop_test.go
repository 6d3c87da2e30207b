package runner_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/event"
)

// stopInput is an Input with no prompts of its own that records what the
// events held when the run stopped it.
type stopInput struct {
	events *testenv.Buffer
	mu     sync.Mutex
	stops  []string // the events written when Stop was called
}

func (in *stopInput) Start(string) {}

func (in *stopInput) Next(context.Context) ([]conv.Block, bool, error) { return nil, false, nil }

func (in *stopInput) Turn(func()) {}

func (in *stopInput) Stop() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.stops = append(in.stops, in.events.String())
}

// TestInputStoppedBeforeResult: the run stops its input (once) before it
// emits the result event, so that nothing the input reads later (a
// control or error event of --input ndjson) can follow the result, which
// the events document promises is the last line. It holds for a run that
// ends well and for one that fails.
func TestInputStoppedBeforeResult(t *testing.T) {
	for _, fail := range []bool{false, true} {
		e := newForkEnv(t, "anthropic")
		if fail {
			e.srv.Enqueue(providertest.Response{Status: 400, Body: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`)})
		} else {
			e.srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{Text: "ok", InputTokens: 10, OutputTokens: 2}))
		}
		var events testenv.Buffer
		in := &stopInput{events: &events}
		cfg := e.config("hi")
		cfg.Events = event.NewEmitter(&events, nil)
		cfg.Input = in
		res := runner.Run(context.Background(), cfg)
		if (res.Err != nil) != fail {
			t.Fatalf("fail=%v: the run's error: %v", fail, res.Err)
		}
		if !strings.Contains(events.String(), `"type":"result"`) {
			t.Fatalf("fail=%v: no result event in %s", fail, events.String())
		}
		if len(in.stops) != 1 {
			t.Fatalf("fail=%v: Stop called %d times, want once before the result", fail, len(in.stops))
		}
		if strings.Contains(in.stops[0], `"type":"result"`) {
			t.Errorf("fail=%v: the input was stopped after the result event:\n%s", fail, in.stops[0])
		}
	}
}
