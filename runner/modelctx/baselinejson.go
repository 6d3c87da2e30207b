package modelctx

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/awlrun/awl/internal/jsonstr"
)

// appendBaseline appends b as encoding/json writes it (HTML escaping off,
// the output schema compacted), written by hand: every new session writes
// a baseline before its first request, and encoding/json built its
// encoder for these types by reflection there, once a process.
// TestBaselineFieldsBytes holds the two to the same bytes.
func appendBaseline(dst []byte, b *Baseline) []byte {
	start := len(dst)
	dst = append(dst, '{')
	field := func(name, value string) {
		if value == "" {
			return
		}
		if len(dst) > start+1 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, name...)
		dst = append(dst, '"', ':')
		dst = jsonstr.Append(dst, value)
	}
	key := func(name string) {
		if len(dst) > start+1 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, name...)
		dst = append(dst, '"', ':')
	}
	field("cwd", b.Cwd)
	field("shell", b.Shell)
	field("date", b.Date)
	field("timezone", b.Timezone)
	field("system", b.System)
	field("appendSystem", b.AppendSystem)
	field("toolPolicy", b.ToolPolicy)
	if len(b.OutputSchema) > 0 {
		key("outputSchema")
		var buf bytes.Buffer
		if err := json.Compact(&buf, b.OutputSchema); err != nil {
			// As encoding/json fails on it: the schema was compiled
			// from valid JSON.
			panic(fmt.Sprintf("encode baseline: output schema: %v", err))
		}
		dst = append(dst, buf.Bytes()...)
	}
	field("sandbox", b.Sandbox)
	if len(b.MCP) > 0 {
		key("mcp")
		dst = appendList(dst, len(b.MCP), func(dst []byte, i int) []byte {
			return appendPair(dst, "name", b.MCP[i].Name, b.MCP[i].Digest)
		})
	}
	if len(b.Skills) > 0 {
		key("skills")
		dst = appendList(dst, len(b.Skills), func(dst []byte, i int) []byte {
			return appendPair(dst, "name", b.Skills[i].Name, b.Skills[i].Digest)
		})
	}
	if len(b.AgentsMD) > 0 {
		key("agentsMd")
		dst = appendList(dst, len(b.AgentsMD), func(dst []byte, i int) []byte {
			return appendPair(dst, "path", b.AgentsMD[i].Path, b.AgentsMD[i].Digest)
		})
	}
	if len(b.Off) > 0 {
		key("off")
		dst = appendList(dst, len(b.Off), func(dst []byte, i int) []byte { return jsonstr.Append(dst, b.Off[i]) })
	}
	return append(dst, '}')
}

// appendList appends a JSON array of n elements, each appended by elem.
func appendList(dst []byte, n int, elem func(dst []byte, i int) []byte) []byte {
	dst = append(dst, '[')
	for i := range n {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = elem(dst, i)
	}
	return append(dst, ']')
}

// appendPair appends {"<name>":value,"digest":digest}.
func appendPair(dst []byte, name, value, digest string) []byte {
	dst = append(dst, '{', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	dst = jsonstr.Append(dst, value)
	dst = append(dst, `,"digest":`...)
	dst = jsonstr.Append(dst, digest)
	return append(dst, '}')
}
