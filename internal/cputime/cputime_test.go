package cputime

import (
	"runtime"
	"testing"
	"time"
)

func TestProcessGrows(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("not read here")
	}
	start := Process()
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
	}
	if d := Process() - start; d <= 0 {
		t.Errorf("CPU time grew by %v over 50 ms of work", d)
	}
}
