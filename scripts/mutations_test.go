package scripts_test

import (
	"cmp"
	"io/fs"
	"os"
	"path/filepath"
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

// TestMutationsStillApply: each record of mutations.txt finds its text
// exactly once in the non-test .go files under its directory, as
// mutate.sh requires, so that a change which moves or rewrites the code a
// mutation breaks is seen in `make test`, not at the next `make mutate`.
func TestMutationsStillApply(t *testing.T) {
	list, err := os.ReadFile("mutations.txt")
	if err != nil {
		t.Fatal(err)
	}
	unescape := strings.NewReplacer(`\n`, "\n", `\t`, "\t").Replace
	var name, dir, find string
	check := func() {
		if name == "" {
			return
		}
		top := filepath.Join("..", cmp.Or(dir, "."))
		hits := 0
		filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || d.Name() == ".git") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				hits += strings.Count(string(b), unescape(find))
			}
			return nil
		})
		if hits != 1 {
			t.Errorf("mutation %q: its find text occurs %d times under %s, not once", name, hits, cmp.Or(dir, "."))
		}
	}
	for line := range strings.SplitSeq(string(list), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		val = strings.TrimPrefix(val, " ")
		switch key {
		case "name":
			check()
			name, dir, find = val, "", ""
		case "in":
			dir = val
		case "find":
			find = val
		}
	}
	check()
}
