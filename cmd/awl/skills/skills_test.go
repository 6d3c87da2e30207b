package skills

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestParseRefusesWhatTheFormatRefuses: each way a SKILL.md breaks the
// format is one error naming path:line and the reason.
func TestParseRefusesWhatTheFormatRefuses(t *testing.T) {
	long := strings.Repeat("x", 1025)
	for _, tc := range []struct{ src, want string }{
		{"# no front matter\n", "s/SKILL.md:1: no front matter"},
		{"---\nname: pdf\ndescription: d\n", "s/SKILL.md:1: the front matter has no closing"},
		{"---\nname: pdf\ndescription: [unclosed\n---\n", "s/SKILL.md:3: front matter: did not find expected ',' or ']'"},
		{"---\nname: pdf\n\ndescription: {x\nlicense: y\n---\n", "s/SKILL.md:4: front matter: did not find expected ',' or '}'"},
		{"---\nname: pdf\n- x\n---\n", "s/SKILL.md:3: front matter: did not find expected key"},
		{"---\nname: pdf\ndescription: d\nz: !x!y q\n---\n", "s/SKILL.md:4: front matter: found undefined tag handle"},
		{"---\nname: pdf\ndescription: \"\\q\"\n---\n", "s/SKILL.md:3: front matter: found unknown escape character"},
		{"---\nname: pdf\n  description: d\n---\n", "s/SKILL.md:3: front matter: mapping values are not allowed"},
		{"---\n- a\n- b\n---\n", "s/SKILL.md:2: the front matter must be a mapping"},
		{"---\ndescription: d\n---\n", "s/SKILL.md:2: no name"},
		{"---\nname: pdf\n---\n", "s/SKILL.md:2: no description"},
		{"---\nname: PDF\ndescription: d\n---\n", `s/SKILL.md:2: name "PDF" must be lowercase letters`},
		{"---\nname: pdf--x\ndescription: d\n---\n", `s/SKILL.md:2: name "pdf--x" must be`},
		{"---\nname: -pdf\ndescription: d\n---\n", `s/SKILL.md:2: name "-pdf" must be`},
		{"---\nname: pdf-\ndescription: d\n---\n", `s/SKILL.md:2: name "pdf-" must be`},
		{"---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\n", "s/SKILL.md:2: name must be 1 to 64 characters, not 65"},
		{"---\nname: other\ndescription: d\n---\n", `s/SKILL.md:2: name "other" is not its folder's name "pdf"`},
		{"---\nname: pdf\ndescription: \"\"\n---\n", "s/SKILL.md:3: description must be 1 to 1024 characters, not 0"},
		{"---\nname: pdf\ndescription: " + long + "\n---\n", "s/SKILL.md:3: description must be 1 to 1024 characters, not 1025"},
		{"---\nname: pdf\ndescription:\n  - a\n---\n", "s/SKILL.md:4: description must be a string"},
		{"---\nname: pdf\ndescription: d\nname: pdf\n---\n", "s/SKILL.md:4: name is given twice"},
		{"---\nname: pdf\ndescription: d\nmetadata: x\n---\n", "s/SKILL.md:4: metadata must be a mapping"},
		{"---\nname: pdf\ndescription: d\nmetadata:\n  a: [1]\n---\n", "s/SKILL.md:5: metadata.a must be a string"},
		{"---\nname: pdf\ndescription: d\nallowed-tools: {a: b}\n---\n", "s/SKILL.md:4: allowed-tools must be a string or a list"},
		{"---\nname: pdf\ndescription: d\ncompatibility: " + strings.Repeat("c", 501) + "\n---\n", "s/SKILL.md:4: compatibility must be at most 500"},
		{"---\nname: ~\ndescription: d\n---\n", "s/SKILL.md:2: name must be a string"},
	} {
		_, err := Parse("s/SKILL.md", []byte(tc.src), "pdf")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%.60q:\n got %v\nwant %s…", tc.src, err, tc.want)
		}
	}
}

