//go:build unix

// Package cputime reads the CPU time a process has used, for benchmarks
// that report it beside wall time: on a shared machine wall time also
// counts the wait for a core.
package cputime

import (
	"syscall"
	"time"
)

// Process is the CPU time (user and system) this process has used; 0 when
// the system does not say.
func Process() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
