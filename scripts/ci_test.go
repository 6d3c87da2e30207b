package scripts_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/awlrun/awl/internal/testenv"
)

// workflow is the part of a GitHub Actions workflow the test reads.
type workflow struct {
	Jobs map[string]struct {
		Steps []struct {
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// TestPublicCIRunsCIRun holds .github/workflows/ci.yml to .ci/run: a job
// sets up Go (from go.mod) and Node with their standard actions, with the
// whole history for the perf guard, then runs .ci/run with no stage
// chosen, as root; .ci/run runs scripts/ci.sh with its arguments, and
// nothing else in ci.yml runs make or go, so that no check lives in one
// and not the other.
func TestPublicCIRunsCIRun(t *testing.T) {
	data, err := os.ReadFile("../.github/workflows/ci.yml")
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(data, &w); err != nil {
		t.Fatalf("ci.yml: %v", err)
	}
	found := 0
	for name, job := range w.Jobs {
		var uses []string
		for _, s := range job.Steps {
			if regexp.MustCompile(`(^|[\s;&|])(make|go)\s`).MatchString(s.Run) {
				t.Errorf("ci.yml: job %s runs %q itself: put the check in scripts/ci.sh, which .ci/run runs", name, s.Run)
			}
			if s.Uses != "" {
				uses = append(uses, strings.Split(s.Uses, "@")[0])
			}
			if !strings.Contains(s.Run, ".ci/run") {
				continue
			}
			found++
			if !regexp.MustCompile(`^sudo .*\bbash \.ci/run$`).MatchString(strings.TrimSpace(s.Run)) {
				t.Errorf("ci.yml: job %s runs %q: run every stage (.ci/run with no arguments), as root", name, s.Run)
			}
			want := []string{"actions/checkout", "actions/setup-go", "actions/setup-node"}
			if !slices.Equal(uses, want) {
				t.Errorf("ci.yml: job %s uses %v before .ci/run, want %v", name, uses, want)
			}
			for _, s := range job.Steps {
				switch strings.Split(s.Uses, "@")[0] {
				case "actions/checkout":
					if s.With["fetch-depth"] != "0" {
						t.Errorf("ci.yml: checkout without fetch-depth: 0; the perf guard builds the commit scripts/perf-ref names")
					}
				case "actions/setup-go":
					if s.With["go-version-file"] != "go.mod" {
						t.Errorf("ci.yml: setup-go's Go is not go.mod's: %v", s.With)
					}
				}
			}
		}
	}
	if found != 1 {
		t.Errorf("ci.yml runs .ci/run in %d steps, want 1", found)
	}
	run, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(run), `exec bash "$(dirname "$0")/../scripts/ci.sh" "$@"`) {
		t.Errorf(".ci/run does not hand over to scripts/ci.sh:\n%s", run)
	}
}

// TestCIStages: scripts/ci.sh lists its stages, each a make target or its
// own setup, the README's two commands among them, and refuses a stage it
// does not have before running any.
func TestCIStages(t *testing.T) {
	testenv.RequireCommands(t, "bash")
	out, err := exec.Command("bash", "../.ci/run", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	stages := strings.Fields(string(out))
	for _, want := range []string{"deps", "check", "perf-guard", "demo", "test", "test-unprivileged", "conformance", "release-snapshot"} {
		if !slices.Contains(stages, want) {
			t.Errorf("ci.sh list: %v lacks %s", stages, want)
		}
	}
	if stages[0] != "deps" {
		t.Errorf("ci.sh's first stage is %s, want deps", stages[0])
	}
	makefile, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stages[1:] {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(s) + `:`).Match(makefile) {
			t.Errorf("stage %s has no make target of its name", s)
		}
	}
	cmd := exec.Command("bash", "../.ci/run", "check", "no-such-stage")
	b, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf(".ci/run check no-such-stage: %v, want exit 2", err)
	}
	if strings.Contains(string(b), "ci.sh: check") || !strings.Contains(string(b), "no stage no-such-stage") {
		t.Errorf(".ci/run check no-such-stage ran a stage or did not name the bad one:\n%s", b)
	}
}
