package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// configGoal is how much slower one configuration file and ten skills may
// make a start (issue 45).
const configGoal = 0.10

// ConfigFigures are what -config measured: a text run's start in a
// repository with one .awl/config.toml and ten skills (Files) against one
// in an empty repository (None), each round's floor measured with them.
type ConfigFigures struct {
	Rounds int `json:"rounds"`
	// NoneStartMs and FilesStartMs are the medians of the starts; Min and
	// Max their spread.
	NoneStartMs  float64 `json:"noneStartMs"`
	NoneMinMs    float64 `json:"noneMinMs"`
	NoneMaxMs    float64 `json:"noneMaxMs"`
	FilesStartMs float64 `json:"filesStartMs"`
	FilesMinMs   float64 `json:"filesMinMs"`
	FilesMaxMs   float64 `json:"filesMaxMs"`
	// NoneRatio and FilesRatio are the start ratios against the floor
	// (the medians over the floor's median).
	NoneRatio  float64 `json:"noneRatio"`
	FilesRatio float64 `json:"filesRatio"`
	// Rise is the median of the rounds' Files/None ratios, less one: what
	// the files add to the start, paired; RiseP25 and RiseP75 its
	// quartiles (one round's pair moves by ±80 % on a loaded machine).
	Rise    float64 `json:"rise"`
	RiseP25 float64 `json:"riseP25"`
	RiseP75 float64 `json:"riseP75"`
	// Load is the load average (1 minute) before and after the rounds.
	LoadBefore string `json:"loadBefore,omitempty"`
	LoadAfter  string `json:"loadAfter,omitempty"`
}

// teamConfig is a team's .awl/config.toml: what issue 45 has a team check
// in (no sandbox key: its set-up is the sandbox's cost, not the file's).
const teamConfig = `# The team's agent.
model = "claude-sonnet-4-5"
tools = ["read", "grep", "glob", "ls", "bash(git diff *)", "bash(go test ./...)"]
deny-tools = ["read(**/.env)"]
max-cost-usd = 2.0
max-turns = 40
timeout = "15m"
append-system = "Follow the conventions of AGENTS.md."

[profile.review]
tools = ["read", "grep", "glob"]
max-turns = 20

[profile.fix]
max-turns = 60
`

// writeTeamRepo makes dir a repository (a .git directory) and, with files,
// gives it teamConfig and ten skills: seven in .agents/skills, three in
// .claude/skills, each a SKILL.md with a description of a real skill's
// length and a body of about 4 KB.
func writeTeamRepo(dir string, files bool) error {
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		return err
	}
	if !files {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(dir, ".awl"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ".awl", "config.toml"), []byte(teamConfig), 0o644); err != nil {
		return err
	}
	body := strings.Repeat("Run the step, read what it prints, and fix what it says before the next one.\n", 54)
	for i := range 10 {
		name := fmt.Sprintf("team-skill-%d", i)
		where := ".agents"
		if i >= 7 {
			where = ".claude"
		}
		p := filepath.Join(dir, where, "skills", name, "SKILL.md")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		doc := fmt.Sprintf("---\nname: %s\ndescription: How this team does task %d (cutting a release, writing a migration, triaging a flaky test), step by step, with the commands to run and what to check after each. Use it when the task is that one.\nlicense: Apache-2.0\nmetadata:\n  owner: platform-team\n  version: \"1.%d\"\nallowed-tools: Read Grep Bash(git *)\n---\n# Task %d\n\n%s", name, i, i, i, body)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// config runs rounds paired rounds: the floor, then a text run of awlBin
// in a repository with no file and in one with teamConfig and ten skills,
// which of the two goes first alternating, all with the same user (no
// user file, no user skills).
func (r *runner) config(awlBin, floor, work string, rounds int) (*ConfigFigures, error) {
	dirs := [2]string{filepath.Join(work, "repo-none"), filepath.Join(work, "repo-files")}
	for i, d := range dirs {
		if err := writeTeamRepo(d, i == 1); err != nil {
			return nil, err
		}
	}
	runs := [2]*runner{}
	for i, d := range dirs {
		runs[i] = &runner{srv: r.srv, env: r.env, dir: d}
		// One warm-up each (the page cache), which checks that the run
		// offers the model the ten skills, or none.
		if _, err := runs[i].once([]string{awlBin, "run", "--no-stdin", "hello"}, nil); err != nil {
			return nil, err
		}
		body := r.srv.lastBody()
		for k := range 10 {
			if got := strings.Contains(body, fmt.Sprintf("team-skill-%d", k)); got != (i == 1) {
				return nil, fmt.Errorf("%s: the request offers team-skill-%d: %v", d, k, got)
			}
		}
	}
	fig := &ConfigFigures{Rounds: rounds, LoadBefore: loadAverage()}
	var floorS []float64
	var starts [2][]float64
	var rises []float64
	for i := range rounds {
		f, err := r.once([]string{floor}, nil)
		if err != nil {
			return nil, err
		}
		floorS = append(floorS, f.first)
		var got [2]float64
		for j := range 2 {
			k := (i + j) % 2
			res, err := runs[k].once([]string{awlBin, "run", "--no-stdin", "hello"}, nil)
			if err != nil {
				return nil, err
			}
			got[k] = res.first
		}
		starts[0], starts[1] = append(starts[0], got[0]), append(starts[1], got[1])
		rises = append(rises, got[1]/got[0]-1)
	}
	fig.LoadAfter = loadAverage()
	fig.NoneStartMs, fig.NoneMinMs, fig.NoneMaxMs = median(starts[0]), minOf(starts[0]), maxOf(starts[0])
	fig.FilesStartMs, fig.FilesMinMs, fig.FilesMaxMs = median(starts[1]), minOf(starts[1]), maxOf(starts[1])
	fig.NoneRatio, fig.FilesRatio = fig.NoneStartMs/median(floorS), fig.FilesStartMs/median(floorS)
	fig.Rise, fig.RiseP25, fig.RiseP75 = median(rises), quantile(rises, 0.25), quantile(rises, 0.75)
	return fig, nil
}

func minOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

// quantile is the q-quantile of xs, the nearest rank.
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1)+0.5)]
}

func maxOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// loadAverage is /proc/loadavg's first three figures, "" where there is
// none.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
