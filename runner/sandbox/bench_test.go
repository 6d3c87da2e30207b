package sandbox_test

import (
	"os/exec"
	"testing"

	"github.com/awlrun/awl/runner/sandbox"
)

// BenchmarkStart starts and waits for /bin/true, directly and confined:
// the difference is what confinement adds to every command (a thread, the
// restriction, the wait that keeps the thread until the command exits).
func BenchmarkStart(b *testing.B) {
	sb, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: b.TempDir()})
	if err != nil || !st.Enforced {
		b.Skipf("no Landlock here: %v %+v", err, st)
	}
	defer sb.Close()
	for _, c := range []struct {
		name  string
		start func(*exec.Cmd) error
	}{
		{"direct", (*exec.Cmd).Start},
		{"confined", sb.Start},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				if err := c.start(cmd); err != nil {
					b.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
