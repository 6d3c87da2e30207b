package provider

import (
	"encoding/json"
	"errors"
	"strings"
)

// outputSchemaName is the name the OpenAI APIs require for a json_schema
// format (^[a-zA-Z0-9_-]{1,64}$).
const outputSchemaName = "output"

// RejectsOutputSchema reports whether err is a server refusing the native
// structured-output parameter: a 400 (or 422) whose message names it
// (response_format, text.format, output_config, output_format, json_schema),
// or the same refusal reported inside the stream (the Responses API's error
// event, code invalid_json_schema: an Error of KindRequest with no status).
// OpenAI words its refusal of a schema "Invalid schema for response_format
// 'NAME': …" on both its APIs. Compatible servers that do not support the
// parameter answer this way too; the caller then goes on without it.
func RejectsOutputSchema(err error) bool {
	var e *Error
	if !errors.As(err, &e) || (e.Status != 400 && e.Status != 422 && (e.Status != 0 || e.Kind != KindRequest)) {
		return false
	}
	if RefusesBudgetThinking(err) {
		return false // names output_config.effort, not the schema
	}
	m := strings.ToLower(e.Message)
	for _, p := range []string{"response_format", "text.format", "output_config", "output_format", "json_schema", "structured output"} {
		if strings.Contains(m, p) {
			return true
		}
	}
	return false
}

// strictSchema reports whether an OpenAI strict json_schema accepts schema
// as it is: every object, at any depth, lists all its properties in
// required and sets additionalProperties to false, and the root is an
// object. Anything else is sent non-strict.
func strictSchema(schema json.RawMessage) bool {
	var root any
	if json.Unmarshal(schema, &root) != nil {
		return false
	}
	m, ok := root.(map[string]any)
	if !ok || m["type"] != "object" {
		return false
	}
	return strictNode(root)
}

func strictNode(n any) bool {
	switch v := n.(type) {
	case []any:
		for _, x := range v {
			if !strictNode(x) {
				return false
			}
		}
	case map[string]any:
		if isObjectSchema(v) {
			if v["additionalProperties"] != false {
				return false
			}
			props, _ := v["properties"].(map[string]any)
			req, _ := v["required"].([]any)
			have := make(map[string]bool, len(req))
			for _, r := range req {
				if s, ok := r.(string); ok {
					have[s] = true
				}
			}
			for k := range props {
				if !have[k] {
					return false
				}
			}
		}
		for k, x := range v {
			if k == "enum" || k == "const" || k == "default" || k == "examples" {
				continue // values, not schemas
			}
			if k == "properties" || k == "$defs" || k == "definitions" {
				sub, _ := x.(map[string]any)
				for _, s := range sub {
					if !strictNode(s) {
						return false
					}
				}
				continue
			}
			if !strictNode(x) {
				return false
			}
		}
	}
	return true
}

// isObjectSchema reports whether a schema node describes an object.
func isObjectSchema(v map[string]any) bool {
	switch t := v["type"].(type) {
	case string:
		return t == "object"
	case []any:
		for _, x := range t {
			if x == "object" {
				return true
			}
		}
	}
	_, ok := v["properties"]
	return ok
}

// objectRoot reports whether schema's root is an object schema, the only
// kind every API accepts natively; other schemas go by instructions alone.
func objectRoot(schema json.RawMessage) bool {
	if len(schema) == 0 {
		return false
	}
	var root map[string]any
	return json.Unmarshal(schema, &root) == nil && isObjectSchema(root)
}

// schemaFormat is a json_schema output format: Responses' text.format,
// Chat's response_format.json_schema and Anthropic's output_config.format
// use the fields they need, in this order.
type schemaFormat struct {
	Type   string          `json:"type,omitempty"`
	Name   string          `json:"name,omitempty"`
	Schema json.RawMessage `json:"schema"`
	Strict *bool           `json:"strict,omitempty"`
}

// newSchemaFormat returns the format for schema, nil when it is not sent
// natively. withType and named say which fields the API wants; strict is
// set where the API has it.
func newSchemaFormat(schema json.RawMessage, withType, named, strict bool) *schemaFormat {
	if !objectRoot(schema) {
		return nil
	}
	f := &schemaFormat{Schema: schema}
	if withType {
		f.Type = "json_schema"
	}
	if named {
		f.Name = outputSchemaName
	}
	if strict {
		s := openAIStrict(schema)
		f.Strict = &s
	}
	return f
}

func (f *schemaFormat) appendJSON(w *jsonWriter) {
	w.begin()
	w.optStr("type", f.Type)
	w.optStr("name", f.Name)
	w.rawField("schema", f.Schema)
	if f.Strict != nil {
		w.boolField("strict", *f.Strict)
	}
	w.end()
}

// formatWrapper is {"format": …} (Responses' text, Anthropic's
// output_config) or Chat's {"type":"json_schema","json_schema": …}.
type formatWrapper struct {
	Type       string        `json:"type,omitempty"`
	Format     *schemaFormat `json:"format,omitempty"`
	JSONSchema *schemaFormat `json:"json_schema,omitempty"`
}

func (f *formatWrapper) appendJSON(w *jsonWriter) {
	w.begin()
	w.optStr("type", f.Type)
	optObjField(w, "format", f.Format)
	optObjField(w, "json_schema", f.JSONSchema)
	w.end()
}
