// Package modelctx builds awl's model-visible context: the system prompt, the
// --append-system text, the tool policy, the sandbox's limits, the
// environment context and the AGENTS.md instructions. Each is a typed fragment registered once, in prompt
// order. Build renders the fragments that changed since a persisted Baseline
// into at most two envelopes (one system message, one contextual user
// message), so a resumed session appends only what the model has not yet
// seen and the prompt prefix stays byte-identical.
package modelctx

import (
	"strings"

	"github.com/awlrun/awl/conv"
)

// State is the current model-visible state of a turn, gathered from the world.
type State struct {
	Cwd      string
	Shell    string
	Date     string // YYYY-MM-DD in the local time zone
	Timezone string // IANA name, or a UTC offset such as "+02:00"

	// System is the base system prompt: DefaultSystem, or --system's
	// replacement. "" means none.
	System string
	// AppendSystem is the --append-system text; "" means none.
	AppendSystem string
	// Tools are the names of the allowed tools (the tool policy). Their
	// order does not matter: the policy is rendered sorted.
	Tools []string
	// AllowRules and DenyRules are the tool rules with argument patterns
	// (bash(git diff *), write(src/**)), as written: the model is told
	// them with the tools. None for a policy of names alone.
	AllowRules, DenyRules []string
	// OutputSchema is the --output-schema as compact JSON; "" means none.
	OutputSchema string
	// Sandbox is what the sandbox lets tools do; the zero value is off.
	Sandbox Sandbox
	// MCP are the configured MCP servers, sorted by name.
	MCP []MCPServer
	// Skills are the skills offered, sorted by name.
	Skills []Skill
	// AgentsMD are the instruction files in order: the user-level file
	// first, then the repository root down to the working directory.
	AgentsMD []Source

	// NoEnv switches the environment context off (--no-env-context).
	NoEnv bool
	// NoAgentsMD switches the AGENTS.md instructions off (--no-agents-md).
	NoAgentsMD bool
}

// Sandbox describes the sandbox that confines the tools.
type Sandbox struct {
	// Mode is "read-only" or "workspace-write"; anything else is off.
	Mode string
	// Network says commands may use the network.
	Network bool
	// Writable are the --sandbox-writable directories.
	Writable []string
}

// Source is one AGENTS.md instruction file.
type Source struct {
	Path    string // absolute path of the file
	Content string
	// User marks the user-level file, whose instructions apply to every
	// project rather than to the file's directory.
	User bool
}

// Build returns the context messages to append before the next real user
// prompt, given the baseline of what the model has already been shown. With
// base == nil it returns the full initial context. It returns nil when base
// is already current; otherwise at most one conv.RoleSystem message (system
// prompt, append-system, tool policy) followed by at most one contextual
// conv.RoleUser message (environment context, AGENTS.md). Each fragment is
// one text block of its envelope, in registry order.
func Build(cur State, base *Baseline) []conv.Message {
	var system, user []conv.Block
	for _, kind := range registry() {
		for _, f := range kind.build(cur, base) {
			b := conv.TextBlock(f.render())
			if kind.role() == conv.RoleSystem {
				system = append(system, b)
			} else {
				user = append(user, b)
			}
		}
	}
	var out []conv.Message
	if len(system) > 0 {
		out = append(out, conv.Message{Role: conv.RoleSystem, Content: system})
	}
	if len(user) > 0 {
		out = append(out, conv.Message{Role: conv.RoleUser, Content: user})
	}
	return out
}

// IsContextual reports whether text is a rendered contextual fragment
// (environment context, AGENTS.md instructions or an AGENTS.md removal
// notice) rather than real user intent. It matches a registered fragment's
// opening marker at the start and its closing marker at the end, ignoring
// surrounding white space.
func IsContextual(text string) bool {
	t := strings.TrimSpace(text)
	for _, kind := range registry() {
		if kind.role() != conv.RoleUser {
			continue
		}
		open, close := kind.markers()
		if open != "" && strings.HasPrefix(t, open) && strings.HasSuffix(t, close) {
			return true
		}
	}
	return false
}

// IsContextualMessage reports whether m is a contextual user message: a user
// message with at least one block, all of them text blocks that IsContextual
// accepts. Tool results and real prompts are not contextual.
func IsContextualMessage(m conv.Message) bool {
	if m.Role != conv.RoleUser || len(m.Content) == 0 {
		return false
	}
	for _, b := range m.Content {
		if b.Type != conv.BlockText || !IsContextual(b.Text) {
			return false
		}
	}
	return true
}
