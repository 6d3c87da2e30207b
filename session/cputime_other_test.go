//go:build !unix

package session

import "time"

// processCPU is 0 where getrusage is missing: benchmarks then report no
// CPU figure.
func processCPU() time.Duration { return 0 }
