// Package mcp offers the tools of MCP servers (configured with --mcp-config)
// as awl tools named mcp__<server>__<tool>. It starts the servers in
// parallel before the first model request, over stdio or streamable HTTP,
// restarts a server that dies mid-run once, cancels calls that run past
// their timeout, and turns MCP results (text, images, structured content,
// resource links) into tool results.
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/awlrun/awl/runner/mcp/jsonrpc"
	"github.com/awlrun/awl/runner/mcp/oauth"
	"github.com/awlrun/awl/runner/tool"
)

// Defaults for Options.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultCallTimeout = 2 * time.Minute
)

// httpRetries is how often an HTTP server's interrupted response stream is
// reconnected without progress before the server counts as stopped.
const httpRetries = 2

// Options are what servers start with.
type Options struct {
	// Timeout bounds each server's start: from launch until its tools are
	// listed. 0 means DefaultTimeout.
	Timeout time.Duration
	// CallTimeout bounds one tool call. 0 means DefaultCallTimeout.
	CallTimeout time.Duration
	// Environ is the environment of stdio servers before their config's
	// env entries are added: the tool environment, provider keys removed.
	Environ []string
	// Dir is the working directory of stdio servers without a cwd.
	Dir string
	// Confine, when set, is the run's sandbox: stdio servers start
	// confined by it, or by ConfineNetwork when their config says
	// "sandbox": "network". Neither confines a server with "sandbox":
	// "off".
	Confine, ConfineNetwork tool.Confiner
	// Stderr receives the servers' stderr, each line prefixed with
	// "mcp <name>: ", and awl's warnings about them. nil discards both.
	Stderr io.Writer
	// HTTPClient reaches HTTP servers; nil means a default client.
	HTTPClient *http.Client
	// Version is awl's version, sent as the client version.
	Version string
	// TokenDir holds the OAuth tokens of HTTP servers (awl mcp login);
	// "" keeps none.
	TokenDir string
	// Login, when set, lets the OAuth authorization-code flow run (awl mcp
	// login, or awl run with $BROWSER set); nil means a headless run.
	Login *oauth.Login
	// Secret, when set, is told each token and client secret a server's
	// OAuth flow comes to hold (loaded from its file, obtained, refreshed),
	// and at start the credentials its configuration gives (header values,
	// the OAuth client secret, private key and ID token), with the
	// server's name: the run's redactor takes them up, so that a
	// tool that prints the token file, say, does not bring them into the
	// session.
	Secret func(server string, values ...string)
}

// Status is how a server's start went.
type Status struct {
	Name      string
	Transport string // "stdio" or "http"
	// Err is why the server is not available; nil when it started.
	Err error
	// Tools are the awl names of the server's tools, in the server's order.
	Tools []string
	// Instructions are the server's instructions to the model, if any.
	Instructions string
	// Duration is the time from launch until its tools were listed (or
	// the start failed).
	Duration time.Duration
}

// Manager holds the running servers of one run. Its methods are safe for
// concurrent use.
type Manager struct {
	opts    Options
	servers []*server
	stderr  *lockedWriter
	// stopping counts connections being closed in the background; Close
	// waits for them.
	stopping sync.WaitGroup
	// serial is held by a call to a tool that is not read-only: such
	// calls never overlap, whatever the caller's scheduling.
	serial sync.Mutex
}

// Start starts every server in parallel and waits until each has listed its
// tools, failed, or run out of Options.Timeout. A server that fails is
// reported in its Status (and with a warning on Options.Stderr); the others
// go on. ctx bounds the start only; Close stops the servers.
func Start(ctx context.Context, servers []Server, o Options) *Manager {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	m := &Manager{opts: o, stderr: &lockedWriter{w: o.Stderr}}
	servers = slices.Clone(servers)
	sortByName(servers)
	var wg sync.WaitGroup
	for _, cfg := range servers {
		s := &server{cfg: cfg, m: m}
		m.servers = append(m.servers, s)
		if o.Secret != nil {
			if vs := configSecrets(cfg); len(vs) > 0 {
				o.Secret(cfg.Name, vs...)
			}
		}
		wg.Go(func() { s.start(ctx) })
	}
	wg.Wait()
	for _, s := range m.servers {
		if s.status.Err != nil {
			m.warnf("mcp server %s failed to start: %v; going on without it", s.cfg.Name, s.status.Err)
		}
	}
	return m
}

