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
