// Package policy owns the tool policy of a run: the rules of --tools and
// --deny-tools (names, globs, and a tool with an argument pattern such as
// bash(git diff *) or write(src/**)), which tools are offered, and the
// decision for each call: a bash command judged simple command by simple
// command on a real shell parse, a path judged where it lies, symbolic
// links followed. It never imports the runner or a tool: the runner asks
// it, and the tools ask its path rules at the moment they open a path.
package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// The tools whose calls name a path, by what they do with it. A read rule,
// read(PATTERN), applies to every tool that reads; a write rule,
// write(PATTERN), to every tool that writes (and to a bash redirection that
// writes). A rule named after one of them, edit(PATTERN), to that tool only.
var (
	readTools  = []string{"read", "grep", "glob", "ls", "view_image"}
	writeTools = []string{"write", "edit"}
)

// Rule is one entry of --tools or --deny-tools.
type Rule struct {
	// Text is the rule as it was written, trimmed.
	Text string
	// Tool is the tool name or glob before the parentheses.
	Tool string
	// Pattern is what is inside the parentheses; HasPattern says there
	// were parentheses.
	Pattern    string
	HasPattern bool

	cmd  *cmdPattern  // bash(…)
	path *pathPattern // a file tool's (…)
}

// Policy is the tool policy of a run. The zero value, and nil, allow
// every tool and every call.
type Policy struct {
	allow, deny []Rule
	noTools     bool
	dir         string // the run's directory, absolute
	realDir     string // dir, its links resolved
	bashRules   bool   // a bash(…) rule exists, allow or deny
	bashWhole   bool   // bash is allowed whole and no bash(…) deny rule exists
	bashAllowed bool   // bash is allowed whole by the allow rules
	// allowNamed holds the bash(…) allow patterns whose command name is
	// a literal, by that name; allowWild the others: a command is tried
	// only against the patterns that could match its name.
	allowNamed map[string][]*cmdPattern
	allowWild  []*cmdPattern
}

// Options are what a Policy is built from.
type Options struct {
	// Allow and Deny are the entries of --tools and --deny-tools (each
	// entry may itself be a list: Split is applied).
	Allow, Deny []string
	// AllowFrom and DenyFrom name where they came from in errors
	// ("--tools" and "--deny-tools" when empty).
	AllowFrom, DenyFrom string
	// NoTools offers no tool at all (--no-tools).
	NoTools bool
	// Dir is the run's directory: relative path patterns and relative
	// paths are judged against it.
	Dir string
	// Known reports whether a name without a glob is a tool awl knows; nil
	// knows every name. A name it does not know is an error unless it is
	// an MCP tool's (mcp__…): a server may be down.
	Known func(name string) bool
	// Builtins lists the built-in tools for the error of an unknown name.
	Builtins []string
}

// MCPPrefix begins the name of every MCP tool: mcp__SERVER__TOOL.
const MCPPrefix = "mcp__"

