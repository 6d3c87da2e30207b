package jsonschema

import "sync"

// metaJSON describes what a schema document may hold: each keyword of
// draft 2020-12, and the older drafts' forms awl accepts, with the type of
// its value. Unknown keywords are allowed, as the specification says.
const metaJSON = `{
  "$defs": {
    "schemaArray": {"type": "array", "minItems": 1, "items": {"$ref": "#"}},
    "nonNegativeInteger": {"type": "integer", "minimum": 0},
    "simpleTypes": {"enum": ["array", "boolean", "integer", "null", "number", "object", "string"]},
    "stringArray": {"type": "array", "items": {"type": "string"}},
    "schemaMap": {"type": "object", "additionalProperties": {"$ref": "#"}}
  },
  "type": ["object", "boolean"],
  "properties": {
    "$id": {"type": "string"},
    "$schema": {"type": "string"},
    "$ref": {"type": "string"},
    "$anchor": {"type": "string"},
    "$dynamicRef": {"type": "string"},
    "$dynamicAnchor": {"type": "string"},
    "$recursiveRef": {"type": "string"},
    "$recursiveAnchor": {"type": "boolean"},
    "$comment": {"type": "string"},
    "$defs": {"$ref": "#/$defs/schemaMap"},
    "definitions": {"$ref": "#/$defs/schemaMap"},
    "title": {"type": "string"},
    "description": {"type": "string"},
    "examples": {"type": "array"},
    "deprecated": {"type": "boolean"},
    "readOnly": {"type": "boolean"},
    "writeOnly": {"type": "boolean"},
    "multipleOf": {"type": "number", "exclusiveMinimum": 0},
    "maximum": {"type": "number"},
    "minimum": {"type": "number"},
    "exclusiveMaximum": {"type": ["number", "boolean"]},
    "exclusiveMinimum": {"type": ["number", "boolean"]},
    "maxLength": {"$ref": "#/$defs/nonNegativeInteger"},
    "minLength": {"$ref": "#/$defs/nonNegativeInteger"},
    "pattern": {"type": "string"},
    "items": {"anyOf": [{"$ref": "#"}, {"$ref": "#/$defs/schemaArray"}]},
    "prefixItems": {"$ref": "#/$defs/schemaArray"},
    "additionalItems": {"$ref": "#"},
    "maxItems": {"$ref": "#/$defs/nonNegativeInteger"},
    "minItems": {"$ref": "#/$defs/nonNegativeInteger"},
    "uniqueItems": {"type": "boolean"},
    "contains": {"$ref": "#"},
    "maxContains": {"$ref": "#/$defs/nonNegativeInteger"},
    "minContains": {"$ref": "#/$defs/nonNegativeInteger"},
    "maxProperties": {"$ref": "#/$defs/nonNegativeInteger"},
    "minProperties": {"$ref": "#/$defs/nonNegativeInteger"},
    "required": {"$ref": "#/$defs/stringArray"},
    "additionalProperties": {"$ref": "#"},
    "properties": {"$ref": "#/$defs/schemaMap"},
    "patternProperties": {"$ref": "#/$defs/schemaMap"},
    "dependencies": {"type": "object", "additionalProperties": {"anyOf": [{"$ref": "#"}, {"$ref": "#/$defs/stringArray"}]}},
    "dependentRequired": {"type": "object", "additionalProperties": {"$ref": "#/$defs/stringArray"}},
    "dependentSchemas": {"$ref": "#/$defs/schemaMap"},
    "propertyNames": {"$ref": "#"},
    "enum": {"type": "array"},
    "type": {"anyOf": [
      {"$ref": "#/$defs/simpleTypes"},
      {"type": "array", "items": {"$ref": "#/$defs/simpleTypes"}, "minItems": 1, "uniqueItems": true}
    ]},
    "format": {"type": "string"},
    "contentMediaType": {"type": "string"},
    "contentEncoding": {"type": "string"},
    "contentSchema": {"$ref": "#"},
    "if": {"$ref": "#"},
    "then": {"$ref": "#"},
    "else": {"$ref": "#"},
    "allOf": {"$ref": "#/$defs/schemaArray"},
    "anyOf": {"$ref": "#/$defs/schemaArray"},
    "oneOf": {"$ref": "#/$defs/schemaArray"},
    "not": {"$ref": "#"},
    "unevaluatedItems": {"$ref": "#"},
    "unevaluatedProperties": {"$ref": "#"}
  }
}`

// metaSchema is compiled on first use, never at start: a sync.Once, not a
// package-level sync.OnceValue, whose call the initialiser would make at
// every start.
var (
	metaOnce sync.Once
	meta     *Schema
)

func metaSchema() *Schema {
	metaOnce.Do(compileMeta)
	return meta
}

func compileMeta() {
	v, err := Unmarshal([]byte(metaJSON))
	if err != nil {
		panic("jsonschema: meta-schema: " + err.Error())
	}
	if meta, err = compile(v); err != nil {
		panic("jsonschema: meta-schema: " + err.Error())
	}
}
