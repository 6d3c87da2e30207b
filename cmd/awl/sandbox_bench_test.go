package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/awlrun/awl/runner/sandbox"
	"github.com/awlrun/awl/runner/tool"
)

// BenchmarkBashSandbox measures one bash tool call of `true`, unconfined
// and through the sandbox helper of the awl binary built as released
// (CGO_ENABLED=0, static): the difference is the sandbox's cost per call
// (target: < 3 ms).
func BenchmarkBashSandbox(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "awl")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	input := json.RawMessage(`{"command":"true"}`)
	for _, mode := range []sandbox.Mode{sandbox.Off, sandbox.WorkspaceWrite} {
		b.Run(string(mode), func(b *testing.B) {
			dir := b.TempDir()
			sb, st, err := sandbox.New(sandbox.Options{Mode: mode, Cwd: dir, Exe: bin})
			if err != nil {
				b.Skip(err)
			}
			defer sb.Close()
			if mode != sandbox.Off && !st.Enforced {
				b.Fatalf("not enforced: %+v", st)
			}
			bash := tool.Builtins(tool.Env{Dir: dir, Confine: confiner(sb)})[0]
			before := childCPU()
			for b.Loop() {
				if res := bash.Run(context.Background(), input); res.IsError {
					b.Fatal(res.Content)
				}
			}
			// CPU time of the processes started, which unlike wall time
			// hardly depends on the load of a shared machine.
			b.ReportMetric(float64((childCPU()-before).Microseconds())/1000/float64(b.N), "child-cpu-ms/op")
		})
	}
}

// childCPU is the user and system time of the waited-for child processes.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
