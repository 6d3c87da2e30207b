package peakrss

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// TestPeakIsTheChilds: a small program measures small, though this test
// binary is larger (ru_maxrss would say this binary's size), and a program
// that holds 40 MB measures at least that.
func TestPeakIsTheChilds(t *testing.T) {
	// 20 MB of this process resident: what ru_maxrss would report.
	ballast := make([]byte, 20<<20)
	for i := range ballast {
		ballast[i] = 1
	}
	defer runtime.KeepAlive(ballast)
	own := vmHWM(os.Getpid())
	if own < 0 {
		t.Fatal("cannot read this process's VmHWM")
	}
	small, err := Run(exec.Command("true"))
	if err != nil {
		t.Fatal(err)
	}
	if small.PeakBytes <= 0 || small.PeakBytes > own/4 {
		t.Errorf("true peaked at %d bytes, this test binary at %d: the figure is not the child's own", small.PeakBytes, own)
	}
	// dd reads 40 MB into one buffer.
	big, err := Run(exec.Command("dd", "if=/dev/zero", "of=/dev/null", "bs=40M", "count=1", "status=none"))
	if err != nil {
		t.Fatal(err)
	}
	if big.MiB() < 38 {
		t.Errorf("dd holding 40 MB peaked at %.1f MiB", big.MiB())
	}
	if !big.Status.Exited() || big.Status.ExitStatus() != 0 {
		t.Errorf("dd: %v", big.Status)
	}
}

// TestExitCodeAndSignals: the child's exit status comes through, and a
// signal it gets is delivered, not swallowed by the tracing.
func TestExitCodeAndSignals(t *testing.T) {
	res, err := Run(exec.Command("sh", "-c", "exit 3"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status.ExitStatus() != 3 {
		t.Errorf("exit status %d, want 3", res.Status.ExitStatus())
	}
	res, err = Run(exec.Command("sh", "-c", `trap 'exit 7' USR1; kill -USR1 $$; sleep 5`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status.ExitStatus() != 7 {
		t.Errorf("exit status %d, want 7 (the trapped USR1)", res.Status.ExitStatus())
	}
}
