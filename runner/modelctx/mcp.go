package modelctx

import (
	"strings"

	"github.com/awlrun/awl/conv"
)

// MCPServer is one configured MCP server as the model is told about it.
type MCPServer struct {
	Name string
	// Failed is set when the server did not start: the model is told its
	// tools are unavailable.
	Failed bool
	// Tools are the names of the server's tools offered in this run.
	Tools []string
	// Instructions are the server's own instructions, if any.
	Instructions string
}

// maxInstructions bounds the server instructions shown to the model.
const maxInstructions = 8 << 10

// mcpServer tells the model about one MCP server: its tools and its
// instructions, or that it did not start, or (removed) that it is no
// longer configured.
type mcpServer struct {
	srv     MCPServer
	removed bool
}

func (mcpServer) role() conv.Role               { return conv.RoleSystem }
func (mcpServer) markers() (open, close string) { return "", "" }

func (f mcpServer) render() string {
	var b strings.Builder
	b.WriteString(`<mcp_server name="` + escapeAttr(f.srv.Name) + "\">\n")
	switch {
	case f.removed:
		b.WriteString("This MCP server is no longer configured: its tools are gone.\n")
	case f.srv.Failed:
		b.WriteString("This MCP server did not start: its tools are not available in this run.\n")
	default:
		b.WriteString("Tools: " + strings.Join(normTools(f.srv.Tools), ", ") + ".\n")
		if in := strings.TrimSpace(f.srv.Instructions); in != "" {
			if len(in) > maxInstructions {
				in = strings.ToValidUTF8(in[:maxInstructions], "") + " […]"
			}
			b.WriteString("Instructions from the server:\n" + in + "\n")
		}
	}
	b.WriteString("</mcp_server>")
	return b.String()
}

// shown returns the servers to render: those that failed, and those that
// started with at least one tool offered.
func shownMCP(cur State) []MCPServer {
	var out []MCPServer
	for _, s := range cur.MCP {
		if s.Failed || len(s.Tools) > 0 {
			out = append(out, s)
		}
	}
	return out
}

func (mcpServer) build(cur State, base *Baseline) []fragment {
	seen := map[string]string{}
	if base != nil {
		for _, s := range base.MCP {
			seen[s.Name] = s.Digest
		}
	}
	var out []fragment
	present := map[string]bool{}
	for _, s := range shownMCP(cur) {
		present[s.Name] = true
		f := mcpServer{srv: s}
		if d, ok := seen[s.Name]; !ok || d != digestText(f.render()) {
			out = append(out, f)
		}
	}
	if base != nil {
		for _, s := range base.MCP {
			if !present[s.Name] {
				out = append(out, mcpServer{srv: MCPServer{Name: s.Name}, removed: true})
			}
		}
	}
	return out
}

// ServerDigest is one MCP server in a Baseline: its name and the digest
// of the block shown for it.
type ServerDigest struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
}

// mcpDigests records the servers shown, for the baseline.
func mcpDigests(cur State) []ServerDigest {
	var out []ServerDigest
	for _, s := range shownMCP(cur) {
		out = append(out, ServerDigest{Name: s.Name, Digest: digestText(mcpServer{srv: s}.render())})
	}
	return out
}
