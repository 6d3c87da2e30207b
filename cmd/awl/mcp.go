package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/awlrun/awl/cmd/awl/config"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/mcp"
	"github.com/awlrun/awl/runner/mcp/oauth"
	"github.com/awlrun/awl/runner/redact"
	"github.com/awlrun/awl/runner/sandbox"
)

// loadMCP reads the --mcp-config files and the [mcp-servers.NAME] tables
// of the trusted configuration files. A .mcp.json in the working
// directory is never read on its own: a repository under test must not
// start processes unless the caller asks.
func (c *runCmd) loadMCP(a *app) ([]mcp.Server, error) {
	var servers []mcp.Server
	if len(c.MCPConfig) > 0 {
		var err error
		servers, err = mcp.LoadConfig(c.MCPConfig, a.getenv)
		var ce *mcp.ConfigError
		if errors.As(err, &ce) {
			return nil, runner.Usagef("--mcp-config " + ce.Msg)
		}
		if err != nil {
			return nil, err
		}
	}
	if c.configured == nil {
		return servers, nil
	}
	for _, cs := range c.configured.res.Servers {
		s, err := configServer(cs, a.getenv)
		if err != nil {
			return nil, err
		}
		if i := slices.IndexFunc(servers, func(o mcp.Server) bool { return o.Name == s.Name }); i >= 0 {
			return nil, runner.Usagef(fmt.Sprintf("%s:%d: mcp-servers.%s: server %q is also defined in %s", cs.File, cs.Line, cs.Name, cs.Name, servers[i].File))
		}
		servers = append(servers, s)
	}
	return servers, nil
}

// configServer is a configuration file's [mcp-servers.NAME] table as an
// MCP server, read by the MCP loader as an .mcp.json entry is; its errors
// name the table's place in the file.
func configServer(cs config.Server, getenv func(string) string) (mcp.Server, error) {
	doc, err := json.Marshal(map[string]any{"mcpServers": map[string]any{cs.Name: cs.Fields}})
	if err != nil {
		return mcp.Server{}, runner.Usagef(fmt.Sprintf("%s:%d: mcp-servers.%s: %v", cs.File, cs.Line, cs.Name, err))
	}
	got, err := mcp.ParseConfig(cs.File, doc, getenv)
	var ce *mcp.ConfigError
	if errors.As(err, &ce) {
		reason := ce.Msg
		if _, after, ok := strings.Cut(reason, fmt.Sprintf("server %q: ", cs.Name)); ok {
			reason = after
		}
		return mcp.Server{}, runner.Usagef(fmt.Sprintf("%s:%d: mcp-servers.%s: %s", cs.File, cs.Line, cs.Name, reason))
	}
	if err != nil || len(got) != 1 {
		return mcp.Server{}, runner.Usagef(fmt.Sprintf("%s:%d: mcp-servers.%s: %v", cs.File, cs.Line, cs.Name, err))
	}
	// --config FILE reads that file alone, trusted: the one login command
	// that finds the server whichever file it is in.
	got[0].Login = "awl mcp login " + cs.Name + " --config " + cs.File
	return got[0], nil
}

// startMCP starts the servers whose tools the tool policy may offer, and
// with --mcp-strict turns a failed start into exit 4.
func (c *runCmd) startMCP(ctx context.Context, a *app, cwd string, servers []mcp.Server, sb *sandbox.Sandbox) (*mcp.Manager, error) {
	var wanted []mcp.Server
	for _, s := range servers {
		if c.policy.MayOffer(mcp.Prefix + s.Name + "__") {
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
		// Tokens a server's flow loads or obtains join every redactor:
		// the session's, the trace's, the servers' stderr.
		Secret: func(_ string, values ...string) { a.secrets.add(mcpTokenName, values...) },
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
		// Servers start in a Landlock domain apart from the tools': no
		// tool reads a server's environment or signals it.
		opts.Confine, opts.ConfineNetwork = sb.ForServers(), netsb.ForServers()
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
	Serve  mcpServeCmd  `cmd:""`
}

// mcpServerArgs name the server to log in to or out of: one of the
// servers a run here would have, from --mcp-config and from the
// [mcp-servers.NAME] tables of the configuration files, chosen with the
// flags `awl run` takes for them.
type mcpServerArgs struct {
	Server       string   `arg:""`
	MCPConfig    []string `name:"mcp-config" sep:"none" placeholder:"FILE"`
	Dir          string   `name:"cd" short:"C" placeholder:"DIR"`
	Config       string   `name:"config" placeholder:"FILE"`
	NoConfig     bool     `name:"no-config"`
	Profile      string   `name:"profile" placeholder:"NAME"`
	TrustProject bool     `name:"trust-project"`
}

// find returns the named HTTP server of the set `awl run` would start
// here with the same flags: --mcp-config (or a file's mcp-config key) and
// the configuration files' [mcp-servers.NAME] tables.
func (c *mcpServerArgs) find(a *app) (mcp.Server, error) {
	rc := &runCmd{Dir: c.Dir, Config: c.Config, NoConfig: c.NoConfig, Profile: c.Profile, TrustProject: c.TrustProject, MCPConfig: c.MCPConfig}
	if len(c.MCPConfig) > 0 {
		rc.given.add("mcp-config")
	}
	if c.Dir != "" {
		rc.given.add("cd")
	}
	if err := rc.configure(a); err != nil {
		return mcp.Server{}, err
	}
	servers, err := rc.loadMCP(a)
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
	where := slices.Clone(rc.MCPConfig)
	for _, f := range rc.configured.files {
		where = append(where, f.Path)
	}
	if len(where) == 0 {
		return mcp.Server{}, runner.Usagef(fmt.Sprintf("no mcp server %q: no --mcp-config given and no configuration file read (awl config path says where they are looked for)", c.Server))
	}
	return mcp.Server{}, runner.Usagef(fmt.Sprintf("no mcp server %q in %s", c.Server, strings.Join(where, ", ")))
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
