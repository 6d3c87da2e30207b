package runner_test

import (
	"testing"

	"github.com/awlrun/awl/session"
)

// openResumed opens (locks) the session at path for a run to continue, as
// cmd/awl does before it calls the runner; nil for "" (a new session). The
// run closes it.
func openResumed(t testing.TB, path string) *session.Session {
	t.Helper()
	if path == "" {
		return nil
	}
	s, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
