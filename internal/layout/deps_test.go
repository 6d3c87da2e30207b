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

// mcpLayers are the MCP client's packages under the manager, and what each
// must not depend on: the manager (its config, processes and tools), the
// run loop, and each other. The OAuth flows once reached back into the
// manager for its HTTP client, its secrets and its token store; an Env now
// hands them what they need, and the transport an Authorizer.
var mcpLayers = map[string][]string{
	"runner/mcp/jsonrpc": {"runner/mcp", "runner/mcp/oauth", "runner"},
	"runner/mcp/oauth":   {"runner/mcp", "runner/mcp/jsonrpc", "runner"},
	"runner/mcp":         {"runner"},
}

// TestMCPLayersImportNoManager: go list -deps of each MCP layer names none
// of the packages it must not depend on.
func TestMCPLayersImportNoManager(t *testing.T) {
	for pkg, banned := range mcpLayers {
		out, err := exec.Command("go", "list", "-deps", module+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range banned {
				if dep == module+b {
					t.Errorf("%s depends on %s", pkg, b)
				}
			}
		}
	}
}

// TestPolicyImportsNothingOfAwl: runner/policy judges calls from the rules
// and the call alone; it never imports the runner, a tool or anything else
// of awl's, so the runner, the tools and cmd/awl may all ask it.
func TestPolicyImportsNothingOfAwl(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"runner/policy").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, module) && dep != module+"runner/policy" {
			t.Errorf("runner/policy depends on %s", dep)
		}
	}
}
