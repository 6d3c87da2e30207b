package modelctx

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
)

// state returns a State with every fragment on.
func state() State {
	return State{
		Cwd:          "/home/u/repo/sub",
		Shell:        "bash",
		Date:         "2026-04-25",
		Timezone:     "Europe/Paris",
		System:       "You are a test agent.",
		AppendSystem: "Always answer in French.",
		Tools:        []string{"read", "bash", "edit"},
		AgentsMD: []Source{
			{Path: "/home/u/.config/awl/AGENTS.md", Content: "Prefer small commits.\n", User: true},
			{Path: "/home/u/repo/AGENTS.md", Content: "Run make check.\n"},
			{Path: "/home/u/repo/sub/AGENTS.md", Content: "Sub rules."},
		},
	}
}

func baseOf(s State) *Baseline {
	b := s.Baseline()
	return &b
}

// dump renders messages for comparison: one "== role" line per message and
// its text blocks separated by "-- block" lines.
func dump(msgs []conv.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("== " + string(m.Role) + "\n")
		for i, blk := range m.Content {
			if i > 0 {
				b.WriteString("\n-- block\n")
			}
			b.WriteString(blk.Text)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// golden compares got with testdata/name, rewriting it when UPDATE_GOLDEN=1.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n got:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestBuildFull(t *testing.T) {
	msgs := Build(state(), nil)
	if len(msgs) != 2 || msgs[0].Role != conv.RoleSystem || msgs[1].Role != conv.RoleUser {
		t.Fatalf("Build(nil) = %s, want a system then a user envelope", dump(msgs))
	}
	if n := len(msgs[0].Content); n != 3 {
		t.Errorf("system envelope has %d blocks, want system, append-system, tools", n)
	}
	if n := len(msgs[1].Content); n != 4 {
		t.Errorf("user envelope has %d blocks, want environment and 3 AGENTS.md", n)
	}
	if !IsContextualMessage(msgs[1]) {
		t.Error("the full user envelope is not contextual")
	}
	golden(t, "full.golden", dump(msgs))
}

func TestBuildFullMinimal(t *testing.T) {
	// No system text, no tools, no AGENTS.md: the policy still says so.
	s := State{Cwd: "/w", Shell: "sh", Date: "2026-01-01", Timezone: "UTC"}
	got := dump(Build(s, nil))
	want := "== system\nNo tools are available in this session: do not call any tool.\n" +
		"== user\n<environment_context>\n  <cwd>/w</cwd>\n  <shell>sh</shell>\n" +
		"  <current_date>2026-01-01</current_date>\n  <timezone>UTC</timezone>\n</environment_context>\n"
	if got != want {
		t.Errorf("Build = %q, want %q", got, want)
	}
}

func TestBuildCurrentBaseline(t *testing.T) {
	for _, s := range []State{state(), {}, func() State { s := state(); s.NoEnv, s.NoAgentsMD = true, true; return s }()} {
		if msgs := Build(s, baseOf(s)); msgs != nil {
			t.Errorf("Build with its own baseline = %s, want nil", dump(msgs))
		}
	}
}

func TestBuildDiff(t *testing.T) {
	const (
		user = "/home/u/.config/awl/AGENTS.md"
		root = "/home/u/repo/AGENTS.md"
		sub  = "/home/u/repo/sub/AGENTS.md"
	)
	tests := []struct {
		name   string
		change func(*State)
		want   string
	}{
		{"cwd", func(s *State) { s.Cwd = "/home/u/repo/sub/deeper" },
			"== user\n<environment_context>\n  <cwd>/home/u/repo/sub/deeper</cwd>\n</environment_context>\n"},
		{"shell", func(s *State) { s.Shell = "zsh" },
			"== user\n<environment_context>\n  <shell>zsh</shell>\n</environment_context>\n"},
		{"date", func(s *State) { s.Date = "2026-04-26" },
			"== user\n<environment_context>\n  <current_date>2026-04-26</current_date>\n</environment_context>\n"},
		{"timezone", func(s *State) { s.Timezone = "Asia/Tokyo" },
			"== user\n<environment_context>\n  <timezone>Asia/Tokyo</timezone>\n</environment_context>\n"},
		{"date and timezone", func(s *State) { s.Date, s.Timezone = "2026-04-26", "Asia/Tokyo" },
			"== user\n<environment_context>\n  <current_date>2026-04-26</current_date>\n  <timezone>Asia/Tokyo</timezone>\n</environment_context>\n"},
		{"AGENTS.md edited", func(s *State) { s.AgentsMD[1].Content = "Run make test.\n" },
			"== user\n# AGENTS.md instructions for /home/u/repo\n\n<INSTRUCTIONS>\nRun make test.\n</INSTRUCTIONS>\n"},
		{"AGENTS.md added", func(s *State) {
			s.AgentsMD = append(s.AgentsMD, Source{Path: "/home/u/repo/sub/x/AGENTS.md", Content: "x"})
		}, "== user\n# AGENTS.md instructions for /home/u/repo/sub/x\n\n<INSTRUCTIONS>\nx\n</INSTRUCTIONS>\n"},
		{"AGENTS.md removed", func(s *State) { s.AgentsMD = s.AgentsMD[:2] },
			"== user\n<agents_md_removed>\nThe instructions from " + sub + " no longer apply: disregard them.\n</agents_md_removed>\n"},
		{"user AGENTS.md edited", func(s *State) { s.AgentsMD[0].Content = "Prefer tiny commits." },
			"== user\n# AGENTS.md instructions for every project (user-level " + user + ")\n\n<INSTRUCTIONS>\nPrefer tiny commits.\n</INSTRUCTIONS>\n"},
		{"AGENTS.md moved on", func(s *State) {
			s.Cwd = "/home/u/repo/other"
			s.AgentsMD = []Source{s.AgentsMD[0], s.AgentsMD[1], {Path: "/home/u/repo/other/AGENTS.md", Content: "other"}}
		}, "== user\n<environment_context>\n  <cwd>/home/u/repo/other</cwd>\n</environment_context>\n" +
			"-- block\n<agents_md_removed>\nThe instructions from " + sub + " no longer apply: disregard them.\n</agents_md_removed>\n" +
			"-- block\n# AGENTS.md instructions for /home/u/repo/other\n\n<INSTRUCTIONS>\nother\n</INSTRUCTIONS>\n"},
		{"append-system changed", func(s *State) { s.AppendSystem = "Answer in German." },
			"== system\nThe additional instructions given earlier are replaced by these:\n\nAnswer in German.\n"},
		{"append-system removed", func(s *State) { s.AppendSystem = "" },
			"== system\nThe additional instructions given earlier no longer apply.\n"},
		{"system changed", func(s *State) { s.System = "You are another agent." },
			"== system\nThe system prompt has changed. It now reads:\n\nYou are another agent.\n"},
		{"system removed", func(s *State) { s.System = "" },
			"== system\nThe system prompt given earlier no longer applies.\n"},
		{"tool removed", func(s *State) { s.Tools = []string{"read"} },
			"== system\nTools available: read.\n"},
		{"no tools", func(s *State) { s.Tools = nil },
			"== system\nNo tools are available in this session: do not call any tool.\n"},
		{"tools and cwd", func(s *State) { s.Tools = []string{"read", "write"}; s.Cwd = "/x" },
			"== system\nTools available: read, write.\n== user\n<environment_context>\n  <cwd>/x</cwd>\n</environment_context>\n"},
		{"environment switched off", func(s *State) { s.NoEnv = true; s.Cwd = "/elsewhere" }, ""},
		{"AGENTS.md switched off", func(s *State) { s.NoAgentsMD = true; s.AgentsMD = nil }, ""},
		{"tools reordered", func(s *State) { s.Tools = []string{"edit", "read", "bash", "read"} }, ""},
		{"rules added", func(s *State) {
			s.AllowRules = []string{"bash(git diff *)", "write(src/**)"}
			s.DenyRules = []string{"read(**/.env)"}
		},
			"== system\nTools available: bash, edit, read.\nOnly calls these rules allow run: bash(git diff *), write(src/**).\nCalls these rules match are refused: read(**/.env).\n" +
				"A bash command is judged command by command; one that cannot be judged from its text (eval, bash -c, a command name in a variable) is refused.\n"},
		{"a deny rule alone", func(s *State) { s.DenyRules = []string{"bash(rm *)"} },
			"== system\nTools available: bash, edit, read.\nCalls these rules match are refused: bash(rm *).\n" +
				"A bash command is judged command by command; one that cannot be judged from its text (eval, bash -c, a command name in a variable) is refused.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := state()
			cur := state()
			tt.change(&cur)
			if got := dump(Build(cur, baseOf(base))); got != tt.want {
				t.Errorf("Build =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestBuildAppendSystemAdded(t *testing.T) {
	base := state()
	base.AppendSystem = ""
	got := dump(Build(state(), baseOf(base)))
	if want := "== system\nAlways answer in French.\n"; got != want {
		t.Errorf("Build = %q, want %q", got, want)
	}
}

func TestBuildSwitchedOffThenOn(t *testing.T) {
	on := state()
	off := state()
	off.NoEnv, off.NoAgentsMD = true, true
	off.AgentsMD = nil

	if msgs := Build(off, baseOf(on)); msgs != nil {
		t.Fatalf("switching off emitted %s", dump(msgs))
	}
	b := off.Baseline()
	if !reflect.DeepEqual(b.Off, []string{offEnv, offAgentsMD}) || b.Cwd != "" || b.AgentsMD != nil {
		t.Errorf("off baseline = %+v, want both fragments off and nothing recorded for them", b)
	}
	// Back on, with nothing else changed: both fragments are re-emitted in
	// full, exactly as in the initial context.
	got := Build(on, &b)
	full := Build(on, nil)
	if len(got) != 1 || !reflect.DeepEqual(got[0], full[1]) {
		t.Errorf("switching on emitted\n%s\nwant the full user envelope\n%s", dump(got), dump(full[1:]))
	}
	// Only the environment back on.
	envOnly := off
	envOnly.NoEnv = false
	got = Build(envOnly, &b)
	if len(got) != 1 || len(got[0].Content) != 1 || got[0].Content[0].Text != full[1].Content[0].Text {
		t.Errorf("environment on emitted %s, want the full environment context alone", dump(got))
	}
}

func TestBuildNoBaselineRespectsSwitches(t *testing.T) {
	s := state()
	s.NoEnv, s.NoAgentsMD = true, true
	msgs := Build(s, nil)
	if len(msgs) != 1 || msgs[0].Role != conv.RoleSystem {
		t.Errorf("Build = %s, want the system envelope alone", dump(msgs))
	}
}

func TestBuildEmptyBaseline(t *testing.T) {
	// A turnContext written by another tool with no members we know gets
	// the full context.
	b, err := ParseBaseline([]byte(`{"future":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := dump(Build(state(), &b)), dump(Build(state(), nil)); got != want {
		t.Errorf("Build(empty baseline) =\n%s\nwant the full context\n%s", got, want)
	}
}

func TestBuildDeterministic(t *testing.T) {
	base := state()
	cur := state()
	cur.Cwd, cur.AppendSystem = "/x", "new"
	cur.AgentsMD = cur.AgentsMD[:1]
	for _, tc := range []struct {
		cur  State
		base *Baseline
	}{{state(), nil}, {cur, baseOf(base)}} {
		first := Build(tc.cur, tc.base)
		for range 20 {
			if again := Build(tc.cur, tc.base); !reflect.DeepEqual(again, first) {
				t.Fatalf("Build is not deterministic:\n%s\nthen\n%s", dump(first), dump(again))
			}
		}
	}
	// Tool order does not change the bytes.
	a, b := state(), state()
	b.Tools = []string{"edit", "bash", "read"}
	if dump(Build(a, nil)) != dump(Build(b, nil)) {
		t.Error("the tool policy depends on the order of the tools")
	}
}

func TestEscapeEnvironment(t *testing.T) {
	s := State{Cwd: "/tmp/a<b>&c", Shell: "bash", Date: "2026-01-01", Timezone: "UTC"}
	msgs := Build(s, nil)
	text := msgs[1].Content[0].Text
	if !strings.Contains(text, "<cwd>/tmp/a&lt;b&gt;&amp;c</cwd>") {
		t.Errorf("cwd not escaped: %q", text)
	}
	if !IsContextual(text) {
		t.Error("escaped environment context is not contextual")
	}
}

func TestIsContextual(t *testing.T) {
	// Every contextual fragment that Build can render is recognised.
	var texts []string
	for _, m := range Build(state(), nil) {
		if m.Role == conv.RoleUser {
			for _, b := range m.Content {
				texts = append(texts, b.Text)
			}
		}
	}
	cur := state()
	cur.Date = "2026-04-26"
	cur.AgentsMD = cur.AgentsMD[1:]
	for _, b := range Build(cur, baseOf(state()))[0].Content {
		texts = append(texts, b.Text)
	}
	if len(texts) != 6 {
		t.Fatalf("collected %d contextual texts, want 6", len(texts))
	}
	for _, text := range texts {
		if !IsContextual(text) {
			t.Errorf("IsContextual(%q) = false", text)
		}
		if !IsContextual("\n  " + text + "\n") {
			t.Errorf("IsContextual with surrounding space (%q) = false", text)
		}
	}
	// Real prompts, including ones that mention the markers.
	for _, text := range []string{
		"",
		"Fix the failing test.",
		"Why does the <environment_context> block show the wrong cwd?",
		"Explain environment_context to me",
		"<environment_context> is what I want you to print",
		"# AGENTS.md instructions for the repo should say what?",
		"Read AGENTS.md and follow its <INSTRUCTIONS>.</INSTRUCTIONS>",
		"</environment_context>",
		"You are a test agent.", // system text is never contextual user text
	} {
		if IsContextual(text) {
			t.Errorf("IsContextual(%q) = true", text)
		}
	}
}

func TestIsContextualMessage(t *testing.T) {
	ctx := Build(state(), nil)[1]
	env := ctx.Content[0]
	tests := []struct {
		name string
		m    conv.Message
		want bool
	}{
		{"context envelope", ctx, true},
		{"prompt", conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("hello")}}, false},
		{"context then prompt", conv.Message{Role: conv.RoleUser, Content: []conv.Block{env, conv.TextBlock("hello")}}, false},
		{"empty", conv.Message{Role: conv.RoleUser}, false},
		{"system role", conv.Message{Role: conv.RoleSystem, Content: []conv.Block{env}}, false},
		{"tool result", conv.Message{Role: conv.RoleUser, Content: []conv.Block{{Type: conv.BlockToolResult, ToolUseID: "t", Content: env.Text}}}, false},
		{"context and image", conv.Message{Role: conv.RoleUser, Content: []conv.Block{env, {Type: conv.BlockImage, MimeType: "image/png", Data: "AA=="}}}, false},
	}
	for _, tt := range tests {
		if got := IsContextualMessage(tt.m); got != tt.want {
			t.Errorf("%s: IsContextualMessage = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range registry() {
		name := reflect.TypeOf(f).Name()
		if seen[name] {
			t.Errorf("%s is registered twice", name)
		}
		seen[name] = true
		open, close := f.markers()
		switch f.role() {
		case conv.RoleUser:
			if open == "" || close == "" {
				t.Errorf("contextual fragment %s has no markers", name)
			}
		case conv.RoleSystem:
			if open != "" || close != "" {
				t.Errorf("system fragment %s has markers", name)
			}
		default:
			t.Errorf("%s has role %q", name, f.role())
		}
	}
	// The envelope order: system fragments come before contextual ones.
	reg := registry()
	for i := 1; i < len(reg); i++ {
		if reg[i-1].role() == conv.RoleUser && reg[i].role() == conv.RoleSystem {
			t.Errorf("system fragment %T is registered after a contextual one", reg[i])
		}
	}
}
