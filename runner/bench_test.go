package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/tool"
	"github.com/awlrun/awl/session"
)

// timed wraps a tool and adds up the time spent inside it.
type timed struct {
	tool.Tool
	spent *atomic.Int64
}

func (t timed) Run(ctx context.Context, in json.RawMessage) tool.Result {
	start := time.Now()
	r := t.Tool.Run(ctx, in)
	t.spent.Add(int64(time.Since(start)))
	return r
}

// noop is a tool that does nothing, to measure awl's own overhead.
type noop struct{}

func (noop) Name() string                                     { return "noop" }
func (noop) Description() string                              { return "does nothing" }
func (noop) Schema() json.RawMessage                          { return json.RawMessage(`{"type":"object","properties":{}}`) }
func (noop) ReadOnly() bool                                   { return false }
func (noop) Run(context.Context, json.RawMessage) tool.Result { return tool.Result{Content: "ok"} }

// BenchmarkToolLoop50 measures awl's own overhead per turn in a 50-turn tool
// loop against the fake provider with zero latency: each turn projects the
// session into a request, streams the answer over loopback HTTP, appends
// and fsyncs the assistant entry, runs the tool and appends its result.
// ms/turn-overhead excludes the time spent inside the tool. noop-window
// is noop with a context window known, so each turn also estimates the
// request's size against the thresholds (none is reached).
func BenchmarkToolLoop50(b *testing.B) {
	for _, name := range []string{"noop", "bash"} {
		b.Run(name, func(b *testing.B) { benchLoop(b, name, runner.Window{}) })
	}
	b.Run("noop-window", func(b *testing.B) { benchLoop(b, "noop", runner.Window{Tokens: 200000}) })
}

func benchLoop(b *testing.B, toolName string, window runner.Window) {
	b.ReportAllocs()
	const turns = 50
	work := b.TempDir()
	store := &session.Store{Dir: filepath.Join(b.TempDir(), "sessions")}
	srv := providertest.New()
	defer srv.Close()
	prov, err := provider.New("anthropic", provider.Options{APIKey: "k", BaseURL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	var spent atomic.Int64
	var tl tool.Tool = noop{}
	input := `{}`
	if toolName == "bash" {
		tl = tool.Builtins(tool.Env{Dir: work})[0]
		input = `{"command":"true"}`
	}
	tools := []tool.Tool{timed{tl, &spent}}
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for j := 0; j < turns-1; j++ {
			srv.Enqueue(providertest.ToolCall("anthropic", fmt.Sprintf("c%d", j), tl.Name(), input))
		}
		srv.Enqueue(providertest.Text("anthropic", "done"))
		spent.Store(0)
		b.StartTimer()
		start := time.Now()
		res := runner.Run(context.Background(), runner.Config{
			Store: store, Cwd: work, Prompt: "loop", Provider: prov, Model: "m",
			Tools: tools, Events: event.NewEmitter(nil, nil), Getenv: func(string) string { return "" },
			Window: window,
		})
		total += time.Since(start) - time.Duration(spent.Load())
		if res.Err != nil || res.Turns != turns {
			b.Fatalf("run: turns %d, err %v", res.Turns, res.Err)
		}
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N*turns), "ms/turn-overhead")
}
