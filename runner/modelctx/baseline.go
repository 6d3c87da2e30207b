package modelctx

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/awlrun/awl/session"
)

// Baseline is the persisted turnContext: what the model has already been
// shown. Texts are recorded as SHA-256 digests (lowercase hex, "" for empty
// text), so a baseline is small and never repeats the prompt.
type Baseline struct {
	// The environment context last shown; empty when it is off.
	Cwd      string `json:"cwd,omitempty"`
	Shell    string `json:"shell,omitempty"`
	Date     string `json:"date,omitempty"`
	Timezone string `json:"timezone,omitempty"`

	// System and AppendSystem are digests of the texts; "" means none.
	System       string `json:"system,omitempty"`
	AppendSystem string `json:"appendSystem,omitempty"`
	// ToolPolicy is the digest of the sorted tool names joined by "\n".
	ToolPolicy string `json:"toolPolicy,omitempty"`
	// OutputSchema is the --output-schema shown, in full (compact JSON):
	// a resumed run keeps validating against it. Absent means none.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Sandbox is the digest of the sandbox policy shown; "" when the
	// sandbox is off.
	Sandbox string `json:"sandbox,omitempty"`
	// MCP are the MCP servers shown, in name order, with the digest of
	// the block shown for each.
	MCP []ServerDigest `json:"mcp,omitempty"`
	// Skills are the skills shown, in name order, with the digest of the
	// catalogue entry shown for each.
	Skills []SkillDigest `json:"skills,omitempty"`
	// AgentsMD are the instruction files shown, in prompt order; empty when
	// AGENTS.md is off.
	AgentsMD []SourceDigest `json:"agentsMd,omitempty"`

	// Off names the fragments that were switched off: "environmentContext"
	// (--no-env-context) and "agentsMd" (--no-agents-md). Switching one back
	// on re-emits it in full.
	Off []string `json:"off,omitempty"`
}

// SourceDigest is one AGENTS.md file in a Baseline.
type SourceDigest struct {
	Path   string `json:"path"`
	Digest string `json:"digest"`
}

// Baseline returns the baseline that records s as shown to the model.
func (s State) Baseline() Baseline {
	b := Baseline{
		System:       digestText(s.System),
		AppendSystem: digestText(s.AppendSystem),
		ToolPolicy:   digestPolicy(normTools(s.Tools), s.AllowRules, s.DenyRules),
		Sandbox:      digestText(s.Sandbox.text()),
		MCP:          mcpDigests(s),
		Skills:       skillDigests(s),
	}
	if s.OutputSchema != "" {
		b.OutputSchema = json.RawMessage(s.OutputSchema)
	}
	if s.NoEnv {
		b.Off = append(b.Off, offEnv)
	} else {
		b.Cwd, b.Shell, b.Date, b.Timezone = s.Cwd, s.Shell, s.Date, s.Timezone
	}
	if s.NoAgentsMD {
		b.Off = append(b.Off, offAgentsMD)
	} else {
		for _, src := range s.AgentsMD {
			b.AgentsMD = append(b.AgentsMD, SourceDigest{Path: src.Path, Digest: digestText(src.Content)})
		}
	}
	return b
}

// Fields returns b as the JSON object of a turnContext entry's members, for
// session.Entry{Type: session.TypeTurnContext, Fields: b.Fields()}. The encoding is
// deterministic and does not escape <, > or &.
func (b Baseline) Fields() []byte {
	return appendBaseline(nil, &b)
}

// Entry returns the turnContext session entry that records b.
func (b Baseline) Entry() session.Entry {
	return session.Entry{Type: session.TypeTurnContext, Fields: b.Fields()}
}

// ParseBaseline decodes the members of a turnContext entry. Unknown members
// are ignored, so newer writers can add some; missing members read as empty,
// which at worst re-emits the fragments they describe.
func ParseBaseline(fields []byte) (Baseline, error) {
	var b Baseline
	if !bytes.HasPrefix(bytes.TrimSpace(fields), []byte("{")) {
		return Baseline{}, fmt.Errorf("parse turnContext: not a JSON object")
	}
	if err := json.Unmarshal(fields, &b); err != nil {
		return Baseline{}, fmt.Errorf("parse turnContext: %w", err)
	}
	return b, nil
}

// LastBaseline returns the baseline of the last turnContext entry in
// entries (the session's active path, root first), or nil when there is
// none, in which case Build emits the full context.
func LastBaseline(entries []session.Entry) (*Baseline, error) {
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Type != session.TypeTurnContext {
			continue
		}
		b, err := ParseBaseline(e.Fields)
		if err != nil {
			return nil, fmt.Errorf("entry %s: %w", e.ID, err)
		}
		return &b, nil
	}
	return nil, nil
}

// isOff reports whether the fragment named name was switched off.
func (b *Baseline) isOff(name string) bool {
	return slices.Contains(b.Off, name)
}

// digestText returns the lowercase hex SHA-256 of s, or "" for "".
func digestText(s string) string {
	if s == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// digestPolicy returns the digest of the tool policy shown: of the tools
// alone (digestTools) when there are no rules on arguments, so a session
// of names alone keeps its digest; else of the tools, then "allow" and
// "deny" lines each followed by its rules, all joined by "\n".
func digestPolicy(tools, allow, deny []string) string {
	if len(allow)+len(deny) == 0 {
		return digestTools(tools)
	}
	parts := append(append(append(append(slices.Clone(tools), "allow"), allow...), "deny"), deny...)
	return digestTools(parts)
}

// digestTools returns the digest of a normalised tool list. Unlike
// digestText it is never "", because "no tools" is a policy too.
func digestTools(tools []string) string {
	sum := sha256.Sum256([]byte(strings.Join(tools, "\n")))
	return hex.EncodeToString(sum[:])
}
