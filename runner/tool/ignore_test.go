package tool

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/awlrun/awl/internal/testenv"
)

// ignoreTree is a repository with ignore rules at several levels. Every
// file holds the word marker, so grep sees what glob sees.
var ignoreTree = map[string]string{
	".gitignore": "# comment\n*.log\n!keep.log\n/build/\nnode_modules/\ndocs/**/*.tmp\nsecret[!x].txt\nvendor/*\n!vendor/keep/\n" +
		"\\#hash.txt\ntrailing.txt   \nlogs/**\n!logs/keep.txt\nm/**/b/c\n",
	".ignore":                    "generated/\n",
	"a.log":                      "marker\n",
	"keep.log":                   "marker\n",
	"#hash.txt":                  "marker\n",
	"trailing.txt":               "marker\n",
	"with space.txt":             "marker\n",
	"a-b/x.txt":                  "marker\n",
	"a/x.txt":                    "marker\n",
	"a.go/inner.txt":             "marker\n",
	"src/.gitignore":             "*.gen.js\n!important.gen.js\n/only-here.txt\n",
	"src/app.js":                 "marker: createServer\n",
	"src/debug.log":              "marker\n",
	"src/keep.log":               "marker\n",
	"src/x.gen.js":               "marker\n",
	"src/important.gen.js":       "marker\n",
	"src/only-here.txt":          "marker\n",
	"src/sub/only-here.txt":      "marker\n",
	"src/build/out.js":           "marker\n",
	"src/node_modules/x.js":      "marker\n",
	"build/out.js":               "marker\n",
	"node_modules/hono/index.js": "marker: createServer\n",
	"node_modules/hono/README":   "marker\n",
	"docs/readme.md":             "marker\n",
	"docs/c.tmp":                 "marker\n",
	"docs/a/b/c.tmp":             "marker\n",
	"docs/a/b/keep.md":           "marker\n",
	"secreta.txt":                "marker\n",
	"secretx.txt":                "marker\n",
	"vendor/lib.go":              "marker\n",
	"vendor/keep/k.go":           "marker\n",
	"local-only.txt":             "marker\n",
	"logs/keep.txt":              "marker\n",
	"m/b/c":                      "marker\n",
	"m/b/x/b/c":                  "marker\n",
	"m/b/x/b/d":                  "marker\n",
	"logs/drop.txt":              "marker\n",
	"generated/g.go":             "marker\n",
	"nested/deep/.gitignore":     "*.txt\n",
	"nested/deep/x.txt":          "marker\n",
	"nested/deep/y.md":           "marker\n",
}

