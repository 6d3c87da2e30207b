package layout

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ciRead is code that reads the CI variable: os.Getenv, os.LookupEnv or
// syscall.Getenv of "CI".
var ciRead = regexp.MustCompile(`(?:Getenv|LookupEnv)\("CI"\)`)

// TestOneCIGate keeps internal/testenv the one place that decides "skip
// here, fail in CI": a test reading CI itself decides with its own rule
// (any value, CI=true, or none), as three did before there was one.
func TestOneCIGate(t *testing.T) {
	root := filepath.Join("..", "..")
	gate := filepath.Join(root, "internal", "testenv")
	for _, p := range moduleGoFiles(t, root) {
		if strings.HasPrefix(p, gate+string(filepath.Separator)) {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if ciRead.MatchString(line) {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("%s:%d reads CI itself: use internal/testenv (Require, Missing, InCI)", rel, i+1)
			}
		}
	}
}

// moduleGoFiles is every .go file of the module under root, tests
// included: none under node_modules, testdata, dist or bin, nor in a
// module of its own (tools/).
func moduleGoFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", ".git", "testdata", "dist", "bin":
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
