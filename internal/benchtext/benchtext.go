// Package benchtext makes the text of the sessions benchmarks read and
// write: code-like words, so that benchmarks in different packages decode
// text of the same kind and their figures compare.
package benchtext

import (
	"math/rand/v2"
	"strings"
)

// Words are the words Code draws from.
var Words = []string{"func", "return", "err", "nil", "session", "the", "file", "if", "for", "range", ":=", "{", "}", "ctx", "path"}

// Word returns one word, drawn from rng.
func Word(rng *rand.Rand) string { return Words[rng.IntN(len(Words))] }

// Code returns at least size bytes of words drawn from rng, a line break
// after lineLen bytes of a line.
func Code(rng *rand.Rand, size, lineLen int) string {
	var b strings.Builder
	col := 0
	for b.Len() < size {
		w := Word(rng)
		b.WriteString(w)
		col += len(w) + 1
		if col > lineLen {
			b.WriteByte('\n')
			col = 0
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}
