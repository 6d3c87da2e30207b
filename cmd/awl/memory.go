package main

import "runtime/debug"

// largePrompt is the prompt size from which a run keeps its memory close to
// what it holds.
const largePrompt = 8 << 20

// limitMemory sets a soft memory limit for a run whose prompt is n bytes,
// when it is large and GOMEMLIMIT does not say otherwise. The garbage
// collector's default lets the heap grow to twice what is live before it
// collects, and a large prompt passes through several buffers of its size
// (stdin, the session line, the request body), so a 50 MB prompt peaked
// at four times its size. At twice its size and 16 MiB it collects sooner
// (the limit is soft: a run that needs more gets it, and the collector's
// share of the CPU stays bounded).
func limitMemory(n int, getenv func(string) string) {
	if n < largePrompt || getenv("GOMEMLIMIT") != "" {
		return
	}
	if limit := int64(2*n) + 16<<20; limit < debug.SetMemoryLimit(-1) {
		debug.SetMemoryLimit(limit)
	}
}
