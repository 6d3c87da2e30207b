package main

import (
	"io"
	"testing"
)

// BenchmarkNewParser is the CLI grammar's cost at every start: kong builds
// and interpolates the model of every command before it parses one.
func BenchmarkNewParser(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := newParser(&cli{}, io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
