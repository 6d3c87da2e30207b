package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/mcp"
	"github.com/awlrun/awl/runner/mcp/oauth"
	"github.com/awlrun/awl/runner/redact"
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
		// A server's stderr goes through the redactor: a server may print
		// what it was given, a key passed as ${ANTHROPIC_API_KEY} included,
		// and CI logs are often public.
		Stderr:   redactedLines{r: redactor(a, c.secretVars), w: a.stderr},
		Version:  currentStamp().Version,
		TokenDir: mcpTokenDir(a.getenv),
	}
	// With $BROWSER set a person is there to authorize a server that wants
	// OAuth; without it, only stored tokens are used.
	if b := a.getenv("BROWSER"); b != "" {
		opts.Login = &oauth.Login{Browser: b, Notify: a.stderr}
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

// policyDenies reports whether the tool policy denies a call to name: a
// --deny-tools entry matches it, or it is a tool of a configured MCP server
// (started or not) that --no-tools or --tools leaves out. The runner asks
// it about names it does not know, such as the tools of a server that was
// not started because the policy denies them all.
func (c *runCmd) policyDenies(servers []mcp.Server) func(name string) bool {
	deny, allow := cleanList(c.DenyTools), cleanList(c.Tools)
	return func(name string) bool {
		if slices.ContainsFunc(deny, func(p string) bool { return matchTool(p, name) }) {
			return true
		}
		ofServer := slices.ContainsFunc(servers, func(s mcp.Server) bool {
			return strings.HasPrefix(name, mcp.Prefix+s.Name+"__")
		})
		if !ofServer {
			return false
		}
		return c.NoTools || (len(allow) > 0 && !slices.ContainsFunc(allow, func(p string) bool { return matchTool(p, name) }))
	}
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

// mcpTokenDir is where OAuth tokens of MCP servers are kept:
// $XDG_STATE_HOME/awl/mcp-tokens, else ~/.local/state/awl/mcp-tokens; ""
// when neither is known.
func mcpTokenDir(getenv func(string) string) string {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "awl", "mcp-tokens")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "awl", "mcp-tokens")
	}
	return ""
}

type mcpCmd struct {
	Login  mcpLoginCmd  `cmd:""`
	Logout mcpLogoutCmd `cmd:""`
}

type mcpServerArgs struct {
	Server    string   `arg:""`
	MCPConfig []string `name:"mcp-config" sep:"none" required:"" placeholder:"FILE"`
}

// find loads the config and returns the named HTTP server.
func (c *mcpServerArgs) find(a *app) (mcp.Server, error) {
	servers, err := mcp.LoadConfig(c.MCPConfig, a.getenv)
	var ce *mcp.ConfigError
	if errors.As(err, &ce) {
		return mcp.Server{}, runner.Usagef("--mcp-config " + ce.Msg)
	}
	if err != nil {
		return mcp.Server{}, err
	}
	for _, s := range servers {
		if s.Name == c.Server {
			if s.URL == "" {
				return mcp.Server{}, runner.Usagef(fmt.Sprintf("mcp server %q is a stdio server: OAuth applies to HTTP servers", c.Server))
			}
			return s, nil
		}
	}
	return mcp.Server{}, runner.Usagef(fmt.Sprintf("no mcp server %q in %s", c.Server, strings.Join(c.MCPConfig, ", ")))
}

type mcpLoginCmd struct {
	mcpServerArgs
	Timeout time.Duration `name:"timeout" default:"5m"`
}

func (c *mcpLoginCmd) Run(a *app) error {
	srv, err := c.find(a)
	if err != nil {
		return err
	}
	dir := mcpTokenDir(a.getenv)
	if dir == "" {
		return runner.Usagef("awl mcp login: neither XDG_STATE_HOME nor HOME is set: nowhere to keep the tokens")
	}
	m := mcp.Start(a.ctx, []mcp.Server{srv}, mcp.Options{
		Timeout:  c.Timeout,
		Stderr:   a.stderr,
		Version:  currentStamp().Version,
		TokenDir: dir,
		Login:    &oauth.Login{Browser: a.getenv("BROWSER"), Notify: a.stderr, Fresh: true},
	})
	defer m.Close()
	if f := m.Failed(); len(f) > 0 {
		return &runner.ConfigError{Reason: "mcp_server_failed", Msg: fmt.Sprintf("mcp server %s: login failed: %v", srv.Name, f[0].Err)}
	}
	p := oauth.TokenFile(dir, srv.Name, srv.URL)
	if _, err := os.Stat(p); err != nil {
		fmt.Fprintf(a.stderr, "awl: mcp server %s did not ask for OAuth; nothing stored\n", srv.Name)
		return nil
	}
	fmt.Fprintf(a.stderr, "awl: logged in to mcp server %s; tokens stored in %s\n", srv.Name, p)
	return nil
}

type mcpLogoutCmd struct {
	mcpServerArgs
}

func (c *mcpLogoutCmd) Run(a *app) error {
	srv, err := c.find(a)
	if err != nil {
		return err
	}
	dir := mcpTokenDir(a.getenv)
	p := oauth.TokenFile(dir, srv.Name, srv.URL)
	if dir == "" {
		return nil
	}
	switch err := os.Remove(p); {
	case err == nil:
		fmt.Fprintf(a.stderr, "awl: removed the tokens of mcp server %s (%s)\n", srv.Name, p)
	case errors.Is(err, os.ErrNotExist):
		fmt.Fprintf(a.stderr, "awl: no tokens stored for mcp server %s\n", srv.Name)
	default:
		return err
	}
	return nil
}

// redactedLines redacts each write, a whole line of a server's stderr
// (runner/mcp writes them one at a time), before passing it on.
type redactedLines struct {
	r *redact.Redactor
	w io.Writer
}

func (l redactedLines) Write(p []byte) (int, error) {
	if _, err := io.WriteString(l.w, l.r.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
