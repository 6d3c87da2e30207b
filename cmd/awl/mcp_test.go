package main

import (
	"path/filepath"

	"github.com/awlrun/awl/internal/testenv"
)

// mcpNPMCondition is [mcpnpm]: the npm-installed MCP servers are there. In
// CI (CI=true) their absence fails the script instead of skipping it.
func mcpNPMCondition() (bool, error) {
	if why := testenv.NPMServerMissing(filepath.Join("..", "..", "runner", "mcp", "testdata", "npm", "node_modules", ".bin", "mcp-server-everything")); why != "" {
		return false, testenv.Missing(why)
	}
	return true, nil
}
