package main

import (
	"context"
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"github.com/awlrun/awl/runner/sandbox"
	"github.com/awlrun/awl/runner/tool"
)

// BenchmarkBashSandbox measures one bash tool call of `true`, unconfined
// and confined: the difference is the sandbox's cost per call (target:
// < 3 ms).
func BenchmarkBashSandbox(b *testing.B) {
	input := json.RawMessage(`{"command":"true"}`)
	for _, mode := range []sandbox.Mode{sandbox.Off, sandbox.WorkspaceWrite} {
		b.Run(string(mode), func(b *testing.B) {
			dir := b.TempDir()
			sb, st, err := sandbox.New(sandbox.Options{Mode: mode, Cwd: dir})
			if err != nil {
				b.Skip(err)
			}
			defer sb.Close()
			if mode != sandbox.Off && !st.Enforced {
				b.Fatalf("not enforced: %+v", st)
			}
			bash := tool.Builtins(tool.Env{Dir: dir, Confine: confiner(sb)})[0]
			before, selfBefore := cpuTime(syscall.RUSAGE_CHILDREN), cpuTime(syscall.RUSAGE_SELF)
			for b.Loop() {
				if res := bash.Run(context.Background(), input); res.IsError {
					b.Fatal(res.Content)
				}
			}
			// CPU time of the processes started, and of awl's own
			// process (where a confined command's thread runs), which
			// unlike wall time hardly depend on the load of a shared
			// machine.
			b.ReportMetric(float64((cpuTime(syscall.RUSAGE_CHILDREN)-before).Microseconds())/1000/float64(b.N), "child-cpu-ms/op")
			b.ReportMetric(float64((cpuTime(syscall.RUSAGE_SELF)-selfBefore).Microseconds())/1000/float64(b.N), "self-cpu-ms/op")
		})
	}
}

// cpuTime is the user and system time of this process (RUSAGE_SELF) or of
// its waited-for children (RUSAGE_CHILDREN).
func cpuTime(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