// TestParseReadsTheFormat: every field, allowed-tools as a string or a
// list, a BOM and CRLF line ends, other fields left alone.
func TestParseReadsTheFormat(t *testing.T) {
	src := "\ufeff---\r\nname: pdf-tools\r\ndescription: >-\r\n  Fill and merge PDFs.\r\nlicense: MIT\r\ncompatibility: needs python3\r\nmetadata:\r\n  author: team\r\nallowed-tools: Bash(pdftk:*) Read\r\ndisable-model-invocation: true\r\n---\r\n# Body\r\n"
	s, err := Parse("SKILL.md", []byte(src), "pdf-tools")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "pdf-tools" || s.Description != "Fill and merge PDFs." || s.License != "MIT" || s.Compatibility != "needs python3" || s.Metadata["author"] != "team" || !slices.Equal(s.AllowedTools, []string{"Bash(pdftk:*)", "Read"}) {
		t.Errorf("%+v", s)
	}
	s, err = Parse("SKILL.md", []byte("---\nname: a\ndescription: d\nallowed-tools:\n  - read\n  - grep\n---\n"), "a")
	if err != nil || !slices.Equal(s.AllowedTools, []string{"read", "grep"}) {
		t.Errorf("list: %+v %v", s, err)
	}
}

func writeSkill(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name, "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDiscoverShadowsAndSkips: a later directory's skill of the same name
// shadows an earlier one, with a warning naming both; a broken skill is
// skipped with its warning and stops nothing; a folder without SKILL.md
// is not a skill.
func TestDiscoverShadowsAndSkips(t *testing.T) {
	user, proj := t.TempDir(), t.TempDir()
	u := writeSkill(t, user, "release", "---\nname: release\ndescription: the user's\n---\n")
	writeSkill(t, user, "lint", "---\nname: lint\ndescription: lint it\n---\n")
	p := writeSkill(t, proj, "release", "---\nname: release\ndescription: the project's\n---\n")
	bad := writeSkill(t, proj, "broken", "---\nname: Broken\ndescription: d\n---\n")
	os.MkdirAll(filepath.Join(proj, "empty"), 0o755)
	os.WriteFile(filepath.Join(proj, "README.md"), []byte("not a skill"), 0o644)
	all := Discover(OS, []Dir{{Path: user, Source: "user"}, {Path: filepath.Join(user, "missing"), Source: "user"}, {Path: proj, Source: "project"}})
	off := Offered(all)
	var names []string
	for _, s := range off {
		names = append(names, s.Name+":"+s.Description+":"+s.Source)
	}
	if want := []string{"lint:lint it:user", "release:the project's:project"}; !slices.Equal(names, want) {
		t.Errorf("offered %q, want %q", names, want)
	}
	w := Warnings(all)
	if len(w) != 2 || !strings.HasPrefix(w[0], bad+":2: name \"Broken\"") || w[1] != "skill release at "+p+" shadows the one at "+u {
		t.Errorf("warnings %q", w)
	}
}

// FuzzParse: for any SKILL.md, Parse never panics, and an error names the
// file and a line.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"---\nname: a\ndescription: d\n---\n", "---\nname: &a x\ndescription: *a\n---\n", "---\n{a: [}\n---\n",
		"---\nmetadata: {a: {b: c}}\n---\n", "---\r\n---\r\n", "---\nname: a\n---", "\ufeff---\nallowed-tools: [[x]]\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("x/SKILL.md", data, "a")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "x/SKILL.md:") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if s.Name != "a" || s.Description == "" {
			t.Fatalf("accepted %+v", s)
		}
	})
}

