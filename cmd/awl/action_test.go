package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/session"
)

// actionFile is the metadata of a composite action. It is decoded with
// KnownFields, so a misspelt key fails the test.
type actionFile struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Author      string            `yaml:"author"`
	Branding    map[string]string `yaml:"branding"`
	Inputs      map[string]struct {
		Description string  `yaml:"description"`
		Default     *string `yaml:"default"`
		Required    bool    `yaml:"required"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionStep struct {
	ID               string            `yaml:"id"`
	ContinueOnError  string            `yaml:"continue-on-error"`
	Name             string            `yaml:"name"`
	If               string            `yaml:"if"`
	Uses             string            `yaml:"uses"`
	Shell            string            `yaml:"shell"`
	Run              string            `yaml:"run"`
	WorkingDirectory string            `yaml:"working-directory"`
	Env              map[string]string `yaml:"env"`
	With             map[string]string `yaml:"with"`
}

// actionOnlyInputs are the inputs that drive the action itself rather than
// an `awl run` flag.
var actionOnlyInputs = map[string]bool{
	"working-directory": true,
	"upload-session":    true,
	"artifact-name":     true,
	"report":            true,
	"fail-on-error":     true,
	"version":           true,
	"install-only":      true,
}

func loadAction(t *testing.T) (actionFile, []byte) {
	t.Helper()
	data, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a, data
}

func (a actionFile) step(t *testing.T, id string) actionStep {
	t.Helper()
	for _, s := range a.Runs.Steps {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("action.yml has no step with id %q", id)
	return actionStep{}
}

// runFlags returns the long flags `awl run` accepts, read from the kong
// grammar: runCmd's fields and the global flags of cli.
func runFlags() map[string]bool {
	flags := map[string]bool{}
	add := func(typ reflect.Type) {
		for i := range typ.NumField() {
			tag := typ.Field(i).Tag
			if _, isArg := tag.Lookup("arg"); isArg {
				continue
			}
			if _, isCmd := tag.Lookup("cmd"); isCmd {
				continue
			}
			if name := tag.Get("name"); name != "" {
				flags[name] = true
			}
		}
	}
	add(reflect.TypeFor[runCmd]())
	add(reflect.TypeFor[cli]())
	return flags
}

var inputExpr = regexp.MustCompile(`^\$\{\{ inputs\.([a-z0-9-]+) \}\}$`)

// TestActionYAML checks action.yml's shape and that every input it passes
// to awl names a flag `awl run` really has.
func TestActionYAML(t *testing.T) {
	a, raw := loadAction(t)
	if a.Name == "" || a.Description == "" {
		t.Errorf("action.yml needs a name and a description")
	}
	for name, in := range a.Inputs {
		if in.Description == "" {
			t.Errorf("input %q has no description", name)
		}
	}
	if a.Runs.Using != "composite" {
		t.Errorf("runs.using = %q, want composite", a.Runs.Using)
	}
	for _, in := range []string{"prompt", "resume", "model", "provider", "tools", "max-turns", "timeout"} {
		if _, ok := a.Inputs[in]; !ok {
			t.Errorf("input %q is missing", in)
		}
	}
	for _, out := range []string{"session_id", "session_path", "exit_code", "result"} {
		o, ok := a.Outputs[out]
		if !ok {
			t.Errorf("output %q is missing", out)
			continue
		}
		if o.Value != "${{ steps.run.outputs."+out+" }}" {
			t.Errorf("output %q = %q, want it from the run step", out, o.Value)
		}
	}
	var uses []string
	for _, s := range a.Runs.Steps {
		if s.Uses != "" {
			uses = append(uses, s.Uses)
		}
		if s.Run != "" && s.Shell != "bash" {
			t.Errorf("step %q: shell %q, want bash (composite run steps need one)", s.Name, s.Shell)
		}
	}
	for _, want := range []string{"actions/cache@", "actions/upload-artifact@"} {
		if !strings.Contains(strings.Join(uses, " "), want) {
			t.Errorf("no step uses %s (steps use %v)", want, uses)
		}
	}
	// The action installs a binary and changes nothing else in the job: a
	// setup-go step would leave its Go on PATH for the user's later steps.
	if strings.Contains(strings.Join(uses, " "), "actions/setup-go@") {
		t.Errorf("a step uses actions/setup-go; the action must not change the job's Go")
	}
	// With install-only, no step may fail for want of a run.
	for _, s := range a.Runs.Steps {
		if s.If != "" && strings.Contains(s.If, "fail-on-error") && !strings.Contains(s.If, "install-only") {
			t.Errorf("step %q fails the job on exit_code even with install-only", s.Name)
		}
	}

	// A resumed session keeps its id, and so the default artifact name: a
	// second upload in the same workflow run must replace the first.
	for _, s := range a.Runs.Steps {
		if strings.HasPrefix(s.Uses, "actions/upload-artifact@") && s.With["overwrite"] != "true" {
			t.Errorf("step %q: want overwrite: true, or a resumed session's second upload fails", s.Name)
		}
	}

	run := a.step(t, "run")
	known := runFlags()
	// awl's arguments are built in one bash array, args.
	groups := regexp.MustCompile(`\bargs\+?=\(([^)]*)\)`).FindAllStringSubmatch(run.Run, -1)
	if len(groups) < len(a.Inputs)-len(actionOnlyInputs) {
		t.Errorf("the run step adds to args %d times, want one per awl input at least", len(groups))
	}
	for _, g := range groups {
		for _, m := range regexp.MustCompile(`(?:^|[\s"])--([a-z][a-z0-9-]*)`).FindAllStringSubmatch(g[1], -1) {
			if !known[m[1]] {
				t.Errorf("the run step passes --%s, which awl run does not have", m[1])
			}
		}
	}
	// A value is joined to its flag in one word, --flag=value: as two
	// words, a value that starts with "-" (a Markdown list prompt) could be
	// taken for a flag.
	word := regexp.MustCompile(`"[^"]*"|\S+`)
	for _, g := range groups {
		words := word.FindAllString(g[1], -1)
		for i := 1; i < len(words); i++ {
			if strings.HasPrefix(strings.Trim(words[i-1], `"`), "--") && strings.HasPrefix(strings.Trim(words[i], `"`), "$") {
				t.Errorf("the run step passes %s %s: want one word, \"%s=%s\"", words[i-1], words[i], strings.Trim(words[i-1], `"`), strings.Trim(words[i], `"`))
			}
		}
	}
	if !strings.Contains(run.Run, `awl" "${args[@]}"`) {
		t.Errorf("the run step does not run awl with args")
	}
	if strings.Contains(run.Run, "${{") {
		t.Errorf("the run step pastes an expression into the script; pass it through env")
	}

	// Each input reaches awl as the flag of the same name, through an env
	// variable used on the line that adds the flag; the action's own inputs
	// are used by the action.
	envOf := map[string]string{}
	for k, v := range run.Env {
		m := inputExpr.FindStringSubmatch(v)
		if m == nil {
			t.Errorf("run step env %s = %q: want ${{ inputs.NAME }}", k, v)
			continue
		}
		envOf[m[1]] = k
	}
	for name := range a.Inputs {
		if actionOnlyInputs[name] {
			if !strings.Contains(string(raw), "inputs."+name) {
				t.Errorf("input %q is never used", name)
			}
			continue
		}
		if !known[name] {
			t.Errorf("input %q is not an awl run flag", name)
			continue
		}
		v, ok := envOf[name]
		if !ok {
			t.Errorf("input %q does not reach the run step's env", name)
			continue
		}
		re := regexp.MustCompile(`(?m)^.*\$` + v + `\b.*--` + name + `\b.*$|^.*--` + name + `\b.*\$` + v + `\b.*$`)
		if !re.MatchString(run.Run) {
			t.Errorf("input %q: no line passes $%s as --%s", name, v, name)
		}
	}
}