// Status returns each server's start, sorted by name.
func (m *Manager) Status() []Status {
	out := make([]Status, len(m.servers))
	for i, s := range m.servers {
		out[i] = s.status
	}
	return out
}

// Failed returns the statuses of the servers that did not start.
func (m *Manager) Failed() []Status {
	var out []Status
	for _, st := range m.Status() {
		if st.Err != nil {
			out = append(out, st)
		}
	}
	return out
}

// Tools returns the tools of every server that started, server by server
// in name order, each server's in its own order.
func (m *Manager) Tools() []tool.Tool {
	var out []tool.Tool
	for _, s := range m.servers {
		for _, t := range s.tools {
			out = append(out, t)
		}
	}
	return out
}

// Close stops every server and waits for them to exit.
func (m *Manager) Close() {
	if m == nil {
		return
	}
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Go(s.close)
	}
	wg.Wait()
	m.stopping.Wait()
}

func (m *Manager) warnf(format string, args ...any) {
	fmt.Fprintf(m.stderr, "awl: "+format+"\n", args...)
}

// server is one configured server and its current connection.
type server struct {
	cfg    Server
	m      *Manager
	status Status
	tools  []*Tool

	// calls are the tool calls running now, for elicitation requests.
	calls activeCalls

	// oauth is the server's OAuth handler, made at its first connect
	// (nil when it has none).
	oauthMu   sync.Mutex
	oauth     oauth.Handler
	oauthDone bool
	// lastFail is the server's last failed HTTP response.
	failMu   sync.Mutex
	lastFail httpFailure
	// tokens are OAuth token values, kept out of every text like secrets.
	secretMu sync.Mutex
	tokens   []string

	mu        sync.Mutex
	conn      *conn // nil once the server is gone for good
	restarted bool  // the one restart has been used
	gone      error // why conn is nil
}

// conn is one running instance of a server.
type conn struct {
	cl   *jsonrpc.Client
	proc *proc         // stdio only
	done chan struct{} // closed when the session ends
}

func (s *server) start(ctx context.Context) {
	begin := time.Now()
	s.status = Status{Name: s.cfg.Name, Transport: s.cfg.Transport()}
	c, res, list, err := s.connect(ctx)
	s.status.Duration = time.Since(begin)
	if err != nil {
		s.status.Err = err
		return
	}
	s.conn = c
	s.status.Instructions = strings.TrimSpace(res.Instructions)
	seen := map[string]bool{}
	for _, t := range list {
		if t.Invalid != "" {
			s.m.warnf("mcp server %s: tool %q is not offered: %s", s.cfg.Name, t.Name, t.Invalid)
			continue
		}
		name := toolName(s.cfg.Name, t.Name)
		if seen[name] {
			// Another tool of the server maps to the same name
			// (files.read/v2 and files_read_v2): this one gets a hash
			// of its own name, so the model can call both.
			name = hashedToolName(s.cfg.Name, t.Name)
			if seen[name] {
				s.m.warnf("mcp server %s: tool %q is listed twice; the second is skipped", s.cfg.Name, t.Name)
				continue
			}
		}
		seen[name] = true
		s.tools = append(s.tools, newTool(s, name, t))
		s.status.Tools = append(s.status.Tools, name)
	}
}

