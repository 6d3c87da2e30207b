package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/awlrun/awl/cmd/awl/skills"
	"github.com/awlrun/awl/internal/oneline"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/modelctx"
)

// skillsFS is how skills are found and read; a test counts what a run
// does through it.
var skillsFS = skills.OS

// skillDirs are the directories a run in cwd takes skills from, in order,
// a later skill shadowing an earlier one of its name: the user's
// ($XDG_CONFIG_HOME/awl/skills), the project's (ProjectDirs), then
// --skills or the skills key.
func (c *runCmd) skillDirs(a *app, cwd string) ([]skills.Dir, error) {
	if c.NoSkills {
		return nil, nil
	}
	t, err := c.lookUp(a, cwd)
	if err != nil {
		return nil, err
	}
	var dirs []skills.Dir
	if t.UserSkills {
		dirs = append(dirs, skills.Dir{Path: filepath.Join(filepath.Dir(t.User), "skills"), Source: "user"})
	}
	levels := make([]skills.Level, len(t.Levels))
	for i, l := range t.Levels {
		levels[i] = skills.Level{Dir: l.Dir, Agents: l.Agents, Claude: l.Claude, Root: l.Git}
	}
	dirs = append(dirs, skills.ProjectDirs(levels)...)
	from := strings.TrimPrefix(c.origin("skills"), "--")
	for _, d := range c.Skills {
		// As the other path flags: from where awl was started (enterDir
		// made it absolute before -C).
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		dirs = append(dirs, skills.Dir{Path: d, Source: from, Explicit: true})
	}
	return dirs, nil
}

// loadSkills finds the skills a run offers, says on stderr what it skips
// and what shadows what, and cuts their catalogue to its budget. With
// --skills-strict a skill with a problem is exit 2.
func (c *runCmd) loadSkills(a *app, st *runSetup) error {
	dirs, err := c.skillDirs(a, st.cwd)
	if err != nil {
		return err
	}
	all := skills.Discover(skillsFS, dirs)
	if c.SkillsStrict {
		var problems []string
		for _, s := range all {
			problems = append(problems, s.Problems...)
		}
		if len(problems) > 0 {
			for i, p := range problems {
				problems[i] = safeLine(p)
			}
			return runner.Usagef("--skills-strict: " + strings.Join(problems, "\n"))
		}
	}
	warnSkills(a, all)
	offered := skills.Offered(all)
	warnCut(a, skills.Cut(offered, skills.Budget))
	offered, left := skills.Fit(offered, skills.Budget)
	warnLeft(a, left)
	if len(offered) > 0 {
		st.skills = make([]modelctx.Skill, 0, len(offered))
	}
	for _, s := range offered {
		st.skills = append(st.skills, modelctx.Skill{Name: s.Name, Description: s.Description, Path: s.Path})
	}
	return nil
}

// warnSkills says on stderr what of all is skipped and what shadows what,
// a line each.
func warnSkills(a *app, all []skills.Skill) {
	for _, w := range skills.Warnings(all) {
		fmt.Fprintln(a.stderr, "awl: warning:", safeLine(w))
	}
}

// warnCut says on stderr which skills' descriptions the catalogue's
// budget cut, if any.
func warnCut(a *app, cut []string) {
	if len(cut) > 0 {
		fmt.Fprintf(a.stderr, "awl: warning: the skills' catalogue is over its budget (about 8,000 tokens): the descriptions of %s are cut\n", someNames(cut))
	}
}

// warnLeft says on stderr which skills the catalogue's budget leaves out,
// ten by name at most.
func warnLeft(a *app, left []string) {
	if len(left) == 0 {
		return
	}
	fmt.Fprintf(a.stderr, "awl: warning: the skills' catalogue is over its budget with every description cut: %d skills are left out of it (%s)\n", len(left), someNames(left))
}

// someNames is the first 40 of names, then how many more: a warning of a
// line, not a repository's thousand skill names.
func someNames(names []string) string {
	s := strings.Join(names[:min(len(names), 40)], ", ")
	if len(names) > 40 {
		s += fmt.Sprintf(" and %d more", len(names)-40)
	}
	return s
}

