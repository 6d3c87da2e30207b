package scripts_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestMutationCountIsDocumented: docs/testing.md says how many mutations
// scripts/mutations.txt lists, and says it right.
func TestMutationCountIsDocumented(t *testing.T) {
	list, err := os.ReadFile("mutations.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.SplitSeq(string(list), "\n") {
		if strings.HasPrefix(line, "name:") {
			n++
		}
	}
	doc, err := os.ReadFile("../docs/testing.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`scripts/mutations.txt` lists (\\d+) ").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/testing.md does not say how many mutations scripts/mutations.txt lists")
	}
	if said, _ := strconv.Atoi(string(m[1])); said != n {
		t.Errorf("docs/testing.md says scripts/mutations.txt lists %d mutations; it lists %d", said, n)
	}
}