// connect launches or reaches the server, initializes the session and lists
// the tools, all within Options.Timeout.
func (s *server) connect(ctx context.Context) (*conn, *jsonrpc.InitializeResult, []jsonrpc.Tool, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, s.m.opts.Timeout, fmt.Errorf("no tool list within %s (--mcp-timeout)", s.m.opts.Timeout))
	defer cancel()
	c := &conn{done: make(chan struct{})}
	var t jsonrpc.Transport
	if s.cfg.URL != "" {
		auth, err := s.authorizer()
		if err != nil {
			return nil, nil, nil, err
		}
		// A server may end a response stream before the result
		// (protocol 2025-11-25): the client resumes it with GET and
		// Last-Event-ID after the stream's retry delay. A server that is
		// gone is given up on after httpRetries attempts, so that a dead
		// server costs a call a few seconds, not a minute.
		t = jsonrpc.NewHTTP(s.cfg.URL, s.httpClient(), auth, httpRetries)
	} else {
		p, err := s.startProc()
		if err != nil {
			return nil, nil, nil, errors.New(s.redact(err.Error()))
		}
		c.proc = p
		t = jsonrpc.NewStdio(p.stdout, p.stdin)
	}
	fail := func(err error) (*conn, *jsonrpc.InitializeResult, []jsonrpc.Tool, error) {
		if cause := context.Cause(ctx); ctx.Err() != nil && cause != nil {
			err = cause
		} else if c.proc != nil {
			if why := c.proc.exitedEarly(); why != "" {
				err = errors.New(why)
			}
		}
		s.m.stopping.Go(c.close)
		msg := s.redact(err.Error())
		if hint := s.authHint(err); hint != "" {
			msg += "; " + hint
		}
		return nil, nil, nil, errors.New(msg)
	}
	c.cl = jsonrpc.NewClient(t, s.serve)
	go func() {
		c.cl.Wait()
		close(c.done)
	}()
	init, err := c.cl.Initialize(ctx, s.m.opts.Version, s.capabilities())
	if err != nil {
		return fail(err)
	}
	list, err := c.cl.Tools(ctx)
	if err != nil {
		return fail(fmt.Errorf("list tools: %w", err))
	}
	return c, init, list, nil
}

// authorizer returns the server's OAuth handler, made at the first
// connect; nil when its config sends its own Authorization header.
func (s *server) authorizer() (jsonrpc.Authorizer, error) {
	s.oauthMu.Lock()
	defer s.oauthMu.Unlock()
	if !s.oauthDone {
		s.oauthDone = true
		for k := range s.cfg.Headers {
			if strings.EqualFold(k, "Authorization") {
				return nil, nil
			}
		}
		h, err := oauth.New(s.cfg.OAuth, &oauth.Env{
			Name: s.cfg.Name, File: s.cfg.File, URL: s.cfg.URL, LoginCommand: s.cfg.LoginCommand(),
			HTTPClient: s.m.opts.HTTPClient, TokenDir: s.m.opts.TokenDir, Login: s.m.opts.Login,
			Secret: s.addSecret, Redact: s.redact, Warnf: s.m.warnf,
		})
		if err != nil {
			return nil, err
		}
		s.oauth = h
	}
	if s.oauth == nil {
		// A nil *Handler in the interface would not be nil to the
		// transport.
		return nil, nil
	}
	return s.oauth, nil
}

// addSecret keeps token values out of every error and message.
func (s *server) addSecret(vs ...string) {
	s.secretMu.Lock()
	defer s.secretMu.Unlock()
	var added []string
	for _, v := range vs {
		if v != "" && !slices.Contains(s.tokens, v) {
			s.tokens = append(s.tokens, v)
			added = append(added, v)
		}
	}
	if f := s.m.opts.Secret; f != nil && len(added) > 0 {
		f(s.cfg.Name, added...)
	}
}

// serve answers a request of the server's: ping, roots/list (when the
// config declares roots), elicitation/create; anything else is a method
// awl does not offer.
func (s *server) serve(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "ping":
		return struct{}{}, nil
	case "roots/list":
		if len(s.cfg.Roots) > 0 {
			return map[string]any{"roots": s.roots()}, nil
		}
	case "elicitation/create":
		return s.elicit(ctx, params)
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "awl does not offer " + method}
}

type root struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

// roots are the directories the config declares, as file:// URIs.
func (s *server) roots() []root {
	out := []root{}
	for _, dir := range s.cfg.Roots {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(s.m.opts.Dir, dir)
		}
		out = append(out, root{URI: fileURI(filepath.Clean(dir)), Name: filepath.Base(dir)})
	}
	return out
}

// authHint says what to do about an HTTP server that refused awl's
// authorization; "" for other errors and for errors that say it already.
func (s *server) authHint(err error) string {
	if s.cfg.URL == "" || errors.Is(err, oauth.ErrLoginNeeded) {
		return ""
	}
	t := err.Error()
	if !strings.Contains(t, "Unauthorized") && !strings.Contains(t, "Forbidden") && !strings.Contains(t, "protected resource metadata") && !strings.Contains(t, "authorization server metadata") {
		return ""
	}
	for k := range s.cfg.Headers {
		if strings.EqualFold(k, "Authorization") {
			return "the server refused the configured Authorization header; if it wants OAuth, drop the header and configure client credentials or run `" + s.cfg.LoginCommand() + "` (docs/mcp.md, OAuth)"
		}
	}
	return "the server wants authorization: configure OAuth client credentials, or run `" + s.cfg.LoginCommand() + "` (docs/mcp.md, OAuth)"
}

