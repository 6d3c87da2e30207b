package modelctx

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/awlrun/awl/conv"
)

// fragment is one typed piece of model-visible context. Each fragment type
// is registered once, as its zero value, in registry; build is called on
// that zero value and returns the values to render.
type fragment interface {
	// role is the envelope the fragment goes in: conv.RoleSystem or the
	// contextual conv.RoleUser.
	role() conv.Role
	// render returns the fragment's text. It is a pure function of the
	// value, so the same state always renders the same bytes.
	render() string
	// build returns what to emit for cur given the baseline the model has
	// already seen (nil: no baseline, emit the full current state). An
	// empty result means the baseline is current for this fragment.
	build(cur State, base *Baseline) []fragment
	// markers returns the stable opening and closing markers of a
	// contextual user fragment, by which history readers tell it from
	// real user intent; "" for system fragments.
	markers() (open, close string)
}

// Names of the fragments that can be switched off, as recorded in
// Baseline.Off.
const (
	offEnv      = "environmentContext"
	offAgentsMD = "agentsMd"
)

// registry returns every fragment type in prompt order. A fragment that is
// not listed here does not exist: Build and IsContextual iterate this list.
func registry() []fragment {
	return []fragment{
		systemPrompt{},
		appendSystem{},
		toolPolicy{},
		outputSchema{},
		sandboxPolicy{},
		mcpServer{},
		skillCatalog{},
		environmentContext{},
		agentsMDRemoved{},
		agentsMD{},
		budgetNotice{},
	}
}

// instruction is a free-form system text shown in full. When it replaces a
// different text shown earlier it is introduced as a replacement, and when
// it is switched off it becomes a notice that the earlier text no longer
// applies.
type instruction struct {
	text     string
	replaces bool // a different text was shown earlier
}

// change returns the instruction to emit for text, given the digest of the
// text already shown ("" for none), and whether there is anything to emit.
func change(text, shown string) (instruction, bool) {
	if shown == digestText(text) {
		return instruction{}, false
	}
	return instruction{text: text, replaces: shown != ""}, true
}

// render renders i with the notice to use when it was switched off and the
// lead-in to use when it replaces an earlier text.
func (i instruction) render(removed, leadIn string) string {
	switch {
	case !i.replaces:
		return i.text
	case i.text == "":
		return removed
	default:
		return leadIn + i.text
	}
}

// systemPrompt is the base system prompt.
type systemPrompt struct{ instruction }

func (systemPrompt) role() conv.Role               { return conv.RoleSystem }
func (systemPrompt) markers() (open, close string) { return "", "" }

func (f systemPrompt) render() string {
	return f.instruction.render("The system prompt given earlier no longer applies.",
		"The system prompt has changed. It now reads:\n\n")
}

func (systemPrompt) build(cur State, base *Baseline) []fragment {
	var shown string
	if base != nil {
		shown = base.System
	}
	if i, ok := change(cur.System, shown); ok {
		return []fragment{systemPrompt{i}}
	}
	return nil
}

// appendSystem is the --append-system text.
type appendSystem struct{ instruction }

func (appendSystem) role() conv.Role               { return conv.RoleSystem }
func (appendSystem) markers() (open, close string) { return "", "" }

func (f appendSystem) render() string {
	return f.instruction.render("The additional instructions given earlier no longer apply.",
		"The additional instructions given earlier are replaced by these:\n\n")
}

func (appendSystem) build(cur State, base *Baseline) []fragment {
	var shown string
	if base != nil {
		shown = base.AppendSystem
	}
	if i, ok := change(cur.AppendSystem, shown); ok {
		return []fragment{appendSystem{i}}
	}
	return nil
}

// toolPolicy lists the tools the model may call, sorted and without
// duplicates, and the rules on their arguments, as written.
type toolPolicy struct {
	tools       []string
	allow, deny []string
}

func (toolPolicy) role() conv.Role               { return conv.RoleSystem }
func (toolPolicy) markers() (open, close string) { return "", "" }

