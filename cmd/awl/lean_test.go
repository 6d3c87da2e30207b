package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// initBudget is what one package's initialiser may allocate on every start
// of awl, used or not. Allocations, unlike milliseconds, are the same on a
// loaded machine: a library that compiles schemas or tables at init shows
// here as hundreds of kilobytes (the JSON Schema library awl used until
// 2026-12 allocated 1.7 MB and took 8–13 ms on every start).
const initBudget = 100 << 10

// TestInitCost builds awl as the release does and reads what each package
// initialiser costs on `awl --version` (GODEBUG=inittrace=1).
func TestInitCost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds awl")
	}
	bin := filepath.Join(t.TempDir(), "awl")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("awl --version: %v\n%s", err, out)
	}
	total, n := 0, 0
	for _, line := range strings.Split(string(out), "\n") {
		// init PKG @T ms, C ms clock, B bytes, A allocs
		f := strings.Fields(line)
		if len(f) < 10 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		b, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("cannot read %q", line)
		}
		n++
		total += b
		if b > initBudget {
			t.Errorf("package %s allocates %d bytes in its initialiser on every start (budget %d): initialise it lazily", f[1], b, initBudget)
		}
	}
	if n < 10 {
		t.Fatalf("read only %d init lines from:\n%s", n, out)
	}
	t.Logf("%d initialisers, %d bytes in all", n, total)
}

// TestNotLinked keeps modules out of the binary that cost start-up or
// megabytes for what a few lines do.
func TestNotLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, banned := range []string{
		"github.com/santhosh-tekuri/jsonschema", // compiles five meta-schemas at init: internal/jsonschema instead
	} {
		for _, pkg := range strings.Fields(string(out)) {
			if strings.HasPrefix(pkg, banned) {
				t.Errorf("awl links %s (%s)", pkg, banned)
			}
		}
	}
}