// capabilities are what awl declares: form elicitation (answered headlessly,
// see elicit), and roots only when the server's config asks for them. A
// server that honours roots, as server-filesystem does, replaces the
// directories its configuration names with the client's roots, so
// declaring the workspace to every server silently moved one pointed at
// another directory onto the workspace (TestFilesystemServer).
func (s *server) capabilities() map[string]any {
	caps := map[string]any{"elicitation": map[string]any{"form": struct{}{}}}
	if len(s.cfg.Roots) > 0 {
		caps["roots"] = struct{}{}
	}
	return caps
}

// fileURI is the file:// URI of an absolute directory.
func fileURI(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}

// close ends the connection and, for stdio, the process and its group.
func (c *conn) close() {
	if c == nil {
		return
	}
	if c.cl != nil {
		c.cl.Close()
	}
	if c.proc != nil {
		c.proc.stop()
	}
}

func (s *server) close() {
	s.oauthMu.Lock()
	if s.oauth != nil {
		s.oauth.Close()
	}
	s.oauthMu.Unlock()
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	if s.gone == nil {
		s.gone = errors.New("awl is stopping")
	}
	s.mu.Unlock()
	c.close()
}

// current returns the live connection, or why there is none.
func (s *server) current() (*conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil, s.gone
	}
	return s.conn, nil
}

// lost handles the death of c, seen by a call: the first time, the server
// is restarted (within Options.Timeout); after that it stays gone. It
// returns what to tell the model.
func (s *server) lost(c *conn, cause string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != c {
		// Another call saw it first and has dealt with it.
		if s.conn != nil {
			return "the server was restarted; the call may be retried"
		}
		return "the server is not available any more"
	}
	s.conn = nil
	s.m.stopping.Go(c.close)
	if s.restarted {
		s.gone = fmt.Errorf("it stopped again after its one restart")
		s.m.warnf("mcp server %s stopped again (%s); its tools are unavailable for the rest of the run", s.cfg.Name, cause)
		return "the server stopped again after its one restart; its tools are not available any more"
	}
	s.restarted = true
	s.m.warnf("mcp server %s stopped during a call (%s); restarting it", s.cfg.Name, cause)
	nc, _, _, err := s.connect(context.Background())
	if err != nil {
		s.gone = fmt.Errorf("it stopped, and its restart failed: %v", err)
		s.m.warnf("mcp server %s could not be restarted: %v", s.cfg.Name, err)
		return "the server could not be restarted; its tools are not available any more"
	}
	s.conn = nc
	return "the server was restarted; the call may be retried"
}

// renew replaces c, whose HTTP session the server no longer knows, with a
// new session, which does not spend the server's one restart: the server
// is there, it only forgot. Nil when that fails; the call then finds the
// connection dead, and lost restarts the server or gives up on it.
func (s *server) renew(c *conn) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != c {
		return s.conn // another call renewed it, or it is gone (nil)
	}
	nc, _, _, err := s.connect(context.Background())
	if err != nil {
		return nil
	}
	s.m.stopping.Go(c.close)
	s.conn = nc
	s.m.warnf("mcp server %s no longer knew awl's session; a new one was started", s.cfg.Name)
	return nc
}

// httpClient returns the client for an HTTP server: the configured
// headers on every request.
func (s *server) httpClient() *http.Client {
	base := s.m.opts.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c := *base
	c.Transport = headerTransport{rt: rt, headers: s.cfg.Headers, s: s}
	return &c
}

type headerTransport struct {
	rt      http.RoundTripper
	headers map[string]string
	s       *server
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	resp, err := h.rt.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost && failedStatus(resp.StatusCode) {
		// The SDK tells a call only "rejected by transport": keep the
		// status and the start of the body for the call's result.
		head := make([]byte, 512)
		n, _ := io.ReadFull(resp.Body, head)
		resp.Body = readCloser{io.MultiReader(bytes.NewReader(head[:n]), resp.Body), resp.Body}
		h.s.noteHTTPFailure(resp.StatusCode, string(head[:n]))
	}
	return resp, err
}

