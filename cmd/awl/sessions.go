package main

import (
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/session"
)

// sessionsCmd is the sessions command family.
type sessionsCmd struct{}

func (sessionsCmd) Run(a *app, store *session.Store) error {
	return runner.Usagef("awl sessions is not available yet")
}
