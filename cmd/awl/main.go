// Command awl is a non-interactive LLM agent runner for scripts and CI.
package main

import (
	"context"
	"os"
	"time"

	// Grows the main goroutine's stack before any other initialiser
	// runs (its package says why).
	_ "github.com/awlrun/awl/internal/growstack"
)

// processStart is when the process started (package variables are set
// before main runs): duration_ms counts from it.
var processStart = time.Now()

func main() {
	stdout, stderr, catchPipe := stdStreams()
	ctx, stop := signalContext(context.Background(), catchPipe)
	code := mainAt(ctx, processStart, os.Args[1:], os.Stdin, stdout, stderr)
	stop()
	os.Exit(code)
}