// failedStatus is an HTTP status that fails a request for a reason other
// than authorization or a lost session, which the SDK handles itself.
func failedStatus(code int) bool {
	return code >= 400 && code != http.StatusUnauthorized && code != http.StatusForbidden && code != http.StatusNotFound && code != http.StatusMethodNotAllowed
}

type readCloser struct {
	io.Reader
	io.Closer
}

// httpFailure is the last failed HTTP response of a server.
type httpFailure struct {
	seq    int
	status int
	body   string
}

func (s *server) noteHTTPFailure(status int, body string) {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	s.lastFail = httpFailure{seq: s.lastFail.seq + 1, status: status, body: body}
}

// httpFailureSeq numbers the failed responses so far.
func (s *server) httpFailureSeq() int {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	return s.lastFail.seq
}

// httpFailureSince is the last failed response after seq, as a phrase for
// the model ("HTTP 500 (Internal Server Error): …"), or "".
func (s *server) httpFailureSince(seq int) string {
	s.failMu.Lock()
	f := s.lastFail
	s.failMu.Unlock()
	if f.seq <= seq {
		return ""
	}
	out := fmt.Sprintf("HTTP %d (%s)", f.status, http.StatusText(f.status))
	if b := strings.TrimSpace(sanitize(f.body)); b != "" {
		out += ": " + cutBytes(s.redact(b), 300)
	}
	return out
}

// redact removes the server's secrets (header values, expanded env
// values) from text.
//
// The longest values go first: a token that holds a secret (or another
// token) would otherwise lose only that part, and the rest of it show.
func (s *server) redact(text string) string {
	s.secretMu.Lock()
	vs := slices.Concat(s.cfg.secrets, s.tokens)
	s.secretMu.Unlock()
	slices.SortFunc(vs, func(a, b string) int { return len(b) - len(a) })
	for _, v := range vs {
		if len(v) >= 4 {
			text = strings.ReplaceAll(text, v, "[redacted]")
		}
	}
	return text
}

// configSecrets are the credentials cfg gives awl to reach the server:
// its headers' values, and the OAuth client secret, private key, and the
// identity provider's client secret and ID token; and what it gives a
// stdio server in env, every value but those clearly no secret
// (envSecret), and the values of the variables its args expand.
func configSecrets(cfg Server) []string {
	var vs []string
	for _, v := range cfg.Headers {
		vs = append(vs, v)
	}
	for k, v := range cfg.Env {
		if envSecret(k, v) {
			vs = append(vs, v)
		}
	}
	for _, v := range cfg.argVars {
		if envSecret("", v) {
			vs = append(vs, v)
		}
	}
	if o := cfg.OAuth; o != nil {
		vs = append(vs, o.ClientSecret, o.PrivateKey)
		if o.IdP != nil {
			vs = append(vs, o.IdP.ClientSecret, o.IdP.IDToken)
		}
	}
	return slices.DeleteFunc(vs, func(v string) bool { return strings.TrimSpace(v) == "" })
}

// plainEnv reports the variables that name where things are or how to
// show them, never a credential: their values are no secret. (A switch: a
// package-level map is built by an initialiser at every start of awl.)
func plainEnv(k string) bool {
	switch k {
	case "PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "TERM", "LANG", "LANGUAGE", "TZ",
		"TMPDIR", "TMP", "TEMP", "NODE_PATH", "NODE_ENV", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV",
		"GOPATH", "GOROOT", "JAVA_HOME", "LD_LIBRARY_PATH":
		return true
	}
	return false
}

// envSecret reports whether the value v an MCP server's configuration
// gives it in the variable k is a secret for the run's redactor. Every
// value is, literal or from a ${VAR}, but those clearly no secret: the
// values of plainEnv's variables and of the locale's (LC_*) and XDG base
// directories' (XDG_*), and a value that is the absolute path of a file
// or directory that exists. Shorter values than the redactor takes (8
// bytes) it leaves anyway.
func envSecret(k, v string) bool {
	if strings.TrimSpace(v) == "" || plainEnv(k) || strings.HasPrefix(k, "LC_") || strings.HasPrefix(k, "XDG_") {
		return false
	}
	if filepath.IsAbs(v) {
		if _, err := os.Lstat(v); err == nil {
			return false
		}
	}
	return true
}
