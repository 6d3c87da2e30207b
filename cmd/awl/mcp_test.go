package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/awlrun/awl/internal/testenv"
)

// mcpNPMCondition is [mcpnpm]: the npm-installed MCP servers are there. In
// CI (CI=true) their absence fails the script instead of skipping it.
func mcpNPMCondition() (bool, error) {
	_, err := os.Stat(filepath.Join("..", "..", "runner", "mcp", "testdata", "npm", "node_modules", ".bin", "mcp-server-everything"))
	if err == nil {
		if _, err = exec.LookPath("node"); err == nil {
			return true, nil
		}
	}
	return false, testenv.Missing(fmt.Sprintf("the MCP test servers are not installed (npm ci in runner/mcp/testdata/npm; make test does it): %v", err))
}
