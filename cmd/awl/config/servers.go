package config

import (
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
			if credentialName(k) && strings.TrimSpace(v) != "" && !strings.Contains(v, "${") {
				line, _ := p.at(sub...)
				p.errs = append(p.errs, posError{position{line, 0}, errorf(p.path, line, 0,
					"%s: a credential written into the file: name it instead, as \"${VAR}\", and set VAR in the environment (files name secrets, never hold them)", strings.Join(sub, "."))})
			}
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
	for _, w := range []string{"token", "secret", "key", "password", "passwd"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
