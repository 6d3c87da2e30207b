package config

import (
	"slices"
	"strings"
)

// servers reads the [mcp-servers.NAME] tables: each a table of the
// .mcp.json fields (command, args, env, cwd, sandbox, url, headers, oauth,
// roots), checked by the MCP loader when the run starts them. Here a file
// is held to naming its secrets: a header or variable that is a credential
// written literally, not as ${VAR}, is refused.
func (p *parser) servers(v any) []Server {
	m, ok := v.(map[string]any)
	if !ok {
		p.fail([]string{serversKey}, "mcp-servers must be tables, as [mcp-servers.NAME]")
		return nil
	}
	var out []Server
	for _, name := range sortedKeys(m) {
		fields, ok := m[name].(map[string]any)
		path := []string{serversKey, name}
		if !ok {
			p.fail(path, "mcp-servers.%s must be a table, as [mcp-servers.%s]", name, name)
			continue
		}
		p.serverFields(path, fields, serverFields)
		p.credentials(path, fields)
		line, _ := p.at(path...)
		out = append(out, Server{Name: name, File: p.path, Line: line, Fields: fields})
	}
	return out
}

// credentials refuses a credential written literally anywhere in a
// server's table: a string under a name that is a credential's (an
// Authorization header; a name holding token, secret, key or password)
// with no ${VAR} in it.
func (p *parser) credentials(path []string, m map[string]any) {
	for _, k := range sortedKeys(m) {
		sub := append(path[:len(path):len(path)], k)
		switch v := m[k].(type) {
		case map[string]any:
			p.credentials(sub, v)
		case string:
			if !credentialName(k) || strings.TrimSpace(v) == "" {
				continue
			}
			why := ""
			switch {
			case !strings.Contains(v, "${"):
				why = "a credential written into the file"
			case literalDefault(v):
				why = "a credential written into the file as a default (${VAR:-…})"
			case badReference(v):
				// ${VAR-x}, ${A B}, ${X: the MCP loader would refuse it and
				// quote it, credential and all.
				why = "a credential written into the file in what is no ${VAR}"
			case literalRun(v) >= 20:
				why = "a credential written into the file beside a ${VAR}"
			default:
				continue
			}
			line, _ := p.at(sub...)
			p.errs = append(p.errs, posError{position{line, 0}, errorf(p.path, line, 0,
				"%s: %s: name it instead, as \"${VAR}\", and set VAR in the environment (files name secrets, never hold them)", strings.Join(sub, "."), why)})
		}
	}
}

// credentialName tells whether a header or variable named name holds a
// credential.
func credentialName(name string) bool {
	n := strings.ToLower(name)
	if n == "authorization" || n == "proxy-authorization" || n == "cookie" {
		return true
	}
	for _, w := range []string{"token", "secret", "key", "password", "passwd", "assertion"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// badReference tells whether s has a ${ that is not a reference the MCP
// loader expands: no closing brace, or a name that is not [A-Za-z_][A-Za-z0-9_]*.
func badReference(s string) bool {
	bodies, unclosed := references(s)
	for _, b := range bodies {
		if name, _, _ := strings.Cut(b, ":-"); !varName(name) {
			return true
		}
	}
	return unclosed
}

// references are the texts between each ${ of s and the } that ends it,
// and whether a last ${ has none.
func references(s string) (bodies []string, unclosed bool) {
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return bodies, false
		}
		s = s[i+2:]
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return bodies, true
		}
		bodies = append(bodies, s[:end])
		s = s[end+1:]
	}
}

// varName tells whether s is a variable's name, as the MCP loader takes it.
func varName(s string) bool {
	for i, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// literalDefault tells whether s has a ${VAR:-default} reference whose
// default is not empty: text the file holds, used when VAR is unset.
func literalDefault(s string) bool {
	bodies, _ := references(s)
	for _, b := range bodies {
		if _, def, ok := strings.Cut(b, ":-"); ok && strings.TrimSpace(def) != "" {
			return true
		}
	}
	return false
}

// literalRun is the length of the longest run of s's text outside its
// ${…} references with no space in it: "Bearer ${T}" has 6, a token
// written before or after a reference (ghp_…${X}) has its length.
func literalRun(s string) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if strings.HasPrefix(s[i:], "${") {
			if end := strings.IndexByte(s[i:], '}'); end >= 0 {
				i += end
				run = 0
				continue
			}
		}
		if s[i] == ' ' || s[i] == '\t' {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	return longest
}

// fieldSet is the fields a table of a server may hold, each with the
// fields of its sub-tables (nil for a value).
type fieldSet map[string]fieldSet

// serverFields are the fields of a .mcp.json server (runner/mcp's
// rawServer), its oauth object and the oauth's idp.
var serverFields = fieldSet{
	"type": nil, "command": nil, "args": nil, "env": nil, "cwd": nil, "sandbox": nil, "url": nil, "headers": nil, "roots": nil,
	"oauth": {
		"grant": nil, "client_id": nil, "client_secret": nil, "private_key": nil, "signing_algorithm": nil,
		"client_metadata_url": nil, "scopes": nil, "assertion": nil, "assertion_file": nil, "private_network": nil,
		"idp": {"issuer": nil, "token_endpoint": nil, "client_id": nil, "client_secret": nil, "id_token": nil},
	},
}

// serverFields refuses a field of a server's table (or of its oauth or
// idp table) that the MCP loader does not know, with the nearest known
// one: a misspelt "header" would otherwise be dropped without a word.
func (p *parser) serverFields(path []string, m map[string]any, known fieldSet) {
	for _, k := range sortedKeys(m) {
		sub := append(path[:len(path):len(path)], k)
		inner, ok := known[k]
		if !ok {
			names := make([]string, 0, len(known))
			for n := range known {
				names = append(names, n)
			}
			slices.Sort(names)
			p.fail(sub, "unknown key %s%s", strings.Join(sub, "."), nearest(k, names))
			continue
		}
		if t, isTable := m[k].(map[string]any); isTable && inner != nil {
			p.serverFields(sub, t, inner)
		}
	}
}