// New parses the rules. An error names the flag and the rule.
func New(o Options) (*Policy, error) {
	p := &Policy{noTools: o.NoTools, dir: o.Dir, realDir: resolveExisting(o.Dir)}
	var err error
	if p.allow, err = parseList(o.Allow, or(o.AllowFrom, "--tools"), o); err != nil {
		return nil, err
	}
	if p.deny, err = parseList(o.Deny, or(o.DenyFrom, "--deny-tools"), o); err != nil {
		return nil, err
	}
	for _, r := range p.allow {
		p.bashRules = p.bashRules || r.cmd != nil
	}
	bashDeny := false
	for _, r := range p.deny {
		bashDeny = bashDeny || r.cmd != nil
	}
	p.bashRules = p.bashRules || bashDeny
	p.bashAllowed = p.allowsWhole("bash")
	p.bashWhole = !bashDeny && p.bashAllowed
	for _, r := range p.allow {
		switch {
		case r.cmd == nil:
		case r.cmd.name != "":
			if p.allowNamed == nil {
				p.allowNamed = map[string][]*cmdPattern{}
			}
			p.allowNamed[r.cmd.name] = append(p.allowNamed[r.cmd.name], r.cmd)
		default:
			p.allowWild = append(p.allowWild, r.cmd)
		}
	}
	return p, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// parseList parses the entries of one flag.
func parseList(list []string, from string, o Options) ([]Rule, error) {
	var out []Rule
	for _, entry := range list {
		for _, text := range Split(entry) {
			r, err := ParseRule(text)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", from, err)
			}
			if !r.HasPattern && !hasMeta(r.Tool) && o.Known != nil && !o.Known(r.Tool) && !strings.HasPrefix(r.Tool, MCPPrefix) {
				return nil, fmt.Errorf("%s: unknown tool %q (tools: %s)", from, r.Tool, strings.Join(o.Builtins, ", "))
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// Split splits a list of rules on the commas outside parentheses, so that
// bash(echo a,b) stays one rule; entries are trimmed and empty ones
// dropped.
func Split(s string) []string {
	var out []string
	depth, start := 0, 0
	add := func(end int) {
		if e := strings.TrimSpace(s[start:end]); e != "" {
			out = append(out, e)
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				add(i)
				start = i + 1
			}
		}
	}
	add(len(s))
	return out
}

// ParseRule parses one rule: NAME, GLOB, or TOOL(PATTERN).
func ParseRule(text string) (Rule, error) {
	text = strings.TrimSpace(text)
	r := Rule{Text: text, Tool: text}
	if i := strings.IndexByte(text, '('); i >= 0 {
		if !strings.HasSuffix(text, ")") {
			return r, fmt.Errorf("rule %q: the pattern must end with )", text)
		}
		r.Tool, r.Pattern, r.HasPattern = strings.TrimSpace(text[:i]), text[i+1:len(text)-1], true
	} else if strings.ContainsRune(text, ')') {
		return r, fmt.Errorf("rule %q: ) without (", text)
	}
	if r.Tool == "" {
		return r, fmt.Errorf("rule %q: no tool name", text)
	}
	if hasMeta(r.Tool) {
		if _, err := path.Match(r.Tool, ""); err != nil {
			return r, fmt.Errorf("bad pattern %q: %v", r.Tool, err)
		}
	}
	if !r.HasPattern {
		return r, nil
	}
	if strings.TrimSpace(r.Pattern) == "" {
		return r, fmt.Errorf("rule %q: the pattern is empty (write %s alone for every call)", text, r.Tool)
	}
	var err error
	switch {
	case r.Tool == "bash":
		r.cmd, err = parseCmdPattern(r.Pattern)
	case r.Tool == "read" || r.Tool == "write" || slices.Contains(readTools, r.Tool) || slices.Contains(writeTools, r.Tool):
		r.path, err = parsePathPattern(r.Pattern)
	default:
		err = fmt.Errorf("argument patterns apply to bash and the file tools (%s, %s), not to %q", strings.Join(readTools, ", "), strings.Join(writeTools, ", "), r.Tool)
	}
	if err != nil {
		return r, fmt.Errorf("rule %q: %w", text, err)
	}
	return r, nil
}

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// matchName reports whether the tool name matches p: a name, or a glob
// (* ? [..]) such as mcp__github__*.
func matchName(p, name string) bool {
	if !hasMeta(p) {
		return p == name
	}
	ok, _ := path.Match(p, name)
	return ok
}

// appliesTo reports whether r is about calls to the tool name: by its
// name, or, for a path rule, read(…) and write(…) by what the tool does.
func (r *Rule) appliesTo(name string) bool {
	if r.path != nil {
		switch r.Tool {
		case "read":
			return slices.Contains(readTools, name)
		case "write":
			return slices.Contains(writeTools, name)
		}
	}
	return matchName(r.Tool, name)
}

// allowsWhole reports whether the allow rules allow every call to name
// (there are none, or one names it with no pattern).
func (p *Policy) allowsWhole(name string) bool {
	return len(p.allow) == 0 || slices.ContainsFunc(p.allow, func(r Rule) bool { return !r.HasPattern && matchName(r.Tool, name) })
}

// deniesWhole reports whether a deny rule with no pattern names the tool.
func (p *Policy) deniesWhole(name string) bool {
	return slices.ContainsFunc(p.deny, func(r Rule) bool { return !r.HasPattern && matchName(r.Tool, name) })
}

// Offers reports whether the tool name is offered to the model: --no-tools
// is not given, some allow rule could match a call to it (or there are
// none), and no deny rule denies it whole.
func (p *Policy) Offers(name string) bool {
	if p == nil {
		return true
	}
	if p.noTools || p.deniesWhole(name) {
		return false
	}
	return len(p.allow) == 0 || slices.ContainsFunc(p.allow, func(r Rule) bool { return r.appliesTo(name) })
}

// MayOffer reports whether the policy can offer any tool whose name starts
// with prefix (an MCP server's, mcp__NAME__): a server none of whose tools
// could be offered is not started.
func (p *Policy) MayOffer(prefix string) bool {
	if p == nil {
		return true
	}
	if p.noTools {
		return false
	}
	for _, r := range p.deny {
		if lit, ok := strings.CutSuffix(r.Tool, "*"); ok && !r.HasPattern && !hasMeta(lit) && strings.HasPrefix(prefix, lit) {
			return false
		}
	}
	if len(p.allow) == 0 {
		return true
	}
	for _, r := range p.allow {
		lit := r.Tool
		if i := strings.IndexAny(lit, `*?[\`); i >= 0 {
			lit = lit[:i]
		}
		if strings.HasPrefix(prefix, lit) || strings.HasPrefix(lit, prefix) {
			return true
		}
	}
	return false
}

// DeniesUnoffered reports whether a call to name, a tool the run does not
// offer, is a denial of the policy rather than a call to a tool that does
// not exist: a deny rule names it, or it is a tool of a configured MCP
// server (ofServer) that --no-tools or the allow rules leave out.
func (p *Policy) DeniesUnoffered(name string, ofServer bool) bool {
	if p == nil {
		return false
	}
	if p.deniesWhole(name) {
		return true
	}
	return ofServer && !p.Offers(name)
}

// Denial is a call the policy refused.
type Denial struct {
	// Tool is the tool called.
	Tool string
	// Rule is the rule that decided, as written ("" when no allow rule
	// matched, or the command could not be judged, or a hook decided).
	Rule string
	// Hook is the command of the pre-tool hook that denied the call.
	Hook string
	// Reason says why, for the model and the log.
	Reason string
}

func (d *Denial) Error() string {
	if d.Hook != "" {
		return fmt.Sprintf("%s: denied by hook %s: %s", d.Tool, d.Hook, d.Reason)
	}
	if d.Rule != "" {
		return fmt.Sprintf("%s: denied by rule %s: %s", d.Tool, d.Rule, d.Reason)
	}
	return fmt.Sprintf("%s: denied: %s", d.Tool, d.Reason)
}

// Rules lists every rule, allow and deny, as written: what a run entry
// records of the policy. Both are nil for a policy with no rules.
func (p *Policy) Rules() (allow, deny []string) {
	if p == nil {
		return nil, nil
	}
	for _, r := range p.allow {
		allow = append(allow, r.Text)
	}
	for _, r := range p.deny {
		deny = append(deny, r.Text)
	}
	return allow, deny
}

// PatternRules lists the rules with argument patterns, allow and deny, as
// written: what the model is told besides the tools offered (the rules of
// names alone are in that list already).
func (p *Policy) PatternRules() (allow, deny []string) {
	if p == nil {
		return nil, nil
	}
	for _, r := range p.allow {
		if r.HasPattern {
			allow = append(allow, r.Text)
		}
	}
	for _, r := range p.deny {
		if r.HasPattern {
			deny = append(deny, r.Text)
		}
	}
	return allow, deny
}
