package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
)

// Schemas are lowered here, once for every kind: a tool's input schema
// (built-in or MCP) and the output schema go out in the shape each API
// takes, while the caller keeps the full schema and validates against it.
//
//   - LowerToolSchema: every API wants an object root for a tool. A root
//     union (anyOf, oneOf, allOf) becomes an object with the union's
//     properties, the constraint said in the description; a root with no
//     type, or a type list holding "object", becomes an object. What can
//     never be an object (a string root, say) is an error: the caller
//     skips the tool with a warning.
//   - anthropicOutputSchema: output_config keeps the keywords Anthropic's
//     structured outputs take, forces additionalProperties false on
//     objects, and says the rest in each node's description.
//   - openAIStrict: strict true only for a schema within what OpenAI's
//     strict mode takes; any other goes out as it is, non-strict.

// emptyObjectSchema is the input schema of a tool that takes no arguments.
const emptyObjectSchema = `{"type":"object","properties":{}}`

// LowerToolSchema returns schema as a tool input schema every wire API
// accepts, and whether it changed it. An unchanged schema is returned as
// is, byte for byte. The error says why schema cannot be lowered.
func LowerToolSchema(schema json.RawMessage) (json.RawMessage, bool, error) {
	s := bytes.TrimSpace(schema)
	if len(s) == 0 {
		return json.RawMessage(emptyObjectSchema), true, nil
	}
	root := gjson.ParseBytes(s)
	if root.IsObject() && root.Get("type").String() == "object" && !root.Get("anyOf").Exists() &&
		!root.Get("oneOf").Exists() && !root.Get("allOf").Exists() && json.Valid(s) {
		return schema, false, nil // the common case, without a parse
	}
	var v any
	if err := json.Unmarshal(s, &v); err != nil {
		return nil, false, fmt.Errorf("the input schema is not JSON: %v", err)
	}
	switch m := v.(type) {
	case bool:
		if !m {
			return nil, false, errors.New("the input schema is false: no arguments are valid")
		}
		return json.RawMessage(emptyObjectSchema), true, nil
	case map[string]any:
		out, err := lowerToolRoot(m)
		if err != nil {
			return nil, false, err
		}
		b, err := marshalSchema(out)
		return b, true, err
	}
	return nil, false, errors.New("the input schema is not a JSON object")
}

// lowerToolRoot makes an object root of m (changed in place).
func lowerToolRoot(m map[string]any) (map[string]any, error) {
	if t, ok := m["type"]; ok && !hasType(t, "object") {
		return nil, fmt.Errorf("the input schema's root is of type %s, not an object: no arguments can match it", compactJSON(t))
	}
	m["type"] = "object"
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		branches, ok := m[kw].([]any)
		if !ok {
			delete(m, kw)
			continue
		}
		delete(m, kw)
		props, _ := m["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
		}
		required := stringSet(m["required"])
		var common map[string]bool
		for _, b := range branches {
			bm, ok := b.(map[string]any)
			if !ok {
				continue
			}
			if t, ok := bm["type"]; ok && !hasType(t, "object") {
				continue // a branch no object matches adds nothing
			}
			bp, _ := bm["properties"].(map[string]any)
			for k, s := range bp {
				if _, dup := props[k]; !dup {
					props[k] = s
				}
			}
			br := stringSet(bm["required"])
			if kw == "allOf" {
				for k := range br {
					required[k] = true
				}
				continue
			}
			if common == nil {
				common = br
			} else {
				for k := range common {
					if !br[k] {
						delete(common, k)
					}
				}
			}
		}
		for k := range common {
			required[k] = true
		}
		m["properties"] = props
		if len(required) > 0 {
			m["required"] = sortedKeys(required)
		}
		// The root's own additionalProperties stays (SEP-1613: a client
		// keeps it): the model sees a closed object closed. The branches'
		// properties have joined the root's, so they stay open to it.
		how := map[string]string{"allOf": "all", "anyOf": "at least one", "oneOf": "exactly one"}[kw]
		addDescription(m, fmt.Sprintf("The arguments must match %s of these schemas: %s", how, compactJSON(branches)))
	}
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
	}
	return m, nil
}

// anthropicKeywords are the keywords Anthropic's structured outputs take
// (anthropic-sdk-go's transformSchema keeps the same, plus the values
// enum, const and default, which the API documents as supported).
func anthropicKeywords(k string) bool {
	switch k {
	case "$ref", "$defs", "definitions", "type", "anyOf", "allOf",
		"description", "title", "properties", "additionalProperties",
		"required", "items", "minItems", "format",
		"enum", "const", "default":
		return true
	}
	return false
}

// anthropicFormats are the string formats Anthropic takes.
var anthropicFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}

// anthropicOutputSchema is schema as Anthropic's output_config takes it.
// A schema that does not parse is sent as it is.
func anthropicOutputSchema(schema json.RawMessage) json.RawMessage {
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return schema
	}
	b, err := marshalSchema(anthropicNode(v))
	if err != nil {
		return schema
	}
	return b
}