func (f toolPolicy) render() string {
	if len(f.tools) == 0 {
		return "No tools are available in this session: do not call any tool."
	}
	text := "Tools available: " + strings.Join(f.tools, ", ") + "."
	if len(f.allow) > 0 {
		text += "\nOnly calls these rules allow run: " + strings.Join(f.allow, ", ") + "."
	}
	if len(f.deny) > 0 {
		text += "\nCalls these rules match are refused: " + strings.Join(f.deny, ", ") + "."
	}
	if len(f.allow)+len(f.deny) > 0 {
		text += "\nA bash command is judged command by command; one that cannot be judged from its text (eval, bash -c, a command name in a variable) is refused."
	}
	return text
}

func (toolPolicy) build(cur State, base *Baseline) []fragment {
	tools := normTools(cur.Tools)
	if base != nil && base.ToolPolicy == digestPolicy(tools, cur.AllowRules, cur.DenyRules) {
		return nil
	}
	return []fragment{toolPolicy{tools: tools, allow: cur.AllowRules, deny: cur.DenyRules}}
}

// outputSchema is --output-schema: the JSON Schema the final answer must
// validate against, shown in full. Dropping it (--output-schema none) is a
// notice that it no longer applies.
type outputSchema struct{ instruction }

func (outputSchema) role() conv.Role               { return conv.RoleSystem }
func (outputSchema) markers() (open, close string) { return "", "" }

func (f outputSchema) render() string {
	if f.text == "" {
		return "The output schema given earlier no longer applies: give your final answer as plain text."
	}
	lead := ""
	if f.replaces {
		lead = "The output schema has changed; the new one replaces the earlier one.\n\n"
	}
	return lead + "When you have finished, give your final answer as one JSON value that validates against the JSON Schema below, " +
		"with nothing before or after it and no Markdown code fence. You may call tools before the final answer.\n\n" +
		"<output_schema>\n" + f.text + "\n</output_schema>"
}

func (outputSchema) build(cur State, base *Baseline) []fragment {
	var shown string
	if base != nil {
		shown = digestText(string(base.OutputSchema))
	}
	if i, ok := change(cur.OutputSchema, shown); ok {
		return []fragment{outputSchema{i}}
	}
	return nil
}

