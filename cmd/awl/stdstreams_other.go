//go:build !unix

package main

import "os"

// stdStreams returns os.Stdout and os.Stderr; signalContext catches
// SIGPIPE where there is one.
func stdStreams() (stdout, stderr *os.File, catchPipe bool) {
	return os.Stdout, os.Stderr, true
}