// safeLine is s as one line for a terminal (internal/oneline), uncut
// below 64 KiB: a warning or a description quotes a SKILL.md, which may
// hold line breaks and escape sequences.
func safeLine(s string) string {
	return oneline.Cut(s, 64<<10)
}

// skillsCmd is `awl skills`: what a run here would offer.
type skillsCmd struct {
	Dir          string   `name:"cd" short:"C" placeholder:"DIR"`
	Skills       []string `name:"skills" sep:"none" placeholder:"DIR"`
	NoSkills     bool     `name:"no-skills"`
	Config       string   `name:"config" placeholder:"FILE"`
	NoConfig     bool     `name:"no-config"`
	Profile      string   `name:"profile" placeholder:"NAME"`
	TrustProject bool     `name:"trust-project"`
	JSON         bool     `name:"json"`
}

// Run lists every skill found: those offered, and those skipped or
// shadowed with why.
func (s *skillsCmd) Run(a *app) error {
	c := &runCmd{Dir: s.Dir, Config: s.Config, NoConfig: s.NoConfig, Profile: s.Profile, TrustProject: s.TrustProject, Skills: s.Skills, NoSkills: s.NoSkills}
	for _, f := range []struct {
		name string
		set  bool
	}{{"cd", s.Dir != ""}, {"skills", len(s.Skills) > 0}, {"no-skills", s.NoSkills}} {
		if f.set {
			c.given.add(f.name)
		}
	}
	if err := c.configure(a); err != nil {
		return err
	}
	cwd, err := filepath.Abs(c.Dir)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return runner.Usagef(fmt.Sprintf("--cd: %s is not a directory", cwd))
	}
	dirs, err := c.skillDirs(a, cwd)
	if err != nil {
		return err
	}
	all := skills.Discover(skillsFS, dirs)
	offered := skills.Offered(all)
	cut := skills.Cut(offered, skills.Budget)
	offered, left := skills.Fit(offered, skills.Budget)
	if s.JSON {
		return writeSkillsJSON(a, all, offered, cut, left)
	}
	var b strings.Builder
	for _, k := range offered {
		// A skill's text is the repository's: one line each, control
		// characters dropped, so a description can neither forge an
		// entry nor send an escape sequence to the terminal.
		fmt.Fprintf(&b, "%s\t%s\t%s\n  %s\n", k.Name, safeLine(k.Source), safeLine(displayPath(k.Path)), safeLine(k.Description))
		if len(k.AllowedTools) > 0 {
			fmt.Fprintf(&b, "  allowed-tools (shown, never granted): %s\n", safeLine(strings.Join(k.AllowedTools, " ")))
		}
	}
	warnSkills(a, all)
	warnCut(a, cut)
	warnLeft(a, left)
	_, err = a.stdout.Write([]byte(b.String()))
	return err
}

// writeSkillsJSON prints `awl skills --json`: every skill found, with
// offered telling which a run would offer.
func writeSkillsJSON(a *app, all, offered []skills.Skill, cut, left []string) error {
	type row struct {
		skills.Skill
		// Problems is always an array, [] for a sound skill, so that
		// jq -e 'all(.problems == [])' holds a clean set (docs/context.md).
		Problems []string `json:"problems"`
		Offered  bool     `json:"offered"`
		Cut      bool     `json:"description_cut,omitempty"`
		Left     bool     `json:"over_budget,omitempty"`
	}
	out := make([]row, 0, len(all))
	for _, s := range all {
		r := row{Skill: s, Problems: s.Problems}
		for _, o := range offered {
			if o.Path == s.Path {
				r.Skill.Description, r.Offered = o.Description, true
			}
		}
		for _, n := range cut {
			r.Cut = r.Cut || r.Offered && n == s.Name
		}
		if len(s.Problems) == 0 && s.ShadowedBy == "" && slices.Contains(left, s.Name) {
			r.Left = true
		}
		if r.Problems == nil {
			r.Problems = []string{}
		}
		out = append(out, r)
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = a.stdout.Write(append(data, '\n'))
	return err
}
