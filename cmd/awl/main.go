// Command awl is a non-interactive LLM agent runner for scripts and CI.
package main

import (
	"context"
	"os"
)

func main() {
	ctx, stop := signalContext(context.Background())
	code := Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
