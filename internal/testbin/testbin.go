// Package testbin gives multi-process tests a program to start as their
// helper process: the running test binary itself, or, when it was built
// with the race detector, a plain build of the same tests. A race-built
// binary takes about a second to start on a small VM, too slow to start a
// helper hundreds of times.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var plain struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// Path returns the helper program for the tests of the package in the
// current directory (where `go test` runs them).
func Path(t testing.TB) string {
	t.Helper()
	if !raceEnabled {
		return os.Args[0]
	}
	plain.once.Do(func() {
		plain.dir, plain.err = os.MkdirTemp("", "awl-testbin-")
		if plain.err != nil {
			return
		}
		plain.path = filepath.Join(plain.dir, "plain.test")
		out, err := exec.Command("go", "test", "-c", "-o", plain.path, ".").CombinedOutput()
		if err != nil {
			plain.err = fmt.Errorf("go test -c: %v\n%s", err, out)
		}
	})
	if plain.err != nil {
		t.Fatal(plain.err)
	}
	return plain.path
}

// Cleanup removes the plain build, if any; TestMain calls it after m.Run.
func Cleanup() {
	if plain.dir != "" {
		os.RemoveAll(plain.dir)
	}
}
