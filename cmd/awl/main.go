// Command awl is a non-interactive LLM agent runner for scripts and CI.
package main

import (
	"context"
	"os"
	"time"
)

// processStart is when the process started (package variables are set
// before main runs): duration_ms counts from it.
var processStart = time.Now()

func main() {
	ctx, stop := signalContext(context.Background())
	code := mainAt(ctx, processStart, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
