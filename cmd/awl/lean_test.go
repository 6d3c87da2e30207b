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
const initBudget = 16 << 10

// initAllocBudget is how many allocations one package's initialiser may
// make on every start: encoding/gob's made 370 and a JSON Schema library's
// 296 (linked by the MCP SDK's client until 2026-12), each near 1 ms.
const initAllocBudget = 100

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
		allocs, err2 := strconv.Atoi(f[9])
		if err != nil || err2 != nil {
			t.Fatalf("cannot read %q", line)
		}
		n++
		total += b
		if b > initBudget || allocs > initAllocBudget {
			t.Errorf("package %s allocates %d bytes in %d allocations in its initialiser on every start (budget %d bytes, %d allocations): initialise it lazily", f[1], b, allocs, initBudget, initAllocBudget)
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
		// The MCP SDK's client package links encoding/gob and
		// google/jsonschema-go, whose initialisers took 1.5 and 0.8 ms
		// of every start: runner/mcp is its own client (its auth and
		// oauthex packages stay: they link neither).
		"github.com/modelcontextprotocol/go-sdk/mcp",
		"github.com/modelcontextprotocol/go-sdk/jsonrpc",
		"encoding/gob",
		"github.com/google/jsonschema-go",
		"github.com/go-git/", // gitignore matching is awl's own glob matcher
		// A test server's library (runner/mcp/testdata/mcpgo, a module
		// of its own).
		"github.com/mark3labs/mcp-go",
	} {
		for _, pkg := range strings.Fields(string(out)) {
			if pkg == banned || strings.HasPrefix(pkg, strings.TrimSuffix(banned, "/")+"/") {
				t.Errorf("awl links %s (%s)", pkg, banned)
			}
		}
	}
}
