//go:build !linux

package sandbox

import (
	"errors"
	"os/exec"
)

// ABI returns 0: Landlock is Linux's.
func ABI() int { return 0 }

func missingReason() string { return "Landlock is a Linux feature" }

type ruleset struct{}

func newRuleset(Policy) (*ruleset, error) { return nil, errors.New("Landlock is a Linux feature") }

func (*ruleset) close() {}

func (*ruleset) start(*exec.Cmd, *nsInit, func(), bool, int) error {
	return errors.New("Landlock is a Linux feature")
}

// seccompArchs is empty: there is no network filter without Linux.
var seccompArchs []struct{}

// nsInit would be the init of the namespaces commands run in: Linux's.
type nsInit struct {
	readOnly    []string
	procMounted bool
}

func namespacesAvailable() bool { return false }

func userNamespaces([]string) (*nsInit, error) { return nil, errors.New("namespaces are Linux's") }

func (*nsInit) start() error { return errors.New("namespaces are Linux's") }

func (*nsInit) mapsOwners([]string) error { return nil }

func (*nsInit) allReadOnly() bool { return false }

func (*nsInit) close() {}

func (*nsInit) sibling() *nsInit { return nil }

// becomeSubreaper: only Linux has child subreapers.
func becomeSubreaper() bool { return false }

// sweep has nothing to sweep: commands are not confined here.
func (s *Sandbox) sweep() {}

// cgroup would be the cgroup commands start in: Linux's.
type cgroup struct{}

var noCgroup bool

func newCgroup() *cgroup { return nil }

func (*cgroup) into(*exec.Cmd) int { return -1 }

func (*cgroup) close() {}
