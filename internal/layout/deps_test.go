// Package layout holds tests about the shape of the tree itself: which
// package may import which.
package layout

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/awlrun/awl/"

// leaves are the packages that hold no state machine and talk to nothing:
// what they compute depends only on what they are given.
var leaves = []string{"runner/event", "runner/projection", "runner/redact"}

// forbidden is what a leaf must not depend on, directly or not: the run
// loop (the runner root package alone), and the tools, MCP, the sandbox
// and the wire APIs with everything under them.
var forbidden = []string{
	module + "runner",
	module + "runner/tool/", module + "runner/mcp/", module + "runner/sandbox/", module + "provider/",
	"github.com/modelcontextprotocol/",
}

func isForbidden(dep string) bool {
	for _, f := range forbidden {
		if dep == f || strings.HasSuffix(f, "/") && (dep+"/" == f || strings.HasPrefix(dep, f)) {
			return true
		}
	}
	return false
}

// TestLeavesImportNoLoopToolOrWire: go list -deps of each leaf names none
// of the forbidden packages, so the compiler keeps them pure.
func TestLeavesImportNoLoopToolOrWire(t *testing.T) {
	for _, leaf := range leaves {
		out, err := exec.Command("go", "list", "-deps", module+leaf).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", leaf, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if isForbidden(dep) {
				t.Errorf("%s depends on %s", leaf, dep)
			}
		}
	}
}

// TestProjectionImportsOnlyTheLog: of awl's own packages, the projection
// depends on the session, the context package and conv alone, so that a
// request is a pure function of the log; and on the session's string
// helpers (internal/jsonstr, internal/oneline), functions of their
// arguments alone.
func TestProjectionImportsOnlyTheLog(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"runner/projection").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	allowed := map[string]bool{"runner/projection": true, "session": true, "runner/modelctx": true, "conv": true, "internal/jsonstr": true, "internal/oneline": true, "internal/atomicfile": true}
	for _, dep := range strings.Fields(string(out)) {
		if own, ok := strings.CutPrefix(dep, module); ok && !allowed[own] {
			t.Errorf("runner/projection depends on %s", dep)
		}
	}
}