// TestCut: past the budget the longest descriptions are cut to one
// length, between characters, until the catalogue fits; under it nothing
// is; the floor of 64 bytes holds even when the budget cannot be met.
func TestCut(t *testing.T) {
	mk := func(name string, n int) Skill {
		return Skill{Name: name, Description: strings.Repeat("é", n/2), Path: "/s/" + name + "/SKILL.md"}
	}
	skills := []Skill{mk("a", 1000), mk("b", 300), mk("c", 100)}
	size := func() int {
		n := 0
		for _, s := range skills {
			n += entrySize(s)
		}
		return n
	}
	if cut := Cut(skills, size()); cut != nil {
		t.Fatalf("cut %q under the budget", cut)
	}
	budget := size() - 600
	if cut := Cut(skills, budget); size() > budget || size() < budget-8 || !slices.Equal(cut, []string{"a"}) {
		t.Errorf("cut %q, size %d for a budget of %d", cut, size(), budget)
	}
	budget = size() - 300
	if cut := Cut(skills, budget); size() > budget || !slices.Equal(cut, []string{"a", "b"}) || len(skills[2].Description) != 100 {
		t.Errorf("cut %q, size %d for a budget of %d, c %d", cut, size(), budget, len(skills[2].Description))
	}
	for _, s := range skills {
		if !utf8.ValidString(s.Description) {
			t.Errorf("%s cut inside a character", s.Name)
		}
	}
	Cut(skills, 10)
	for _, s := range skills {
		if len(s.Description) < 64 {
			t.Errorf("%s cut to %d bytes", s.Name, len(s.Description))
		}
	}
}

// TestCutCountsEscapes: the catalogue escapes &, < and >, so a
// description of ampersands takes five times its length there; the
// budget holds the entries as sent, not as written (forty such skills
// were 204,800 bytes of context under a 32,000-byte budget).
func TestCutCountsEscapes(t *testing.T) {
	var skills []Skill
	for i := range 40 {
		name := fmt.Sprintf("s%d", i)
		skills = append(skills, Skill{Name: name, Description: strings.Repeat("&<>", 341), Path: "/s/" + name + "/SKILL.md"})
	}
	cut := Cut(skills, Budget)
	sent := 0
	for _, s := range skills {
		sent += len(`<skill name="`+s.Name+`" path="`+s.Path+`">`+"</skill>\n") +
			len(strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s.Description))
	}
	if len(cut) != 40 || sent > Budget || sent < Budget-40*16 {
		t.Errorf("%d cut; the entries take %d bytes as sent, for a budget of %d", len(cut), sent, Budget)
	}
}

// TestDiscoverExplicitAndProject: a --skills directory may be one skill's
// folder, or hold several; a missing one is a problem; the project's
// directories run from the repository root down, .agents before .claude.
func TestDiscoverExplicitAndProject(t *testing.T) {
	root := t.TempDir()
	one := filepath.Join(root, "one")
	writeSkill(t, root, "one", "---\nname: one\ndescription: d\n---\n")
	all := Discover(OS, []Dir{{Path: one, Source: "--skills", Explicit: true}, {Path: filepath.Join(root, "nope"), Source: "--skills", Explicit: true}})
	if len(all) != 2 || all[0].Name != "one" || len(all[1].Problems) != 1 {
		t.Errorf("%+v", all)
	}
	// A walk up from repo/a/b to repo (its root): .agents at the root and
	// at b, .claude at a.
	levels := []Level{{Dir: "/repo/a/b", Agents: true}, {Dir: "/repo/a", Claude: true}, {Dir: "/repo", Agents: true, Root: true}}
	var got []string
	for _, d := range ProjectDirs(levels) {
		got = append(got, d.Path)
	}
	want := []string{"/repo/.agents/skills", "/repo/a/.claude/skills", "/repo/a/b/.agents/skills"}
	if !slices.Equal(got, want) {
		t.Errorf("project dirs %q, want %q", got, want)
	}
	// Outside a repository (the walk ends at / with no .git): the run's
	// directory's own.
	levels[2].Root = false
	if d := ProjectDirs(levels); len(d) != 1 || d[0].Path != "/repo/a/b/.agents/skills" {
		t.Errorf("outside a repository: %+v", d)
	}
}

// TestBrokenSkillShadowsNothing: a skill with a problem is skipped, and
// the good skill of its name found earlier stays offered: a project's
// broken copy cannot take the user's skill away.
func TestBrokenSkillShadowsNothing(t *testing.T) {
	user, proj := t.TempDir(), t.TempDir()
	writeSkill(t, user, "deploy", "---\nname: deploy\ndescription: the user's\n---\n")
	writeSkill(t, proj, "deploy", "---\nname: deploy\ndescription: \"\"\n---\n")
	all := Discover(OS, []Dir{{Path: user, Source: "user"}, {Path: proj, Source: "project"}})
	off := Offered(all)
	if len(off) != 1 || off[0].Description != "the user's" || off[0].Source != "user" {
		t.Errorf("offered %+v, want the user's deploy", off)
	}
	if w := Warnings(all); len(w) != 1 || !strings.Contains(w[0], "description must be 1 to 1024 characters") || strings.Contains(w[0], "shadows") {
		t.Errorf("warnings %q, want the broken one skipped and no shadowing", w)
	}
}

