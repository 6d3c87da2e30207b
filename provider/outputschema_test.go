package provider

import (
	"encoding/json"
	"testing"
)

func TestStrictSchema(t *testing.T) {
	for _, tc := range []struct {
		schema string
		strict bool
	}{
		{strictVerdict, true},
		{looseVerdict, false},
		{`{"type":"object","properties":{},"additionalProperties":false}`, true},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, false},
		// A nested object that allows extra properties.
		{`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}},"required":["b"]}},"required":["a"],"additionalProperties":false}`, false},
		// A nested object in an array item that omits one from required.
		{`{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x"],"additionalProperties":false}}},"required":["l"],"additionalProperties":false}`, false},
		// The same, qualifying; and in $defs.
		{`{"type":"object","properties":{"l":{"type":"array","items":{"$ref":"#/$defs/p"}}},"required":["l"],"additionalProperties":false,"$defs":{"p":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false}}}`, true},
		{`{"type":"object","properties":{"l":{"$ref":"#/$defs/p"}},"required":["l"],"additionalProperties":false,"$defs":{"p":{"type":"object","properties":{"x":{"type":"integer"}}}}}`, false},
		// A property called "properties" is a property, not a keyword.
		{`{"type":"object","properties":{"properties":{"type":"string"}},"required":["properties"],"additionalProperties":false}`, true},
		// A non-object root is never strict (nor native).
		{`{"type":"array","items":{"type":"string"}}`, false},
		{`true`, false},
	} {
		if got := strictSchema(json.RawMessage(tc.schema)); got != tc.strict {
			t.Errorf("%s: strict %v, want %v", tc.schema, got, tc.strict)
		}
	}
}

func TestRejectsOutputSchema(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&Error{Status: 400, Message: "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model."}, true},
		{&Error{Status: 400, Message: "Invalid schema for response_format 'output': In context=(), 'required' is required"}, true},
		{&Error{Status: 400, Message: "output_config.format: Extra inputs are not permitted"}, true},
		{&Error{Status: 422, Message: "unknown field `text.format`"}, true},
		{&Error{Status: 400, Message: "messages: roles must alternate"}, false},
		{&Error{Status: 500, Message: "response_format failed"}, false},
		{&Error{Status: 401, Message: "response_format"}, false},
		{nil, false},
	} {
		if got := RejectsOutputSchema(tc.err); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.err, got, tc.want)
		}
	}
}
