package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
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
	benchPaired(b, starter{"direct", (*exec.Cmd).Start}, starter{"confined", sb.Start})
}

// BenchmarkStartHelper is BenchmarkStart for a sandbox whose commands
// enter a user namespace of awl's (a user who is not root, or a root
// without CAP_SYS_ADMIN: run it under setpriv --bounding-set=-sys_admin
// --inh-caps=-all), through the embedded helper and through nsenter (and,
// as root, setpriv), two sandboxes of the same process, and directly, in
// turn: what each adds to a direct start.
func BenchmarkStartHelper(b *testing.B) {
	if os.Geteuid() == 0 && sandbox.CanMakeNamespaces() {
		b.Skip("root with CAP_SYS_ADMIN makes its namespaces itself: run under setpriv --bounding-set=-sys_admin --inh-caps=-all")
	}
	helper := newBenchSandbox(b, func(st sandbox.Status) bool { return st.Enforced.Processes })
	defer sandbox.WithoutHelper()()
	nsenter := newBenchSandbox(b, func(st sandbox.Status) bool { return st.Enforced.Processes })
	benchPaired(b, starter{"direct", (*exec.Cmd).Start}, starter{"helper", helper.Start}, starter{"nsenter", nsenter.Start})
}

// BenchmarkStartCgroup is BenchmarkStart for the cgroup path (no
// namespaces, a cgroup v2 awl may write: as root its own, for a user
// who is not root a delegated one), where a command starts stopped at its
// exec (PTRACE_TRACEME) until awl has moved it into the commands' cgroup,
// against the same sandbox without the cgroup, and directly, in turn:
// the difference of what each adds is what the stop and the move cost a
// call.
func BenchmarkStartCgroup(b *testing.B) {
	restore := sandbox.WithoutNamespaces()
	plain := newBenchSandbox(b, func(st sandbox.Status) bool { return !st.Enforced.Processes })
	restore()
	defer sandbox.WithoutUserNamespaces()()
	cgroup := newBenchSandbox(b, func(st sandbox.Status) bool { return st.Enforced.Processes })
	benchPaired(b, starter{"direct", (*exec.Cmd).Start}, starter{"plain", plain.Start}, starter{"cgroup", cgroup.Start})
}

// newBenchSandbox makes a workspace-write sandbox, closed with b, and
// skips b unless its status is what want says.
func newBenchSandbox(b *testing.B, want func(sandbox.Status) bool) *sandbox.Sandbox {
	sb, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: b.TempDir()})
	if err != nil || !st.Full() {
		b.Skipf("no Landlock here: %v %+v", err, st)
	}
	b.Cleanup(func() { sb.Close() })
	if !want(st) {
		b.Skipf("not the sandbox this benchmark measures here: %+v", st)
	}
	return sb
}

// starter is a way to start a command, and its name in benchPaired's
// metrics.
type starter struct {
	name  string
	start func(*exec.Cmd) error
}

// benchPaired starts and waits for /bin/true through each way in turn
// within each iteration, the first to go rotating from one iteration to
// the next, and reports the mean wall time of each (NAME-ms/op), and,
// for each but the first (the baseline), its mean less the baseline's
// (NAME-added-ms/op) and the median of its time less the baseline's
// within an iteration (median-NAME-added-ms/op); with two ways, these two
// are added-ms/op and median-added-ms/op. From the third way on, the
// median of its time less the way's before it is
// median-NAME-over-BEFORE-ms/op.
func benchPaired(b *testing.B, ways ...starter) {
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
	sums := make([]time.Duration, len(ways))
	diffs := make([][]time.Duration, len(ways)) // less the baseline
	steps := make([][]time.Duration, len(ways)) // less the way before
	took := make([]time.Duration, len(ways))
	for i := 0; b.Loop(); i++ {
		for j := range ways {
			k := (i + j) % len(ways)
			took[k] = run(ways[k].start)
			sums[k] += took[k]
		}
		for k := 1; k < len(ways); k++ {
			diffs[k] = append(diffs[k], took[k]-took[0])
			steps[k] = append(steps[k], took[k]-took[k-1])
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	for k, w := range ways {
		b.ReportMetric(ms(sums[k]), w.name+"-ms/op")
		if k == 0 {
			continue
		}
		added := w.name + "-added-ms/op"
		if len(ways) == 2 {
			added = "added-ms/op"
		}
		b.ReportMetric(ms(sums[k]-sums[0]), added)
		b.ReportMetric(median(diffs[k]), "median-"+added)
		if k > 1 {
			b.ReportMetric(median(steps[k]), "median-"+w.name+"-over-"+ways[k-1].name+"-ms/op")
		}
	}
}

// BenchmarkStartInRepository is BenchmarkStart in a working directory
// with what git trusts (.git with config, hooks and info, core.hooksPath's
// .husky, a submodule's .git file and repository), which the namespaces
// make read-only and awl looks at after each command, on a goroutine once
// the command has exited. Direct and confined in turn, it reports the
// median of the paired differences (median-added-ms/op) and the CPU time
// of the process and its children that confinement adds (added-cpu-ms/op),
// which takes in that look: each iteration waits 0.2 ms after the
// confined command for it.
func BenchmarkStartInRepository(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "work")
	for name, content := range map[string]string{
		".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n\thooksPath = .husky\n",
		".git/hooks/pre-commit.sample": "x\n", ".git/info/exclude": "x\n", ".husky/pre-commit": "npm test\n",
		".gitmodules": "[submodule \"lib\"]\n\tpath = lib\n", "lib/.git": "gitdir: ../.git/modules/lib\n",
		".git/modules/lib/HEAD": "ref: refs/heads/main\n", ".git/modules/lib/config": "[core]\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	sb, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: dir})
	if err != nil || !st.Full() {
		b.Skipf("no Landlock here: %v %+v", err, st)
	}
	defer sb.Close()
	run := func(start func(*exec.Cmd) error) time.Duration {
		cmd := exec.Command("/bin/true")
		cmd.Dir = dir
		t0 := time.Now()
		if err := start(cmd); err != nil {
			b.Fatal(err)
		}
		cmd.Wait()
		return time.Since(t0)
	}
	cpu := func() time.Duration {
		var self, children syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &self)
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
		return time.Duration(self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano())
	}
	run(sb.Start) // the first starts the namespaces' init as root
	var diffs []time.Duration
	var cpuOff, cpuOn time.Duration
	for b.Loop() {
		c0 := cpu()
		direct := run((*exec.Cmd).Start)
		c1 := cpu()
		confined := run(sb.Start)
		time.Sleep(200 * time.Microsecond)
		c2 := cpu()
		cpuOff, cpuOn = cpuOff+c1-c0, cpuOn+c2-c1
		diffs = append(diffs, confined-direct)
	}
	slices.Sort(diffs)
	b.ReportMetric(float64(diffs[len(diffs)/2].Microseconds())/1000, "median-added-ms/op")
	b.ReportMetric(float64((cpuOn-cpuOff).Microseconds())/1000/float64(b.N), "added-cpu-ms/op")
}

// BenchmarkNew makes and closes a workspace-write sandbox for a directory
// with a .git: where awl can make namespaces (root, or another user where
// user namespaces work), New starts the namespaces' init (sh, and mount
// for /proc and .git), so the status says what it did.
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