// normTools returns names sorted, without duplicates or empty names.
func normTools(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if n != "" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// sandboxPolicy tells the model what the sandbox lets its tools change and
// reach. Nothing is shown while the sandbox is off, unless it was on before.
type sandboxPolicy struct{ instruction }

func (sandboxPolicy) role() conv.Role               { return conv.RoleSystem }
func (sandboxPolicy) markers() (open, close string) { return "", "" }

func (f sandboxPolicy) render() string {
	return f.instruction.render("The sandbox is now off: commands and the write and edit tools may change files anywhere, and commands may use the network.",
		"The sandbox has changed. ")
}

func (sandboxPolicy) build(cur State, base *Baseline) []fragment {
	var shown string
	if base != nil {
		shown = base.Sandbox
	}
	if i, ok := change(cur.Sandbox.text(), shown); ok {
		return []fragment{sandboxPolicy{i}}
	}
	return nil
}

// text renders the sandbox's limits; "" when it is off.
func (s Sandbox) text() string {
	var where string
	switch s.Mode {
	case "read-only":
		where = "You may read files anywhere, but nothing you run can change files outside the private temporary directory in $TMPDIR"
	case "workspace-write":
		where = "You may read files anywhere, but nothing you run can change files outside the working directory and the private temporary directory in $TMPDIR"
	default:
		return ""
	}
	if len(s.Writable) > 0 {
		where += ", except in " + strings.Join(s.Writable, ", ")
	}
	net := " Network access is blocked: connections from commands fail."
	if s.Network {
		net = " Commands may use the network."
	}
	return "Sandbox: " + s.Mode + ". " + where + "; the write and edit tools follow the same rule. " +
		"A blocked write fails with \"Permission denied\"; do not retry it, work within the limits or say what you could not do." + net
}

// environmentContext is where the agent runs. In a diff only the elements
// that changed are set; empty elements are not rendered.
type environmentContext struct {
	cwd, shell, date, timezone string
}

func (environmentContext) role() conv.Role { return conv.RoleUser }

func (environmentContext) markers() (open, close string) {
	return "<environment_context>", "</environment_context>"
}

func (f environmentContext) render() string {
	var b strings.Builder
	b.WriteString("<environment_context>\n")
	element := func(name, value string) {
		if value == "" {
			return
		}
		b.WriteString("  <" + name + ">" + escapeXML(value) + "</" + name + ">\n")
	}
	element("cwd", f.cwd)
	element("shell", f.shell)
	element("current_date", f.date)
	element("timezone", f.timezone)
	b.WriteString("</environment_context>")
	return b.String()
}

func (environmentContext) build(cur State, base *Baseline) []fragment {
	if cur.NoEnv {
		return nil
	}
	full := environmentContext{cwd: cur.Cwd, shell: cur.Shell, date: cur.Date, timezone: cur.Timezone}
	if base == nil || base.isOff(offEnv) {
		return []fragment{full}
	}
	var diff environmentContext
	if cur.Cwd != base.Cwd {
		diff.cwd = cur.Cwd
	}
	if cur.Shell != base.Shell {
		diff.shell = cur.Shell
	}
	if cur.Date != base.Date {
		diff.date = cur.Date
	}
	if cur.Timezone != base.Timezone {
		diff.timezone = cur.Timezone
	}
	if diff == (environmentContext{}) {
		return nil
	}
	return []fragment{diff}
}

// escapeAttr escapes what would end or confuse a double-quoted attribute:
// escapeXML's characters and the quote (a checkout directory may hold one).
func escapeAttr(s string) string {
	s = escapeXML(s)
	if !strings.Contains(s, `"`) {
		return s
	}
	return strings.ReplaceAll(s, `"`, "&quot;")
}

// escapeXML escapes the characters that would end or confuse an element.
// A loop, not a strings.Replacer: a Replacer builds its 6 KB of tables at
// each first use, and every run renders its environment context.
func escapeXML(s string) string {
	if !strings.ContainsAny(s, "&<>") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// agentsMDRemoved tells the model that an AGENTS.md it was shown no longer
// applies: the file was removed, emptied, or is no longer on the path from
// the repository root to the working directory.
type agentsMDRemoved struct {
	path string
}

func (agentsMDRemoved) role() conv.Role { return conv.RoleUser }

func (agentsMDRemoved) markers() (open, close string) {
	return "<agents_md_removed>", "</agents_md_removed>"
}

func (f agentsMDRemoved) render() string {
	return "<agents_md_removed>\nThe instructions from " + f.path +
		" no longer apply: disregard them.\n</agents_md_removed>"
}

func (agentsMDRemoved) build(cur State, base *Baseline) []fragment {
	if cur.NoAgentsMD || base == nil || base.isOff(offAgentsMD) {
		return nil
	}
	present := make(map[string]bool, len(cur.AgentsMD))
	for _, s := range cur.AgentsMD {
		present[s.Path] = true
	}
	var out []fragment
	for _, s := range base.AgentsMD {
		if !present[s.Path] {
			out = append(out, agentsMDRemoved{path: s.Path})
		}
	}
	return out
}

// agentsMD is the content of one AGENTS.md, one block per file.
type agentsMD struct {
	src Source
}

func (agentsMD) role() conv.Role { return conv.RoleUser }

func (agentsMD) markers() (open, close string) {
	return "# AGENTS.md instructions for ", "</INSTRUCTIONS>"
}

func (f agentsMD) render() string {
	scope := filepath.Dir(f.src.Path)
	if f.src.User {
		scope = "every project (user-level " + f.src.Path + ")"
	}
	return "# AGENTS.md instructions for " + scope + "\n\n<INSTRUCTIONS>\n" +
		strings.TrimSpace(f.src.Content) + "\n</INSTRUCTIONS>"
}

func (agentsMD) build(cur State, base *Baseline) []fragment {
	if cur.NoAgentsMD {
		return nil
	}
	full := base == nil || base.isOff(offAgentsMD)
	var seen map[string]string
	if !full {
		seen = make(map[string]string, len(base.AgentsMD))
		for _, s := range base.AgentsMD {
			seen[s.Path] = s.Digest
		}
	}
	var out []fragment
	for _, s := range cur.AgentsMD {
		if d, ok := seen[s.Path]; full || !ok || d != digestText(s.Content) {
			out = append(out, agentsMD{src: s})
		}
	}
	return out
}
