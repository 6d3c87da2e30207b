// Package testenv is the one place a test decides what to do when
// something it needs is missing here (a Landlock ABI, node and the pinned
// MCP servers, a command): skip on a contributor's machine, saying what is
// missing, and fail in CI, where what the tests promise must be tested.
//
// CI means CI=true, as .ci/run sets it (GitHub Actions and GitLab do too).
// Any other value, an empty one included, is a contributor's machine.
//
// It also holds what the tests of every package share: Buffer.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// InCI reports whether the tests run in CI (CI=true).
func InCI() bool { return os.Getenv("CI") == "true" }

// Require stops t because of why: a skip, or in CI a failure.
func Require(t testing.TB, why string) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s (CI=true: in CI this test must run, not skip)", why)
	}
	t.Skipf("%s (skipped; with CI=true this fails)", why)
}

// Missing is Require for a check that cannot stop a test itself (a
// testscript condition): in CI it returns why as an error, elsewhere nil,
// and the caller treats the condition as false.
func Missing(why string) error {
	if InCI() {
		return errors.New(why + " (CI=true: in CI this must be tested, not skipped)")
	}
	return nil
}

// RequireCommands calls Require unless every one of names is on PATH.
func RequireCommands(t testing.TB, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := exec.LookPath(name); err != nil {
			Require(t, fmt.Sprintf("needs %s on PATH", name))
		}
	}
}

// NPMOffline reports whether MCP_NPM_OFFLINE=1: the MCP servers pinned in
// runner/mcp/testdata/npm are not installed (make test skips `npm ci`, for
// a machine without access to npm's registry), and the tests that run
// them skip, or in CI fail.
func NPMOffline() bool { return os.Getenv("MCP_NPM_OFFLINE") == "1" }

// NPMServerMissing says why the npm-installed MCP server at bin (a path
// under runner/mcp/testdata/npm/node_modules/.bin) cannot run here, ""
// when it can: MCP_NPM_OFFLINE=1, the server not installed, or no node.
// The caller passes the reason to Require or Missing.
func NPMServerMissing(bin string) string {
	name := filepath.Base(bin)
	if NPMOffline() {
		return name + ": MCP_NPM_OFFLINE=1 leaves the npm-installed MCP servers out"
	}
	if _, err := os.Stat(bin); err != nil {
		return name + " is not installed: run `npm ci` in runner/mcp/testdata/npm (make test does it)"
	}
	if _, err := exec.LookPath("node"); err != nil {
		return name + " needs node on PATH"
	}
	return ""
}
