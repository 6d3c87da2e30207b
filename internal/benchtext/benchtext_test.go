package benchtext

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestCode(t *testing.T) {
	s := Code(rand.New(rand.NewPCG(1, 2)), 2000, 60)
	if len(s) < 2000 {
		t.Fatalf("%d bytes, want at least 2000", len(s))
	}
	for _, line := range strings.Split(s, "\n") {
		if len(line) > 60+len("session")+1 {
			t.Errorf("line of %d bytes: %q", len(line), line)
		}
	}
	if Code(rand.New(rand.NewPCG(1, 2)), 2000, 60) != s {
		t.Error("the same seed gave other text")
	}
}