// actionRun runs action.yml's run step with bash as GitHub would: inputs
// through the env it declares (defaults from action.yml), outputs to a
// GITHUB_OUTPUT file, awl at $RUNNER_TEMP/awl-bin/awl. It returns the step's
// outputs.
func actionRun(t *testing.T, a actionFile, dir string, env []string, inputs map[string]string) map[string]string {
	t.Helper()
	out, _ := actionStepRun(t, a, "run", dir, env, inputs, nil)
	return out
}

// stepExpr is a step's env value taken from an earlier step's output.
var stepExpr = regexp.MustCompile(`^\$\{\{ steps\.([a-z]+)\.outputs\.([a-z_]+) \}\}$`)

// actionStepRun runs the step id as actionRun runs the run step; its env
// may also take the outputs of earlier steps (prior, by step id). It
// returns the step's outputs and its log (stdout and stderr).
func actionStepRun(t *testing.T, a actionFile, id, dir string, env []string, inputs map[string]string, prior map[string]map[string]string) (map[string]string, string) {
	t.Helper()
	run := a.step(t, id)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "awl-bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// TestMain runs Main when the test binary is called awl.
	if err := os.Symlink(exe, filepath.Join(bin, "awl")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "github_output")
	cmd := exec.Command("bash", "-e", "-c", run.Run)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RUNNER_TEMP="+tmp, "GITHUB_OUTPUT="+out, "GITHUB_STEP_SUMMARY=")
	cmd.Env = append(cmd.Env, env...)
	for k, v := range run.Env {
		if m := stepExpr.FindStringSubmatch(v); m != nil {
			cmd.Env = append(cmd.Env, k+"="+prior[m[1]][m[2]])
			continue
		}
		name := inputExpr.FindStringSubmatch(v)[1]
		val, ok := inputs[name]
		if !ok && a.Inputs[name].Default != nil {
			val = *a.Inputs[name].Default
		}
		cmd.Env = append(cmd.Env, k+"="+val)
	}
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s step: %v\n%s", id, err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return parseGithubOutput(t, string(data)), string(b)
}