// gitRepo writes files, makes the directory a git repository with a
// .git/info/exclude, and adds some files to the index.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	testenv.RequireCommands(t, "git")
	dir := tree(t, files)
	runGit(t, dir, "init", "-q")
	if err := os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte("local-only.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	add := []string{"add"}
	for _, f := range []string{"src/app.js", "keep.log", ".gitignore"} {
		if _, ok := files[f]; ok {
			add = append(add, f)
		}
	}
	if len(add) > 1 {
		runGit(t, dir, add...)
	}
	return dir
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	// The user's own configuration (a global excludes file) stays out.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+home, "XDG_CONFIG_HOME="+home)
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 && args[0] == "check-ignore" {
			return ""
		}
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// gitFiles lists what git sees in dir, with the .ignore rules added, in
// byte-wise order.
func gitFiles(t *testing.T, dir string) []string {
	t.Helper()
	out := runGit(t, dir, "ls-files", "--cached", "--others", "--exclude-standard", "--exclude-from=.ignore")
	files := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, f := range files {
		// git quotes names with unusual bytes; the fixture has none but
		// spaces, which it leaves alone.
		files[i] = strings.Trim(f, `"`)
	}
	slices.Sort(files)
	return slices.Compact(files)
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// TestIgnoreAgreesWithGit: glob, grep and ls see the files that git
// ls-files --cached --others --exclude-standard lists (with .ignore
// applied), and in the same order.
func TestIgnoreAgreesWithGit(t *testing.T) {
	dir := gitRepo(t, ignoreTree)
	env := Env{Dir: dir}
	wantFiles := gitFiles(t, dir)
	for _, must := range []string{"keep.log", "src/important.gen.js", "src/sub/only-here.txt", "src/build/out.js", "vendor/keep/k.go", "secretx.txt", "logs/keep.txt", "m/b/x/b/d"} {
		if !slices.Contains(wantFiles, must) {
			t.Fatalf("fixture: git does not list %s: %q", must, wantFiles)
		}
	}
	for _, not := range []string{"#hash.txt", "trailing.txt", "a.log", "src/only-here.txt", "build/out.js", "local-only.txt", "generated/g.go", "docs/a/b/c.tmp", "docs/c.tmp", "secreta.txt", "vendor/lib.go", "logs/drop.txt", "m/b/c", "m/b/x/b/c"} {
		if slices.Contains(wantFiles, not) {
			t.Fatalf("fixture: git lists %s: %q", not, wantFiles)
		}
	}

	res := call(t, env, "glob", `{"pattern":"**"}`)
	if got := lines(res.Content); !slices.Equal(got, wantFiles) {
		t.Errorf("glob ** =\n%s\nwant (git ls-files)\n%s", strings.Join(got, "\n"), strings.Join(wantFiles, "\n"))
	}

	res = call(t, env, "grep", `{"pattern":"marker"}`)
	var grepFiles []string
	for _, l := range lines(res.Content) {
		name, _, ok := strings.Cut(l, ":1: marker")
		if !ok {
			t.Fatalf("grep line %q", l)
		}
		grepFiles = append(grepFiles, name)
	}
	var wantText []string
	for _, f := range wantFiles {
		if strings.Contains(ignoreTree[f], "marker") {
			wantText = append(wantText, f)
		}
	}
	if !slices.Equal(grepFiles, wantText) {
		t.Errorf("grep marker saw\n%s\nwant\n%s", strings.Join(grepFiles, "\n"), strings.Join(wantText, "\n"))
	}

	// ls of each directory lists the files git lists in it, and no
	// directory git ignores.
	dirs := map[string][]string{".": nil}
	for _, f := range wantFiles {
		d := path.Dir(f)
		dirs[d] = append(dirs[d], path.Base(f))
		for p := path.Dir(d); d != "."; d, p = p, path.Dir(p) {
			if _, ok := dirs[p]; !ok {
				dirs[p] = nil
			}
			dirs[p] = appendUnique(dirs[p], path.Base(d)+"/")
		}
	}
	for d, wantEntries := range dirs {
		res := call(t, env, "ls", args(t, map[string]any{"path": d}))
		var files, subdirs []string
		for _, l := range lines(res.Content) {
			switch {
			case strings.HasPrefix(l, "["):
			case strings.HasSuffix(l, "/"):
				subdirs = append(subdirs, l)
			default:
				files = append(files, l)
			}
		}
		var wantF, wantD []string
		for _, e := range wantEntries {
			if strings.HasSuffix(e, "/") {
				wantD = append(wantD, e)
			} else {
				wantF = append(wantF, e)
			}
		}
		slices.Sort(wantF)
		if !slices.Equal(files, wantF) {
			t.Errorf("ls %s files = %q, want %q", d, files, wantF)
		}
		for _, w := range wantD {
			if !slices.Contains(subdirs, w) {
				t.Errorf("ls %s lacks %s: %q", d, w, subdirs)
			}
		}
		for _, s := range subdirs {
			p := path.Join(d, s)
			if runGit(t, dir, "check-ignore", "-q", "--no-index", p) != "" || isGitIgnored(t, dir, p) {
				t.Errorf("ls %s lists %s, which git ignores", d, s)
			}
		}
	}
}

func appendUnique(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// isGitIgnored asks git (with .ignore added) whether p is ignored.
func isGitIgnored(t *testing.T, dir, p string) bool {
	t.Helper()
	cmd := exec.Command("git", "-c", "core.excludesFile="+filepath.Join(dir, ".ignore"), "check-ignore", "-q", "--no-index", p)
	cmd.Dir = dir
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+home, "XDG_CONFIG_HOME="+home)
	return cmd.Run() == nil
}

// TestIgnoreSubdir: the rules of the directories above the search path
// apply below it.
func TestIgnoreSubdir(t *testing.T) {
	dir := gitRepo(t, ignoreTree)
	res := call(t, Env{Dir: dir}, "glob", `{"pattern":"**","path":"src"}`)
	want := ".gitignore\napp.js\nbuild/out.js\nimportant.gen.js\nkeep.log\nsub/only-here.txt\n"
	if res.Content != want {
		t.Errorf("glob in src =\n%s\nwant\n%s", res.Content, want)
	}
	// From deeper still, with the search root inside the repository.
	res = call(t, Env{Dir: filepath.Join(dir, "src", "sub")}, "glob", `{"pattern":"*"}`)
	if res.Content != "only-here.txt\n" {
		t.Errorf("glob in src/sub = %q", res.Content)
	}
}

// TestIgnoreExplicitPath: a path inside an ignored directory is searched;
// include_ignored searches everything but .git.
func TestIgnoreExplicitPath(t *testing.T) {
	dir := gitRepo(t, ignoreTree)
	env := Env{Dir: dir}

	res := call(t, env, "grep", `{"pattern":"createServer"}`)
	if res.Content != "src/app.js:1: marker: createServer\n" {
		t.Errorf("grep createServer = %q", res.Content)
	}
	res = call(t, env, "grep", `{"pattern":"createServer","path":"node_modules/hono"}`)
	if res.Content != "index.js:1: marker: createServer\n" {
		t.Errorf("grep in node_modules/hono = %q", res.Content)
	}
	res = call(t, env, "grep", `{"pattern":"createServer","path":"node_modules/hono/index.js"}`)
	if res.Content != "node_modules/hono/index.js:1: marker: createServer\n" {
		t.Errorf("grep node_modules/hono/index.js = %q", res.Content)
	}
	res = call(t, env, "glob", `{"pattern":"**/*.js","path":"node_modules"}`)
	if res.Content != "hono/index.js\n" {
		t.Errorf("glob in node_modules = %q", res.Content)
	}
	res = call(t, env, "glob", `{"pattern":"node_modules/hono/*"}`)
	if res.Content != "node_modules/hono/README\nnode_modules/hono/index.js\n" {
		t.Errorf("glob node_modules/hono/* = %q", res.Content)
	}
	res = call(t, env, "ls", `{"path":"node_modules"}`)
	if res.Content != "hono/\n" {
		t.Errorf("ls node_modules = %q", res.Content)
	}
	// Rules still apply inside the named directory: *.log there is ignored.
	res = call(t, env, "glob", `{"pattern":"*","path":"src"}`)
	if strings.Contains(res.Content, "debug.log") {
		t.Errorf("glob in src lists debug.log:\n%s", res.Content)
	}

	res = call(t, env, "grep", `{"pattern":"createServer","include_ignored":true}`)
	if res.Content != "node_modules/hono/index.js:1: marker: createServer\nsrc/app.js:1: marker: createServer\n" {
		t.Errorf("grep include_ignored = %q", res.Content)
	}
	res = call(t, env, "glob", `{"pattern":"**","include_ignored":true}`)
	var all []string
	for f := range ignoreTree {
		all = append(all, f)
	}
	slices.Sort(all)
	if got := lines(res.Content); !slices.Equal(got, all) {
		t.Errorf("glob include_ignored =\n%s\nwant\n%s", res.Content, strings.Join(all, "\n"))
	}
	res = call(t, env, "ls", `{"include_ignored":true}`)
	for _, e := range []string{".git/", "node_modules/", "build/", "a.log", "generated/"} {
		if !slices.Contains(lines(res.Content), e) {
			t.Errorf("ls include_ignored lacks %s:\n%s", e, res.Content)
		}
	}
	res = call(t, env, "ls", `{}`)
	if !strings.HasSuffix(res.Content, "[9 entries not listed: ignored; include_ignored: true lists them]\n") {
		t.Errorf("ls does not count what it left out:\n%s", res.Content)
	}
	// A search that finds nothing says ignored files were not searched.
	res = call(t, env, "grep", `{"pattern":"index","path":"node_modules/.."}`)
	want(t, res, false, "no matches for index in node_modules/.. (", "include_ignored: true searches them)")
}

// TestIgnoreOutsideRepo: without a repository .gitignore files are not
// read (as ripgrep does), but .ignore files are.
func TestIgnoreOutsideRepo(t *testing.T) {
	dir := tree(t, map[string]string{
		".gitignore":   "*.log\n",
		".ignore":      "*.tmp\n",
		"a.log":        "",
		"b.tmp":        "",
		"c.txt":        "",
		"sub/.ignore":  "!keep.tmp\n",
		"sub/keep.tmp": "",
		"sub/drop.tmp": "",
	})
	res := call(t, Env{Dir: dir}, "glob", `{"pattern":"**"}`)
	want := ".gitignore\n.ignore\na.log\nc.txt\nsub/.ignore\nsub/keep.tmp\n"
	if res.Content != want {
		t.Errorf("glob =\n%s\nwant\n%s", res.Content, want)
	}
}

// TestSearchDeterministic: the same search gives the same bytes, in path
// order, however the parallel workers finish.
func TestSearchDeterministic(t *testing.T) {
	files := map[string]string{}
	var wantOut strings.Builder
	var names []string
	for i := range 300 {
		// Sizes vary so that workers finish out of order.
		name := fmt.Sprintf("d%d/f-%03d.txt", i%5, i)
		files[name] = strings.Repeat("filler line\n", (i*37)%400) + fmt.Sprintf("hit %d\n", i)
		names = append(names, name)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&wantOut, "%s:%d: %s", n, strings.Count(files[n], "\n"), strings.TrimPrefix(files[n], strings.Repeat("filler line\n", strings.Count(files[n], "\n")-1)))
	}
	dir := tree(t, files)
	first := call(t, Env{Dir: dir}, "grep", `{"pattern":"hit \\d+"}`)
	if first.Content != wantOut.String() {
		t.Fatalf("grep =\n%s\nwant\n%s", first.Content, wantOut.String())
	}
	for range 5 {
		if again := call(t, Env{Dir: dir}, "grep", `{"pattern":"hit \\d+"}`); again.Content != first.Content {
			t.Fatalf("second search differs:\n%s\nfirst:\n%s", again.Content, first.Content)
		}
		g1 := call(t, Env{Dir: dir}, "glob", `{"pattern":"**/*.txt"}`)
		g2 := call(t, Env{Dir: dir}, "glob", `{"pattern":"**/*.txt"}`)
		if g1.Content != g2.Content || g1.Content != strings.Join(names, "\n")+"\n" {
			t.Fatalf("glob differs or is out of order:\n%s", g1.Content)
		}
	}
	// Cut results say how many more there were, across files.
	res := call(t, Env{Dir: dir}, "grep", `{"pattern":"filler"}`)
	total := 0
	nfiles := 0
	for _, c := range files {
		if n := strings.Count(c, "filler"); n > 0 {
			total += n
			nfiles++
		}
	}
	want(t, res, false, fmt.Sprintf("[showing 500 of %d matching lines in %d files; %d more not shown: narrow the pattern, or the search with path or glob]\n", total, nfiles, total-500))
}
