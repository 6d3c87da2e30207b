//go:build !linux

package sandbox

import "errors"

// ABI returns 0: Landlock is Linux's.
func ABI() int { return 0 }

func missingReason() string { return "Landlock is a Linux feature" }

func restrict(Policy) error { return errors.New("Landlock is a Linux feature") }

func execve(string, []string, []string) error { return errors.New("not supported") }