// TestProjectDirsOutsideRepository: outside a repository only the run's
// directory's own skills are the project's, never a parent's (a
// /tmp/.agents/skills anyone could have made).
func TestProjectDirsOutsideRepository(t *testing.T) {
	// A walk up from /tmp/a/b that found no .git: every directory holds
	// .agents and .claude.
	var levels []Level
	for _, d := range []string{"/tmp/a/b", "/tmp/a", "/tmp", "/"} {
		levels = append(levels, Level{Dir: d, Agents: true, Claude: true})
	}
	var got []string
	for _, d := range ProjectDirs(levels) {
		got = append(got, d.Path)
	}
	if want := []string{"/tmp/a/b/.agents/skills", "/tmp/a/b/.claude/skills"}; !slices.Equal(got, want) {
		t.Errorf("project dirs %q, want %q", got, want)
	}
}

// TestDiscoverSharesNoBytes: Discover reads every SKILL.md into one
// buffer; a short file read after a long one is read alone, never with
// what is left of the other. b has no closing "---" of its own, where a's
// long front matter had one further on; c's description is shorter than
// a's, at the same place.
func TestDiscoverSharesNoBytes(t *testing.T) {
	dir := t.TempDir()
	var meta strings.Builder
	for i := range 1200 {
		fmt.Fprintf(&meta, "  k%d: v\n", i)
	}
	writeSkill(t, dir, "a", "---\nname: a\ndescription: "+strings.Repeat("x", 1000)+"\nmetadata:\n"+meta.String()+"---\nbody\n")
	writeSkill(t, dir, "b", "---\nname: b\ndescription: d\n")
	writeSkill(t, dir, "c", "---\nname: c\ndescription: short\n---\n")
	all := Discover(OS, []Dir{{Path: dir, Source: "project"}})
	if len(all) != 3 {
		t.Fatalf("%d skills", len(all))
	}
	if a := all[0]; len(a.Problems) > 0 || len(a.Metadata) != 1200 || len(a.Description) != 1000 {
		t.Errorf("a: %+v", a.Problems)
	}
	if b := all[1]; len(b.Problems) != 1 || !strings.Contains(b.Problems[0], `no closing "---" line`) {
		t.Errorf("b: %q", b.Problems)
	}
	if c := all[2]; len(c.Problems) > 0 || c.Description != "short" {
		t.Errorf("c: %q %q", c.Description, c.Problems)
	}
}

// TestFitHoldsTheBudget: past what Cut can do, Fit keeps the skills that
// come first by name and fit the budget, and names the rest; the entries
// kept are within it, quotes in a path counted as sent (&quot;).
func TestFitHoldsTheBudget(t *testing.T) {
	var offered []Skill
	for i := range 500 {
		offered = append(offered, Skill{Name: fmt.Sprintf("s%03d", i), Description: strings.Repeat("d", 200), Path: `/r/"q"/s/SKILL.md`})
	}
	Cut(offered, Budget)
	kept, left := Fit(offered, Budget)
	if len(kept) == 0 || len(kept)+len(left) != 500 || kept[len(kept)-1].Name >= left[0] {
		t.Fatalf("kept %d, left %d", len(kept), len(left))
	}
	n := 0
	for _, s := range kept {
		n += len(s.Name) + len(s.Description) + len(strings.ReplaceAll(s.Path, `"`, "&quot;")) + len(`<skill name="" path="">`+"</skill>\n")
	}
	if n > Budget {
		t.Errorf("the entries kept take %d bytes as sent, over %d", n, Budget)
	}
	if k, l := Fit(offered[:3], Budget); len(k) != 3 || l != nil {
		t.Errorf("three skills: kept %d, left %q", len(k), l)
	}
}
