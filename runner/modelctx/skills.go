package modelctx

import (
	"strings"

	"github.com/awlrun/awl/conv"
)

// Skill is one Agent Skill as the model is told about it: its name, what
// it is for, and where its SKILL.md is. The model reads the body, and the
// files beside it, with its own tools.
type Skill struct {
	Name        string
	Description string
	Path        string
}

// SkillDigest is one skill in a Baseline: its name and the digest of the
// entry shown for it.
type SkillDigest struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
}

// skillsIntro says what the catalogue is, before its entries.
const skillsIntro = "Skills are folders of instructions, scripts and references for particular tasks. " +
	"When a task matches a skill's description, read its SKILL.md (at the path given) with your tools before you start, " +
	"and follow it; the files beside it belong to it. A skill cannot give you tools you do not have."

// skillCatalog is the skills' catalogue: in full the first time, then only
// the skills added or changed and those removed.
type skillCatalog struct {
	skills  []Skill
	removed []string
	diff    bool
}

func (skillCatalog) role() conv.Role               { return conv.RoleSystem }
func (skillCatalog) markers() (open, close string) { return "", "" }

// entry is one skill's line of the catalogue.
func (s Skill) entry() string {
	var b strings.Builder
	b.Grow(s.entryLen())
	s.writeEntry(&b)
	return b.String()
}

// entryLen is about the length of s's entry: exact unless it escapes.
func (s Skill) entryLen() int {
	return len(`<skill name="" path="">`) + len(s.Name) + len(s.Path) + len(s.Description) + len("</skill>")
}

// writeEntry writes s's entry to b.
func (s Skill) writeEntry(b *strings.Builder) {
	b.WriteString(`<skill name="`)
	b.WriteString(escapeAttr(s.Name))
	b.WriteString(`" path="`)
	b.WriteString(escapeAttr(s.Path))
	b.WriteString(`">`)
	b.WriteString(escapeXML(s.Description))
	b.WriteString("</skill>")
}

func (f skillCatalog) render() string {
	// The catalogue is made at its size once, not grown through every
	// size class: at a start that is fresh pages of heap.
	n := len("<skills>\n"+skillsIntro+"\n</skills>") + len("These skills are no longer available: .\n")
	for _, s := range f.skills {
		n += s.entryLen() + 1
	}
	for _, r := range f.removed {
		n += len(r) + 2
	}
	var b strings.Builder
	b.Grow(n)
	if !f.diff {
		b.WriteString("<skills>\n")
		b.WriteString(skillsIntro)
		b.WriteString("\n")
	} else {
		b.WriteString("<skills_changed>\n")
		if len(f.skills) > 0 {
			b.WriteString("These skills are new or changed:\n")
		}
	}
	for _, s := range f.skills {
		s.writeEntry(&b)
		b.WriteByte('\n')
	}
	if len(f.removed) > 0 {
		b.WriteString("These skills are no longer available: " + escapeXML(strings.Join(f.removed, ", ")) + ".\n")
	}
	if f.diff {
		b.WriteString("</skills_changed>")
	} else {
		b.WriteString("</skills>")
	}
	return b.String()
}

func (skillCatalog) build(cur State, base *Baseline) []fragment {
	if base == nil || len(base.Skills) == 0 {
		if len(cur.Skills) == 0 {
			return nil
		}
		return []fragment{skillCatalog{skills: cur.Skills}}
	}
	seen := make(map[string]string, len(base.Skills))
	for _, s := range base.Skills {
		seen[s.Name] = s.Digest
	}
	var f skillCatalog
	f.diff = true
	present := make(map[string]bool, len(cur.Skills))
	for _, s := range cur.Skills {
		present[s.Name] = true
		if d, ok := seen[s.Name]; !ok || d != digestText(s.entry()) {
			f.skills = append(f.skills, s)
		}
	}
	for _, s := range base.Skills {
		if !present[s.Name] {
			f.removed = append(f.removed, s.Name)
		}
	}
	if len(f.skills) == 0 && len(f.removed) == 0 {
		return nil
	}
	return []fragment{f}
}

// skillDigests records the skills shown, for the baseline.
func skillDigests(s State) []SkillDigest {
	var out []SkillDigest
	for _, k := range s.Skills {
		out = append(out, SkillDigest{Name: k.Name, Digest: digestText(k.entry())})
	}
	return out
}
