package modelctx

import (
	"strings"
	"testing"
)

// TestSkillsFragmentDiff: the catalogue in full with no baseline; nothing
// when the skills are those of the baseline (a resume extends the last
// request byte for byte); then only the skills added or changed and the
// names of those gone; and the baseline's skills survive its JSON.
func TestSkillsFragmentDiff(t *testing.T) {
	base := State{System: "s", Tools: []string{"read"}}
	cur := base
	cur.Skills = []Skill{
		{Name: "lint", Description: "Lint <everything> & more.", Path: "/r/.agents/skills/lint/SKILL.md"},
		{Name: "release", Description: "Cut a release.", Path: "/r/.agents/skills/release/SKILL.md"},
	}
	full := Build(cur, nil)
	var cat string
	for _, b := range full[0].Content {
		if strings.HasPrefix(b.Text, "<skills>") {
			cat = b.Text
		}
	}
	want := "<skills>\n" + skillsIntro + "\n" +
		`<skill name="lint" path="/r/.agents/skills/lint/SKILL.md">Lint &lt;everything&gt; &amp; more.</skill>` + "\n" +
		`<skill name="release" path="/r/.agents/skills/release/SKILL.md">Cut a release.</skill>` + "\n</skills>"
	if cat != want {
		t.Fatalf("catalogue:\n%s\nwant\n%s", cat, want)
	}
	if got := Build(cur, baseOf(cur)); got != nil {
		t.Errorf("unchanged skills appended %v", got)
	}
	if got := Build(base, baseOf(base)); got != nil {
		t.Errorf("no skills appended %v", got)
	}
	next := cur
	next.Skills = []Skill{
		{Name: "lint", Description: "Lint only what changed.", Path: "/r/.agents/skills/lint/SKILL.md"},
		{Name: "migrate", Description: "Write a migration.", Path: "/r/.claude/skills/migrate/SKILL.md"},
	}
	diff := Build(next, baseOf(cur))
	if len(diff) != 1 || len(diff[0].Content) != 1 {
		t.Fatalf("diff: %v", diff)
	}
	want = "<skills_changed>\nThese skills are new or changed:\n" +
		`<skill name="lint" path="/r/.agents/skills/lint/SKILL.md">Lint only what changed.</skill>` + "\n" +
		`<skill name="migrate" path="/r/.claude/skills/migrate/SKILL.md">Write a migration.</skill>` + "\n" +
		"These skills are no longer available: release.\n</skills_changed>"
	if got := diff[0].Content[0].Text; got != want {
		t.Errorf("diff:\n%s\nwant\n%s", got, want)
	}
	gone := Build(base, baseOf(next))
	if len(gone) != 1 || gone[0].Content[0].Text != "<skills_changed>\nThese skills are no longer available: lint, migrate.\n</skills_changed>" {
		t.Errorf("all gone: %v", gone)
	}
	b := cur.Baseline()
	parsed, err := ParseBaseline(b.Fields())
	if err != nil || len(parsed.Skills) != 2 || parsed.Skills[1] != b.Skills[1] || !strings.Contains(string(b.Fields()), `"skills":[{"name":"lint","digest":"`) {
		t.Errorf("baseline JSON: %s %+v %v", b.Fields(), parsed.Skills, err)
	}
}
