package main

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/mcp"
	"github.com/awlrun/awl/runner/sandbox"
)

// loadMCP reads the --mcp-config files. A .mcp.json in the working
// directory is never read on its own: a repository under test must not
// start processes unless the caller asks.
func (c *runCmd) loadMCP(a *app) ([]mcp.Server, error) {
	if len(c.MCPConfig) == 0 {
		return nil, nil
	}
	servers, err := mcp.LoadConfig(c.MCPConfig, a.getenv)
	var ce *mcp.ConfigError
	if errors.As(err, &ce) {
		return nil, runner.Usagef("--mcp-config " + ce.Msg)
	}
	return servers, err
}

// startMCP starts the servers whose tools the tool policy may offer, and
// with --mcp-strict turns a failed start into exit 4.
func (c *runCmd) startMCP(ctx context.Context, a *app, cwd string, servers []mcp.Server, sb *sandbox.Sandbox) (*mcp.Manager, error) {
	var wanted []mcp.Server
	for _, s := range servers {
		if c.mayOffer(mcp.Prefix + s.Name + "__") {
			wanted = append(wanted, s)
		}
	}
	if len(wanted) == 0 {
		return nil, nil
	}
	opts := mcp.Options{
		Timeout:     c.MCPTimeout,
		CallTimeout: c.MCPCallTimeout,
		Environ:     toolEnviron(c.secretVars),
		Dir:         cwd,
		Stderr:      a.stderr,
		Version:     currentStamp().Version,
	}
	if sb != nil {
		netsb, err := sb.WithNetwork()
		if err != nil {
			return nil, err
		}
		opts.Confine, opts.ConfineNetwork = sb, netsb
	}
	m := mcp.Start(ctx, wanted, opts)
	if err := ctx.Err(); err != nil {
		m.Close()
		return nil, context.Cause(ctx)
	}
	if failed := m.Failed(); c.MCPStrict && len(failed) > 0 {
		m.Close()
		var what []string
		for _, f := range failed {
			what = append(what, fmt.Sprintf("%s: %v", f.Name, f.Err))
		}
		return nil, &runner.ConfigError{Reason: "mcp_server_failed", Msg: "MCP server(s) did not start (--mcp-strict): " + strings.Join(what, "; ")}
	}
	return m, nil
}

// mayOffer reports whether the tool policy can offer any tool whose name
// starts with prefix; a server none of whose tools could be offered is not
// started.
func (c *runCmd) mayOffer(prefix string) bool {
	if c.NoTools {
		return false
	}
	for _, p := range cleanList(c.DenyTools) {
		if lit, ok := strings.CutSuffix(p, "*"); ok && !hasMeta(lit) && strings.HasPrefix(prefix, lit) {
			return false
		}
	}
	allow := cleanList(c.Tools)
	if len(allow) == 0 {
		return true
	}
	for _, p := range allow {
		lit := p
		if i := strings.IndexAny(p, `*?[\`); i >= 0 {
			lit = p[:i]
		}
		if strings.HasPrefix(prefix, lit) || strings.HasPrefix(lit, prefix) {
			return true
		}
	}
	return false
}

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// matchTool reports whether the tool name matches the --tools or
// --deny-tools entry p: a name, or a glob (* ? [..]) such as mcp__github__*.
func matchTool(p, name string) bool {
	if !hasMeta(p) {
		return p == name
	}
	ok, _ := path.Match(p, name)
	return ok
}
