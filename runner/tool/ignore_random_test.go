package tool

import (
	"math/rand/v2"

	"github.com/awlrun/awl/internal/testenv"
	"slices"
	"strings"
	"testing"
)

// TestIgnoreRandomAgreesWithGit: for random ignore files over random trees,
// glob lists exactly the files `git ls-files --others --exclude-standard`
// lists. The matcher is awl's own, so git is the reference: a fixed seed per
// case keeps a failure reproducible.
func TestIgnoreRandomAgreesWithGit(t *testing.T) {
	names := []string{"a", "b", "ab", "a.go", "b.log", "x y", "[a]", "-x", "#c", "!d"}
	pieces := []string{"a", "b", "*", "?", "**", "[ab]", "[!a]", "*.go", "*.log", "a*", "\\#c", "\\!d", "x\\ y", "[a-b]"}
	testenv.RequireCommands(t, "git")
	cases := 120
	if testing.Short() {
		cases = 30
	}
	for c := range cases {
		r := rand.New(rand.NewPCG(uint64(c), 7))
		files := map[string]string{}
		for range 4 + r.IntN(10) {
			segs := make([]string, 1+r.IntN(4))
			for i := range segs {
				segs[i] = names[r.IntN(len(names))]
			}
			p := strings.Join(segs, "/")
			if !conflicts(files, p) {
				files[p] = "x\n"
			}
		}
		var rules []string
		for range 1 + r.IntN(5) {
			var b strings.Builder
			if r.IntN(4) == 0 {
				b.WriteString("!")
			}
			if r.IntN(4) == 0 {
				b.WriteString("/")
			}
			for i := range 1 + r.IntN(3) {
				if i > 0 {
					b.WriteString("/")
				}
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			if r.IntN(4) == 0 {
				b.WriteString("/")
			}
			rules = append(rules, b.String())
		}
		files[".gitignore"] = strings.Join(rules, "\n") + "\n"
		files[".ignore"] = ""
		dir := tree(t, files)
		runGit(t, dir, "init", "-q")
		want := gitFiles(t, dir)
		got := lines(call(t, Env{Dir: dir}, "glob", `{"pattern":"**"}`).Content)
		if len(got) == 1 && strings.HasPrefix(got[0], "no files match") {
			got = nil
		}
		if want = slices.DeleteFunc(want, func(s string) bool { return s == "" }); !slices.Equal(got, want) {
			t.Errorf("case %d: .gitignore\n%s\nglob ** =\n%s\ngit ls-files =\n%s", c, files[".gitignore"], strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// conflicts reports whether p would be a file where files has a directory,
// or the other way round.
func conflicts(files map[string]string, p string) bool {
	for f := range files {
		if f == p || strings.HasPrefix(f, p+"/") || strings.HasPrefix(p, f+"/") {
			return true
		}
	}
	return false
}
