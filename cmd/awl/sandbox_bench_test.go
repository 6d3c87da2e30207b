package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/awlrun/awl/runner/sandbox"
	"github.com/awlrun/awl/runner/tool"
)

// BenchmarkBashSandbox runs one bash tool call of `true` unconfined and
// one confined (workspace-write), in turn within each iteration so that
// both see the same load, the order alternating from one iteration to the
// next. It reports the mean wall time of each and the
// difference, the sandbox's cost per call (target: ≤ 1.5 ms).
func BenchmarkBashSandbox(b *testing.B) {
	input := json.RawMessage(`{"command":"true"}`)
	dir := b.TempDir()
	sb, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: dir})
	if err != nil {
		b.Skip(err)
	}
	defer sb.Close()
	if !st.Full() {
		b.Skipf("not enforced: %+v", st)
	}
	off := tool.Builtins(tool.Env{Dir: dir})[0]
	confined := tool.Builtins(tool.Env{Dir: dir, Confine: sb})[0]
	run := func(bash tool.Tool) time.Duration {
		t0 := time.Now()
		if res := bash.Run(context.Background(), input); res.IsError {
			b.Fatal(res.Content)
		}
		return time.Since(t0)
	}
	// The first confined call starts the sandbox's namespaces, once a
	// run: leave it out.
	run(confined)
	var tOff, tOn time.Duration
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			tOff += run(off)
			tOn += run(confined)
		} else {
			tOn += run(confined)
			tOff += run(off)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(tOff), "off-ms/op")
	b.ReportMetric(ms(tOn), "sandboxed-ms/op")
	b.ReportMetric(ms(tOn-tOff), "added-ms/op")
}
