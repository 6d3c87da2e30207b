package main

import (
	"context"
	"encoding/json"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/awlrun/awl/runner/sandbox"
	"github.com/awlrun/awl/runner/tool"
)

// BenchmarkBashSandbox runs one bash tool call of `true` unconfined and
// one confined (workspace-write), in turn within each iteration so that
// both see the same load, the order alternating from one iteration to the
// next. It reports the mean wall time of each and the
// difference, the sandbox's cost per call (target: ≤ 1.5 ms), and the
// median of the differences within an iteration (median-added-ms/op),
// which a loaded machine's slow outliers move far less than the means,
// and the CPU time the sandbox adds (awl's and the commands', user and
// system: added-cpu-ms/op), which waiting for a busy CPU does not grow.
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
	var cpuOff, cpuOn time.Duration
	run := func(bash tool.Tool) time.Duration {
		t0, c0 := time.Now(), cpuTime()
		if res := bash.Run(context.Background(), input); res.IsError {
			b.Fatal(res.Content)
		}
		d := cpuTime() - c0
		if bash == confined {
			cpuOn += d
		} else {
			cpuOff += d
		}
		return time.Since(t0)
	}
	// The first confined call starts the sandbox's namespaces, once a
	// run: leave it out.
	run(confined)
	cpuOn = 0
	var tOff, tOn time.Duration
	var diffs []time.Duration
	for i := 0; b.Loop(); i++ {
		var dOff, dOn time.Duration
		if i%2 == 0 {
			dOff = run(off)
			dOn = run(confined)
		} else {
			dOn = run(confined)
			dOff = run(off)
		}
		tOff += dOff
		tOn += dOn
		diffs = append(diffs, dOn-dOff)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(tOff), "off-ms/op")
	b.ReportMetric(ms(tOn), "sandboxed-ms/op")
	b.ReportMetric(ms(tOn-tOff), "added-ms/op")
	b.ReportMetric(ms(cpuOn-cpuOff), "added-cpu-ms/op")
	slices.Sort(diffs)
	b.ReportMetric(float64(diffs[len(diffs)/2].Microseconds())/1000, "median-added-ms/op")
}

// cpuTime is the CPU time, user and system, of this process and of its
// children that were waited for.
func cpuTime() time.Duration {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano())
}
