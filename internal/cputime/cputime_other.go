//go:build !unix

// Package cputime reads the CPU time a process has used, for benchmarks
// that report it beside wall time: on a shared machine wall time also
// counts the wait for a core.
package cputime

import "time"

// Process returns 0: this system's CPU time is not read.
func Process() time.Duration { return 0 }
