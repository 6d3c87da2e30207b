package policy

import (
	"slices"
	"strings"
)

// Check judges a call to the tool name, offered to the model, with input
// (the call's JSON arguments): nil when the policy allows it. A bash
// command is judged as a whole; a path the call names is judged here as
// written, and again by the tool at the moment it opens it (CheckPath).
// Input that does not decode is left to the tool, which refuses it.
func (p *Policy) Check(tool string, input []byte) *Denial {
	if p == nil {
		return nil
	}
	if !p.Offers(tool) {
		return &Denial{Tool: tool, Reason: "the tool is not allowed in this run"}
	}
	switch {
	case tool == "bash":
		if !p.bashRules && !p.hasWriteRules() {
			return nil // never parsed
		}
		cmd, ok := stringArg(input, "command")
		if !ok {
			return nil
		}
		return p.Bash(cmd)
	case slices.Contains(readTools, tool) || slices.Contains(writeTools, tool):
		if !p.HasPathRules(tool) {
			return nil
		}
		name, ok := stringArg(input, "path")
		if !ok {
			name = "."
		}
		if name == "" || name == "~" || strings.HasPrefix(name, "~/") {
			return nil // the tool resolves it, and checks where it opens it
		}
		return p.CheckPath(tool, p.abs(name))
	}
	return nil
}
