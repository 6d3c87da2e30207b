package policy

import (
	"encoding/json"
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

// stringArg reads the string argument key of a call's input as the tools
// decode it: the object's member of exactly that name (encoding/json's
// struct decoding would also take "Command" for "command"), the last one
// when it is repeated. ok is false when it is absent, null or not a
// string, or the input is not an object: the tool refuses those itself.
func stringArg(input []byte, key string) (string, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(input, &obj) != nil {
		return "", false
	}
	raw, ok := obj[key]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
