package layout

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

var backticked = regexp.MustCompile("`([^`]+)`")

// TestPackageMapIsCurrent: docs/architecture.md has a row for every
// package, and each package imports, of awl's packages, only what its row
// allows, so the map says how the tree stands.
func TestPackageMapIsCurrent(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{} // package → allowed imports; nil for any
	for line := range strings.SplitSeq(string(doc), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 {
			continue
		}
		name := backticked.FindStringSubmatch(cells[1])
		if name == nil {
			continue
		}
		allowed := []string{}
		if strings.Contains(cells[3], "everything below") {
			allowed = nil
		}
		for _, m := range backticked.FindAllStringSubmatch(cells[3], -1) {
			allowed = append(allowed, m[1])
		}
		rows[name[1]] = allowed
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module)
		allowed, ok := rows[pkg]
		if !ok {
			t.Errorf("docs/architecture.md has no row for %s", pkg)
			continue
		}
		if allowed == nil {
			continue
		}
		for _, imp := range f[1:] {
			own, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			found := false
			for _, a := range allowed {
				found = found || a == own
			}
			if !found {
				t.Errorf("%s imports %s, which its row in docs/architecture.md does not allow", pkg, own)
			}
		}
	}
}
