package event

import _ "embed"

// Schema is the JSON Schema that every NDJSON event validates against
// (printed by `awl schema events`).
//
//go:embed events.schema.json
var Schema []byte
