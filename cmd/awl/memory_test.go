package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// A large prompt sets a soft memory limit of twice its size and 16 MiB; a
// small one, a GOMEMLIMIT of the user's, or a lower limit already set,
// leave the limit alone.
func TestLimitMemory(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "GOMEMLIMIT" {
				return v
			}
			return ""
		}
	}
	for _, c := range []struct {
		name       string
		n          int
		gomemlimit string
		before     int64
		want       int64
	}{
		{"small", largePrompt - 1, "", math.MaxInt64, math.MaxInt64},
		{"large", 50 << 20, "", math.MaxInt64, 116 << 20},
		{"user's GOMEMLIMIT", 50 << 20, "1GiB", math.MaxInt64, math.MaxInt64},
		{"lower already", 50 << 20, "", 64 << 20, 64 << 20},
	} {
		debug.SetMemoryLimit(c.before)
		limitMemory(c.n, env(c.gomemlimit))
		if got := debug.SetMemoryLimit(-1); got != c.want {
			t.Errorf("%s: limit %d, want %d", c.name, got, c.want)
		}
	}
}
