package main

import (
	"io"
	"testing"
)

// BenchmarkNewParser is the command line's cost at every start: kong
// builds the model of the grammar it is given, then parses. "whole" is the
// grammar of every command; "run" is the one mainAt gives kong for
// `awl run` (runCLI). Both parse as mainAt does (parse).
func BenchmarkNewParser(b *testing.B) {
	args := []string{"run", "--no-stdin", "--max-turns", "3", "hello"}
	for _, g := range []struct {
		name string
		new  func() any
	}{{"whole", func() any { return &cli{} }}, {"run", func() any { return &runCLI{} }}} {
		b.Run(g.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := newParser(g.new(), io.Discard, io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := parse(p, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