// parseGithubOutput reads a GITHUB_OUTPUT file: name=value lines and
// name<<DELIM heredocs.
func parseGithubOutput(t *testing.T, s string) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		line := sc.Text()
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			var val []string
			closed := false
			for sc.Scan() {
				if sc.Text() == delim {
					closed = true
					break
				}
				val = append(val, sc.Text())
			}
			if !closed {
				t.Fatalf("GITHUB_OUTPUT: %s<<%s is not closed", name, delim)
			}
			out[name] = strings.Join(val, "\n")
			continue
		}
		name, val, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("GITHUB_OUTPUT: bad line %q", line)
		}
		out[name] = val
	}
	return out
}

// TestActionRunStep runs the action's run step against the fake provider:
// the outputs, a multi-line result, a resumed session, a limit's exit code,
// and a replay of the example.
func TestActionRunStep(t *testing.T) {
	a, srv, work, env := actionRig(t)

	answer := "Done.\nThe build passes.\nAWL_EOF line that is not the delimiter"
	srv.Enqueue(providertest.Text("anthropic", answer))
	out := actionRun(t, a, work, env, map[string]string{"prompt": "check the build", "max-turns": "3", "tools": "read,ls"})
	if out["exit_code"] != "0" || out["reason"] != "completed" {
		t.Fatalf("outputs %v, want exit_code 0, reason completed", out)
	}
	if out["result"] != answer {
		t.Errorf("result = %q, want %q", out["result"], answer)
	}
	if _, err := os.Stat(out["session_path"]); err != nil || out["session_id"] == "" || !strings.Contains(out["session_path"], out["session_id"]) {
		t.Errorf("session_id %q, session_path %q: %v", out["session_id"], out["session_path"], err)
	}
	var req struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &req); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(req.Tools) != "[{read} {ls}]" {
		t.Errorf("tools offered %v, want read and ls (the tools input)", req.Tools)
	}

	// Every value reaches awl as it is: a YAML bullet list or a value that
	// starts with "-" is not taken for a flag, and quotes, $() and
	// backticks are not run by the shell.
	prompt := "- fix the bug\n- run tests\nthen say \"done\" or 'ok': $(touch pwned) `touch pwned` $HOME \\n"
	srv.Enqueue(providertest.Text("anthropic", "Fixed."))
	outDash := actionRun(t, a, work, env, map[string]string{"prompt": prompt, "append-system": "-be terse", "model": "claude-test"})
	if outDash["exit_code"] != "0" || outDash["result"] != "Fixed." {
		t.Fatalf("outputs %v, want exit_code 0 with a prompt and append-system that start with -", outDash)
	}
	var dashReq struct {
		System []struct {
			Text string `json:"text"`
		} `json:"system"`
		Messages []struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.Requests()[1].Body, &dashReq); err != nil {
		t.Fatal(err)
	}
	if m := dashReq.Messages; len(m) == 0 || len(m[len(m)-1].Content) == 0 || m[len(m)-1].Content[len(m[len(m)-1].Content)-1].Text != prompt {
		t.Errorf("the provider got messages %+v, want the prompt %q verbatim last", m, prompt)
	}
	appended := false
	for _, b := range dashReq.System {
		appended = appended || strings.TrimSpace(b.Text) == "-be terse"
	}
	if !appended {
		t.Errorf("system blocks %+v, want one that is the append-system input", dashReq.System)
	}
	if _, err := os.Stat(filepath.Join(work, "pwned")); err == nil {
		t.Errorf("the prompt ran a command")
	}

	// The resume input continues the session from its path.
	srv.Enqueue(providertest.Text("anthropic", "Second."))
	out2 := actionRun(t, a, work, env, map[string]string{"prompt": "and now?", "resume": out["session_path"]})
	if out2["exit_code"] != "0" || out2["session_id"] != out["session_id"] || out2["result"] != "Second." {
		t.Errorf("resumed outputs %v, want exit 0 in session %s", out2, out["session_id"])
	}

	// A limit: exit_code 6 is an output; the step itself succeeds.
	srv.Enqueue(providertest.ToolCall("anthropic", "toolu_1", "ls", `{}`))
	out3 := actionRun(t, a, work, env, map[string]string{"prompt": "list", "max-turns": "1"})
	if out3["exit_code"] != "6" || out3["reason"] != "max_turns" || out3["result"] != "" {
		t.Errorf("outputs %v, want exit_code 6, reason max_turns, no result", out3)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Errorf("the provider got %d requests, want 4", n)
	}

	// Replay of the example, in a copy of its workspace, with no key.
	ws := filepath.Join(t.TempDir(), "workspace")
	if err := os.CopyFS(ws, os.DirFS("../../examples/workspace")); err != nil {
		t.Fatal(err)
	}
	rec, err := filepath.Abs("../../examples/summarise.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	out4 := actionRun(t, a, ws, append(env, "ANTHROPIC_API_KEY="), map[string]string{"provider": "replay", "replay": rec})
	if out4["exit_code"] != "0" || !strings.HasPrefix(out4["result"], "I wrote SUMMARY.md") {
		t.Errorf("replay outputs %v, want exit_code 0", out4)
	}
	if _, err := os.Stat(filepath.Join(ws, "SUMMARY.md")); err != nil {
		t.Errorf("the replay did not write SUMMARY.md: %v", err)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Errorf("the replay reached the provider (%d requests)", n)
	}
}

