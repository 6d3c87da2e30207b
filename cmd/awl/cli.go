package main

import (
	"context"
	"fmt"
	"io"
)

// Main runs awl with args and the given streams and returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	_ = ctx
	_ = stdin
	_ = stdout
	fmt.Fprintln(stderr, "awl: not yet implemented")
	return 1
}
