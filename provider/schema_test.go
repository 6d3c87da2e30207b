package provider

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestLowerToolSchema: a schema every API takes is sent byte for byte;
// one with a root union, no type or a type list becomes an object root;
// what no object can match is an error naming why.
func TestLowerToolSchema(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, err string
		changed             bool
	}{
		{name: "object", in: `{"type":"object", "properties":{"a":{"type":"string","minLength":1}}}`, want: `{"type":"object", "properties":{"a":{"type":"string","minLength":1}}}`},
		{name: "empty", in: "  ", want: emptyObjectSchema, changed: true},
		{name: "true", in: `true`, want: emptyObjectSchema, changed: true},
		{name: "no type", in: `{}`, want: `{"properties":{},"type":"object"}`, changed: true},
		{name: "type list", in: `{"type":["null","object"],"properties":{"a":{}}}`, want: `{"properties":{"a":{}},"type":"object"}`, changed: true},
		{name: "oneOf root", in: `{"oneOf":[{"properties":{"a":{"type":"string"}},"required":["a","c"]},{"properties":{"b":{"type":"string"}},"required":["b","c"]},{"type":"string"}],"$defs":{"x":{}}}`,
			want: `{"$defs":{"x":{}},"description":"The arguments must match exactly one of these schemas: [{\"properties\":{\"a\":{\"type\":\"string\"}},\"required\":[\"a\",\"c\"]},{\"properties\":{\"b\":{\"type\":\"string\"}},\"required\":[\"b\",\"c\"]},{\"type\":\"string\"}]","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["c"],"type":"object"}`, changed: true},
		{name: "allOf root keeps additionalProperties false", in: `{"type":"object","properties":{"a":{"type":"string"}},"allOf":[{"properties":{"b":{"type":"string"}},"required":["a"]}],"additionalProperties":false}`,
			want: `{"additionalProperties":false,"description":"The arguments must match all of these schemas: [{\"properties\":{\"b\":{\"type\":\"string\"}},\"required\":[\"a\"]}]","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a"],"type":"object"}`, changed: true},
		{name: "string root", in: `{"type":"string"}`, err: `root is of type "string", not an object`},
		{name: "false", in: `false`, err: "no arguments are valid"},
		{name: "array", in: `[1]`, err: "not a JSON object"},
		{name: "not JSON", in: `{"type":`, err: "not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed, err := LowerToolSchema(json.RawMessage(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || string(got) != tc.want || changed != tc.changed {
				t.Fatalf("got %s, changed %v, %v\nwant %s, changed %v", got, changed, err, tc.want, tc.changed)
			}
		})
	}
}

// TestAnthropicOutputSchema: the docs' verdict.json goes out without a
// keyword Anthropic refuses, every object closed, the constraints in
// descriptions; $ref stands alone; a map of values stays a map.
func TestAnthropicOutputSchema(t *testing.T) {
	got := gjson.ParseBytes(anthropicOutputSchema(json.RawMessage(`{"type":"object","properties":{"verdict":{"enum":["approve","request_changes"]},"comments":{"type":"array","items":{"type":"object","properties":{"file":{"type":"string"},"line":{"type":"integer","minimum":1},"body":{"type":"string"}},"required":["file","line","body"],"additionalProperties":false}},"ref":{"$ref":"#/$defs/x","description":"dropped"},"counts":{"type":"object","additionalProperties":{"type":"integer","maximum":9}}},"required":["verdict","comments"],"$defs":{"x":{"type":"string","maxLength":3}}}`)))
	for path, want := range map[string]string{
		"additionalProperties":                           "false",
		"properties.verdict.type":                        `"string"`,
		"properties.comments.items.properties.line":      `{"description":"{minimum: 1}","type":"integer"}`,
		"properties.comments.items.additionalProperties": "false",
		"properties.ref":                                 `{"$ref":"#/$defs/x"}`,
		"properties.counts.additionalProperties":         `{"description":"{maximum: 9}","type":"integer"}`,
		"$defs.x":                                        `{"description":"{maxLength: 3}","type":"string"}`,
	} {
		if g := got.Get(strings.ReplaceAll(path, "$", `\$`)).Raw; g != want {
			t.Errorf("%s = %s, want %s", path, g, want)
		}
	}
	for _, kw := range []string{"minimum", "maximum", "maxLength", "minLength", "uniqueItems", "multipleOf"} {
		if strings.Contains(got.Raw, `"`+kw+`":`) {
			t.Errorf("%s is still a keyword: %s", kw, got.Raw)
		}
	}
}

// TestOpenAIStrict: strict only within what strict mode takes.
func TestOpenAIStrict(t *testing.T) {
	closed := func(prop string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{"a":` + prop + `},"required":["a"],"additionalProperties":false}`)
	}
	for prop, want := range map[string]bool{
		`{"type":"string"}`:                                                    true,
		`{"type":"integer","minimum":1,"maximum":3}`:                           true,
		`{"type":"string","pattern":"^a","format":"uuid"}`:                     true,
		`{"type":"array","items":{"type":"string"},"maxItems":2}`:              true,
		`{"anyOf":[{"type":"string"},{"type":"null"}]}`:                        true,
		`{"type":"array","items":{"type":"string"},"uniqueItems":true}`:        false,
		`{"allOf":[{"type":"string"}]}`:                                        false,
		`{"type":"object","patternProperties":{"x":{}}}`:                       false,
		`{"type":"string","minLength":1}`:                                      false,
		`{"type":"string","format":"uri"}`:                                     false,
		`{"oneOf":[{"type":"string"},{"type":"null"}]}`:                        false,
		`{"type":"string","default":"x"}`:                                      false,
		`{"type":"object","properties":{"b":{"type":"string"}},"required":[]}`: false,
	} {
		if got := openAIStrict(closed(prop)); got != want {
			t.Errorf("strict for property %s = %v, want %v", prop, got, want)
		}
	}
}