func anthropicNode(n any) any {
	m, ok := n.(map[string]any)
	if !ok {
		return n
	}
	if ref, ok := m["$ref"]; ok {
		return map[string]any{"$ref": ref} // siblings of $ref are refused
	}
	extras := map[string]any{}
	for k, v := range m {
		if k == "$schema" || k == "$id" || k == "$comment" {
			delete(m, k) // about the document, nothing for the model
			continue
		}
		if !anthropicKeywords(k) {
			extras[k] = v
			delete(m, k)
		}
	}
	if one, ok := extras["oneOf"]; ok {
		if _, any := m["anyOf"]; !any {
			m["anyOf"] = one
			delete(extras, "oneOf")
		}
	}
	if _, ok := m["type"]; !ok {
		if t := valuesType(m); t != "" {
			m["type"] = t
		}
	}
	for _, k := range []string{"$defs", "definitions", "properties"} {
		if sub, ok := m[k].(map[string]any); ok {
			for name, s := range sub {
				sub[name] = anthropicNode(s)
			}
		}
	}
	for _, k := range []string{"anyOf", "allOf"} {
		if list, ok := m[k].([]any); ok {
			for i, s := range list {
				list[i] = anthropicNode(s)
			}
		}
	}
	if hasType(m["type"], "object") {
		switch ap := m["additionalProperties"].(type) {
		case map[string]any:
			if _, props := m["properties"]; !props {
				m["additionalProperties"] = anthropicNode(ap) // a map of values
				break
			}
			extras["additionalProperties"] = ap
			m["additionalProperties"] = false
		default:
			if ap == true {
				extras["additionalProperties"] = true
			}
			if _, props := m["properties"]; !props {
				m["properties"] = map[string]any{}
			}
			m["additionalProperties"] = false
		}
	}
	if items, ok := m["items"]; ok {
		m["items"] = anthropicNode(items)
	}
	if f, ok := m["format"].(string); ok && !slices.Contains(anthropicFormats, f) {
		extras["format"] = f
		delete(m, "format")
	}
	if n, ok := m["minItems"].(float64); ok && n != 0 && n != 1 {
		extras["minItems"] = m["minItems"]
		delete(m, "minItems")
	}
	if len(extras) > 0 {
		parts := make([]string, 0, len(extras))
		for _, k := range sortedKeys(extras) {
			parts = append(parts, k+": "+compactJSON(extras[k]))
		}
		addDescription(m, "{"+strings.Join(parts, ", ")+"}")
	}
	return m
}

// openAIStrictKeywords are the keywords OpenAI's strict mode takes (the
// structured-outputs guide's "supported schemas").
func openAIStrictKeywords(k string) bool {
	switch k {
	case "type", "properties", "required", "additionalProperties",
		"items", "enum", "const", "anyOf", "$ref", "$defs",
		"definitions", "description", "title", "$schema", "$id",
		"pattern", "format", "multipleOf", "maximum", "exclusiveMaximum",
		"minimum", "exclusiveMinimum", "minItems", "maxItems":
		return true
	}
	return false
}

// openAIFormats are the string formats strict mode takes.
var openAIFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}

// openAIStrict reports whether OpenAI's strict mode takes schema as it is:
// every object lists all its properties in required and sets
// additionalProperties false (strictSchema), and every keyword at every
// depth is one strict mode supports.
func openAIStrict(schema json.RawMessage) bool {
	if !strictSchema(schema) {
		return false
	}
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return false
	}
	return strictKeywords(v)
}

func strictKeywords(n any) bool {
	m, ok := n.(map[string]any)
	if !ok {
		return true
	}
	for k, v := range m {
		if !openAIStrictKeywords(k) {
			return false
		}
		switch k {
		case "properties", "$defs", "definitions":
			sub, _ := v.(map[string]any)
			for _, s := range sub {
				if !strictKeywords(s) {
					return false
				}
			}
		case "anyOf":
			list, _ := v.([]any)
			for _, s := range list {
				if !strictKeywords(s) {
					return false
				}
			}
		case "items":
			if !strictKeywords(v) {
				return false
			}
		case "format":
			if f, _ := v.(string); !slices.Contains(openAIFormats, f) {
				return false
			}
		}
	}
	return true
}

// valuesType is the type an untyped node's enum or const values share, or
// "" when they share none.
func valuesType(m map[string]any) string {
	var vals []any
	if e, ok := m["enum"].([]any); ok {
		vals = e
	} else if c, ok := m["const"]; ok {
		vals = []any{c}
	}
	t := ""
	for _, v := range vals {
		var vt string
		switch x := v.(type) {
		case string:
			vt = "string"
		case bool:
			vt = "boolean"
		case float64:
			vt = "number"
			if x == float64(int64(x)) {
				vt = "integer"
			}
		default:
			return ""
		}
		switch {
		case t == "":
			t = vt
		case t == vt:
		case t == "integer" && vt == "number" || t == "number" && vt == "integer":
			t = "number"
		default:
			return ""
		}
	}
	return t
}

// hasType reports whether a type keyword's value is or lists name.
func hasType(t any, name string) bool {
	switch x := t.(type) {
	case string:
		return x == name
	case []any:
		return slices.Contains(x, any(name))
	}
	return false
}

func stringSet(v any) map[string]bool {
	out := map[string]bool{}
	list, _ := v.([]any)
	for _, x := range list {
		if s, ok := x.(string); ok {
			out[s] = true
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// addDescription appends text to a node's description.
func addDescription(m map[string]any, text string) {
	if d, _ := m["description"].(string); d != "" {
		text = d + "\n\n" + text
	}
	m["description"] = text
}

func compactJSON(v any) string {
	b, err := marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// marshalSchema encodes a lowered schema: compact, keys sorted, no HTML
// escaping, the same bytes for the same schema on every request.
func marshalSchema(v any) (json.RawMessage, error) {
	return marshal(v)
}