// TestActionReplaysAPipeline: the replay input works for resumed steps.
// examples/pipeline.jsonl replays as three uses of the action, as three
// jobs would run them: a new session, resume by id, and resume by the path
// of the session carried as an artifact, with output-schema. A changed tool
// result in the resumed step fails it with replay_diverged.
func TestActionReplaysAPipeline(t *testing.T) {
	a, srv, _, env := actionRig(t)
	env = append(env, "ANTHROPIC_API_KEY=")
	rec, err := filepath.Abs("../../examples/pipeline.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	schema, err := filepath.Abs("../../examples/pipeline.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	workspace := func() string {
		ws := filepath.Join(t.TempDir(), "workspace")
		if err := os.CopyFS(ws, os.DirFS("../../examples/workspace")); err != nil {
			t.Fatal(err)
		}
		return ws
	}
	step := func(ws string, inputs map[string]string) map[string]string {
		inputs["provider"], inputs["replay"] = "replay", rec
		return actionRun(t, a, ws, env, inputs)
	}

	ws := workspace()
	out1 := step(ws, map[string]string{"prompt": "Plan the 0.4 changelog from the notes in this directory."})
	if out1["exit_code"] != "0" || !strings.HasPrefix(out1["result"], "Plan for the 0.4 changelog") {
		t.Fatalf("step 1 outputs %v", out1)
	}
	out2 := step(ws, map[string]string{"prompt": "Write the changelog to CHANGELOG.md.", "resume": out1["session_id"]})
	if out2["exit_code"] != "0" || out2["session_id"] != out1["session_id"] || !strings.HasPrefix(out2["result"], "I wrote CHANGELOG.md") {
		t.Fatalf("step 2 outputs %v", out2)
	}
	// The next job downloads the session artifact: a copy, resumed by path.
	artifact := filepath.Join(t.TempDir(), "artifact.jsonl")
	data, err := os.ReadFile(out2["session_path"])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(artifact, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out3 := step(ws, map[string]string{"prompt": "Report what you changed.", "resume": artifact, "output-schema": schema})
	if out3["exit_code"] != "0" || !strings.Contains(out3["structured"], `"files":["CHANGELOG.md"]`) {
		t.Fatalf("step 3 outputs %v", out3)
	}

	// Step 2 again, in a workspace where CHANGELOG.md exists: the write
	// reports an overwrite, and the step fails with the diff.
	ws2 := workspace()
	out1 = step(ws2, map[string]string{"prompt": "Plan the 0.4 changelog from the notes in this directory."})
	if err := os.WriteFile(filepath.Join(ws2, "CHANGELOG.md"), []byte("# Changelog\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out2 = step(ws2, map[string]string{"prompt": "Write the changelog to CHANGELOG.md.", "resume": out1["session_path"]})
	if out2["exit_code"] != "5" || out2["reason"] != "replay_diverged" {
		t.Fatalf("diverged step 2 outputs %v", out2)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the replay reached the provider (%d requests)", n)
	}
}

// TestActionForkAndSessionID: the session-id input names the plan's
// session up front; fork (by that id) and session-id start a variant whose
// history is the plan's and whose id is the one given, leaving the plan's
// file as it was; a taken session-id is exit code 3 with no request made.
func TestActionForkAndSessionID(t *testing.T) {
	a, srv, work, env := actionRig(t)
	const plan, variant = "0b9c7d6e-5f4a-4b3c-8d2e-1f0a9b8c7d6e", "6e7d8c9b-0a1f-4e2d-9c3b-4a5f6e7d8c9b"
	srv.Enqueue(providertest.Text("anthropic", "the plan"))
	out := actionRun(t, a, work, env, map[string]string{"prompt": "plan it", "session-id": plan})
	if out["exit_code"] != "0" || out["session_id"] != plan {
		t.Fatalf("plan outputs %v, want exit 0 in session %s", out, plan)
	}
	before, err := os.ReadFile(out["session_path"])
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(providertest.Text("anthropic", "variant a"))
	out2 := actionRun(t, a, work, env, map[string]string{"prompt": "carry it out", "fork": plan, "session-id": variant})
	if out2["exit_code"] != "0" || out2["session_id"] != variant || out2["result"] != "variant a" {
		t.Fatalf("fork outputs %v, want exit 0 in session %s", out2, variant)
	}
	if after, _ := os.ReadFile(out["session_path"]); !bytes.Equal(after, before) {
		t.Error("the fork changed the plan's file")
	}
	s, err := session.Load(out2["session_path"])
	if err != nil {
		t.Fatal(err)
	}
	if s.Header.ForkedFrom != plan {
		t.Errorf("the fork's header: forkedFrom %q, want %s", s.Header.ForkedFrom, plan)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !bytes.Contains(reqs[1].Body, []byte("the plan")) {
		t.Fatalf("%d requests; the fork's does not carry the plan", len(reqs))
	}
	out3 := actionRun(t, a, work, env, map[string]string{"prompt": "again", "session-id": plan})
	if out3["exit_code"] != "3" || out3["reason"] != "session_error" {
		t.Errorf("a taken session-id: outputs %v, want exit_code 3", out3)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("a taken session-id made a request (%d in all)", n)
	}
}

// TestActionDocs checks the workflows in docs/ci.md and
// .github/workflows/ci.yml: every YAML block parses, every step that uses
// this action passes only inputs action.yml has, and every `awl run` in the
// docs and scripts uses only flags awl run has.
func TestActionDocs(t *testing.T) {
	a, _ := loadAction(t)
	known := runFlags()
	files := []string{"../../docs/ci.md", "../../.github/workflows/ci.yml", "../../examples/README.md", "../../scripts/demo.sh", "../../scripts/demo-pipeline.sh", "../../README.md"}
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```")
	awlRun := regexp.MustCompile(`\bawl" run\b[^\n]*|\bawl run\b[^\n]*`)
	flag := regexp.MustCompile(`(?:^|\s)--([a-z][a-z0-9-]*)`)
	steps := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var docs []string
		if strings.HasSuffix(f, ".yml") {
			docs = []string{string(data)}
		} else {
			for _, m := range block.FindAllStringSubmatch(string(data), -1) {
				docs = append(docs, m[1])
			}
		}
		for i, doc := range docs {
			var v any
			if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
				t.Errorf("%s: YAML block %d: %v", f, i+1, err)
				continue
			}
			walkYAML(v, func(m map[string]any) {
				uses, _ := m["uses"].(string)
				if uses != "./" && !strings.HasPrefix(uses, "awlrun/awl@") {
					return
				}
				steps++
				with, _ := m["with"].(map[string]any)
				for k := range with {
					if _, ok := a.Inputs[k]; !ok {
						t.Errorf("%s: a step uses the action with %q, which action.yml does not have", f, k)
					}
				}
			})
		}
		for _, line := range awlRun.FindAllString(string(data), -1) {
			for _, m := range flag.FindAllStringSubmatch(line, -1) {
				if !known[m[1]] {
					t.Errorf("%s: %q passes --%s, which awl run does not have", f, line, m[1])
				}
			}
		}
	}
	if steps < 5 {
		t.Errorf("found %d steps that use the action, want the examples of docs/ci.md and ci.yml", steps)
	}
}

func walkYAML(v any, visit func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		visit(v)
		for _, x := range v {
			walkYAML(x, visit)
		}
	case []any:
		for _, x := range v {
			walkYAML(x, visit)
		}
	}
}

// TestActionStructuredOutput runs the run step with output-schema: the
// structured output is the compact value, false included, and an answer
// that never validates is exit_code 7 with no structured output.
func TestActionStructuredOutput(t *testing.T) {
	a, srv, work, env := actionRig(t)
	if err := os.WriteFile(filepath.Join(work, "s.json"), []byte(`{"type":"boolean"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(providertest.Text("anthropic", " false\n"))
	out := actionRun(t, a, work, env, map[string]string{"prompt": "is it broken?", "output-schema": "s.json"})
	if out["exit_code"] != "0" || out["structured"] != "false" {
		t.Fatalf("outputs %v, want exit_code 0 and structured false", out)
	}
	srv.Enqueue(providertest.Text("anthropic", "yes"))
	out = actionRun(t, a, work, env, map[string]string{"prompt": "is it broken?", "output-schema": "s.json", "schema-retries": "0"})
	if out["exit_code"] != "7" || out["reason"] != "schema_invalid" || out["structured"] != "" {
		t.Fatalf("outputs %v, want exit_code 7, schema_invalid, no structured", out)
	}
}

// actionRig skips without the tools the run step needs, and returns the
// action, a fake provider, a work directory and the environment that points
// awl at them.
func actionRig(t *testing.T) (actionFile, *providertest.Server, string, []string) {
	t.Helper()
	// The action's run step needs them.
	testenv.RequireCommands(t, "bash", "jq", "od")
	a, _ := loadAction(t)
	srv := providertest.New()
	t.Cleanup(srv.Close)
	work := t.TempDir()
	env := []string{
		"ANTHROPIC_API_KEY=" + sentinelKey,
		"ANTHROPIC_BASE_URL=" + srv.URL,
		"OPENAI_API_KEY=",
		"AWL_PROVIDER=",
		"AWL_MODEL=",
		"AWL_SESSION_DIR=" + filepath.Join(work, "sessions"),
		"XDG_CONFIG_HOME=" + filepath.Join(work, "config"),
	}
	return a, srv, work, env
}

// TestCIInputTable keeps docs/ci.md's input table and action.yml in step,
// both ways: every input is documented, and the table names no input the
// action lacks.
func TestCIInputTable(t *testing.T) {
	a, _ := loadAction(t)
	data, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "\n| input | `awl run` flag |")
	if i < 0 {
		t.Fatal("docs/ci.md has no input table")
	}
	inTable := map[string]bool{}
	span := regexp.MustCompile("`([a-z][a-z0-9-]*)`")
	for line := range strings.SplitSeq(text[i+1:], "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, "|")
		for _, m := range span.FindAllStringSubmatch(cells[1], -1) {
			inTable[m[1]] = true
		}
	}
	for name := range a.Inputs {
		if !inTable[name] {
			t.Errorf("docs/ci.md's input table lacks %q, which action.yml has", name)
		}
	}
	for name := range inTable {
		if _, ok := a.Inputs[name]; !ok {
			t.Errorf("docs/ci.md's input table lists %q, which action.yml does not have", name)
		}
	}
	if len(inTable) < 10 {
		t.Errorf("read %d inputs from the table; the parser reads nothing", len(inTable))
	}
}

// TestActionReport: with report: true the action writes the session's HTML
// page and uploads it beside the session; the run step's log shows the
// steps as log groups.
func TestActionReport(t *testing.T) {
	a, srv, work, env := actionRig(t)
	srv.Enqueue(providertest.ToolCall("anthropic", "toolu_1", "bash", `{"command":"echo '<script>x</script>'; echo '::set-output name=pwned::1'"}`),
		providertest.Text("anthropic", "Done."))
	inputs := map[string]string{"prompt": "go", "report": "true"}
	out, log := actionStepRun(t, a, "run", work, append(env, "GITHUB_ACTIONS=true"), inputs, nil)
	if out["exit_code"] != "0" {
		t.Fatalf("outputs %v\n%s", out, log)
	}
	for _, want := range []string{"\n::group::awl: turn 1: ", "\nawl: tool bash: echo '<script>x</script>'; echo '::set-output name=pwned::1' -> exit 0, ", "\n::endgroup::\n"} {
		if !strings.Contains(log, want) {
			t.Errorf("the run step's log lacks %q:\n%s", want, log)
		}
	}
	rep, _ := actionStepRun(t, a, "report", work, env, inputs, map[string]map[string]string{"run": out})
	page, err := os.ReadFile(rep["path"])
	if err != nil {
		t.Fatalf("report outputs %v: %v", rep, err)
	}
	if !strings.Contains(string(page), "&lt;script&gt;x&lt;/script&gt;") || strings.Contains(string(page), "<script") {
		t.Errorf("the page does not show the tool output as text")
	}
	if !strings.HasPrefix(filepath.Base(rep["path"]), "awl-report-"+out["session_id"]) {
		t.Errorf("report path %q", rep["path"])
	}

	// The report step and its upload run only with report: true and a
	// session; the upload is an artifact of its own, named after the
	// session's.
	step := a.step(t, "report")
	if !strings.Contains(step.If, "inputs.report == 'true'") || !strings.Contains(step.If, "steps.run.outputs.session_path != ''") || !strings.HasPrefix(step.If, "always()") {
		t.Errorf("report step if: %q", step.If)
	}
	found := false
	for _, s := range a.Runs.Steps {
		if strings.HasPrefix(s.Uses, "actions/upload-artifact@") && s.With["path"] == "${{ steps.report.outputs.path }}" {
			found = true
			if !strings.HasSuffix(s.With["name"], "-report") || !strings.Contains(s.If, "steps.report.outputs.path != ''") {
				t.Errorf("report upload: name %q, if %q", s.With["name"], s.If)
			}
		}
	}
	if !found {
		t.Error("no step uploads the report")
	}
}

// TestActionConfigAndProfile: the config input is --config (the
// workflow's own file, so trusted: its check runs) and profile is
// --profile; a profile no file defines fails the step's run with exit 2,
// naming the profiles there are, before anything is sent. An untrusted
// project file in the workspace is not read beside the named file.
func TestActionConfigAndProfile(t *testing.T) {
	a, srv, work, env := actionRig(t)
	cfg := filepath.Join(work, "agent.toml")
	if err := os.WriteFile(cfg, []byte("model = \"claude-top\"\ncheck = [\"touch checked\"]\n\n[profile.review]\nmodel = \"claude-review\"\nappend-system = \"FROM-THE-PROFILE\"\n\n[profile.fix]\nmax-turns = 9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(work, "ws")
	if err := os.MkdirAll(filepath.Join(ws, ".awl"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".awl", "config.toml"), []byte("model = \"claude-project\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(providertest.Text("anthropic", "Reviewed."))
	out := actionRun(t, a, ws, env, map[string]string{"prompt": "review", "config": cfg, "profile": "review"})
	if out["exit_code"] != "0" || out["result"] != "Reviewed." {
		t.Fatalf("outputs %v, want exit_code 0", out)
	}
	var req struct {
		Model  string `json:"model"`
		System []struct {
			Text string `json:"text"`
		} `json:"system"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &req); err != nil {
		t.Fatal(err)
	}
	if req.Model != "claude-review" || !strings.Contains(fmt.Sprint(req.System), "FROM-THE-PROFILE") {
		t.Errorf("model %q, system %v: want the review profile of the config input", req.Model, req.System)
	}
	if _, err := os.Stat(filepath.Join(ws, "checked")); err != nil {
		t.Errorf("the named file's check did not run (the config input's file is trusted): %v", err)
	}
	out, log := actionStepRun(t, a, "run", ws, env, map[string]string{"prompt": "review", "config": cfg, "profile": "nope"}, nil)
	if out["exit_code"] != "2" || !strings.Contains(log, "no configuration file defines [profile.nope]; the profiles are: fix, review") {
		t.Errorf("outputs %v, log %q: want exit_code 2 naming the profiles", out, log)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("the provider got %d requests, want 1", n)
	}
}
