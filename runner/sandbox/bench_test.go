package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/awlrun/awl/runner/sandbox"
)

// BenchmarkStart starts and waits for /bin/true, directly and confined, in
// turn within each iteration so that both see the same load (the order
// alternates from one iteration to the next, so that neither always runs
// just after the other, in its caches' wake): the
// difference is what confinement adds to every command (a thread, the
// restriction, the wait that keeps the thread until the command exits).
// It reports the mean wall time of each and their difference, and the
// median of the differences within an iteration (median-added-ms/op),
// which a loaded machine's slow outliers move far less than the means.
func BenchmarkStart(b *testing.B) { benchStart(b) }

// BenchmarkStartWithoutNamespaces is BenchmarkStart for the sandbox a user
// who is not root gets (no PID and mount namespaces to join): as root, it
// shows what joining them costs.
func BenchmarkStartWithoutNamespaces(b *testing.B) {
	defer sandbox.WithoutNamespaces()()
	benchStart(b)
}

func benchStart(b *testing.B) {
	sb, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: b.TempDir()})
	if err != nil || !st.Full() {
		b.Skipf("no Landlock here: %v %+v", err, st)
	}
	defer sb.Close()
	run := func(start func(*exec.Cmd) error) time.Duration {
		t0 := time.Now()
		cmd := exec.Command("/bin/true")
		if err := start(cmd); err != nil {
			b.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	var direct, confined time.Duration
	var diffs []time.Duration
	for i := 0; b.Loop(); i++ {
		var dd, dc time.Duration
		if i%2 == 0 {
			dd = run((*exec.Cmd).Start)
			dc = run(sb.Start)
		} else {
			dc = run(sb.Start)
			dd = run((*exec.Cmd).Start)
		}
		direct += dd
		confined += dc
		diffs = append(diffs, dc-dd)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(direct), "direct-ms/op")
	b.ReportMetric(ms(confined), "confined-ms/op")
	b.ReportMetric(ms(confined-direct), "added-ms/op")
	slices.Sort(diffs)
	b.ReportMetric(float64(diffs[len(diffs)/2].Microseconds())/1000, "median-added-ms/op")
}

// BenchmarkNew makes and closes a workspace-write sandbox for a directory
// with a .git: for a user who is not root where user namespaces work, New
// starts the namespaces' init (sh, and mount for /proc and .git), so the
// status says what it did; as root the init waits for the first command.
func BenchmarkNew(b *testing.B) {
	dir := b.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		sb, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: dir})
		if err != nil || !st.Full() {
			b.Skipf("no Landlock here: %v %+v", err, st)
		}
		sb.Close()
	}
}
