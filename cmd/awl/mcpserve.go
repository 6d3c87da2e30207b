package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/awlrun/awl/cmd/awl/config"
	"github.com/awlrun/awl/cmd/awl/mcpserve"
	"github.com/awlrun/awl/internal/oneline"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/policy"
	"github.com/awlrun/awl/session"
)

// mcpServeCmd is `awl mcp serve [RUN FLAGS]`: awl as an MCP server over
// stdio. The run flags it is given, and the configuration they and the
// directory name, are every call's ceiling: a caller's options only
// narrow them (serveOptions). Each call is an `awl run` process of its
// own (a run changes directory, scrubs its environment and confines its
// tools process-wide), so calls are isolated and run side by side.
type mcpServeCmd struct {
	RunFlags []string `arg:"" optional:"" name:"run-flags" passthrough:""`
}

// serveRefused are the run flags a server may not be started with: they
// name one run's prompt, session or output, which each call sets.
var serveRefused = []string{
	"prompt", "prompt-file", "stdin", "no-stdin", "input", "input-strict", "output",
	"resume", "continue", "fork", "session-id", "replay", "replay-lenient", "image",
	"output-last-message",
}

// server is what every call of one `awl mcp serve` shares.
type server struct {
	a *app
	// exe is awl itself; flags the server's run flags, as given, and
	// ceiling those flags with the configuration resolved over them.
	exe     string
	flags   []string
	ceiling *runCmd
	// dir is the session directory every call's run uses.
	dir string
	// watch sends the runs still going SIGTERM if the server dies.
	watch runWatch
}

func (c *mcpServeCmd) Run(a *app, store *session.Store) error {
	if slices.Contains(c.RunFlags, "--help") || slices.Contains(c.RunFlags, "-h") {
		fmt.Fprint(a.stdout, serveUsage)
		return nil
	}
	flags, addr, err := httpFlag(c.RunFlags)
	if err != nil {
		return err
	}
	ceiling, err := serveCeiling(a, flags)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	srv := &server{a: a, exe: exe, flags: flags, ceiling: ceiling, dir: serveSessionDir(a, store, ceiling)}
	ms := &mcpserve.Server{
		Name: "awl", Version: currentStamp().Version,
		Instructions: serveInstructions,
		Tools:        srv.tools(),
		MaxMessage:   mcpServeMaxMessage,
		Log:          a.stderr,
	}
	if addr != "" {
		return serveHTTP(a, ms, addr)
	}
	ctx, stop := context.WithCancelCause(a.ctx)
	defer stop(nil)
	watchReader(ctx, a.stdout, stop)
	return ms.Serve(ctx, a.stdin, a.stdout)
}

// serveSessionDir is the session directory of every call's run, as `awl
// run` would choose it: --session-dir before `mcp serve`, else the
// configuration's session-dir (or AWL_SESSION_DIR), else the default.
func serveSessionDir(a *app, store *session.Store, ceiling *runCmd) string {
	def, err := session.DefaultDir(a.getenv)
	if err == nil {
		def, err = filepath.Abs(def)
	}
	if err != nil || def != store.Dir {
		return store.Dir // the flag's
	}
	return ceiling.configured.store(store).Dir
}

// httpFlag takes --http ADDR out of the server's flags.
func httpFlag(flags []string) (rest []string, addr string, err error) {
	for i := 0; i < len(flags); i++ {
		switch f := flags[i]; {
		case f == "--http" && i+1 < len(flags):
			addr = flags[i+1]
			i++
		case strings.HasPrefix(f, "--http="):
			addr = strings.TrimPrefix(f, "--http=")
		case f == "--http":
			return nil, "", runner.Usagef("mcp serve: --http needs an address such as 127.0.0.1:8765")
		default:
			rest = append(rest, f)
			continue
		}
		if addr == "" {
			return nil, "", runner.Usagef("mcp serve: --http needs an address such as 127.0.0.1:8765")
		}
	}
	return rest, addr, nil
}

// mcpTokenVar holds the bearer token of `awl mcp serve --http`; without
// it awl makes one.
const mcpTokenVar = "AWL_MCP_TOKEN"

// serveHTTP serves ms over streamable HTTP on addr, a loopback address,
// until a signal; every request must carry the bearer token, so that no
// other user of the machine spends the server's key.
func serveHTTP(a *app, ms *mcpserve.Server, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return runner.Usagef(fmt.Sprintf("mcp serve: --http %q: want HOST:PORT, such as 127.0.0.1:8765", addr))
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return runner.Usagef(fmt.Sprintf("mcp serve: --http %q: only a loopback address (127.0.0.1, ::1, localhost): the server spends its key for whoever holds the token", addr))
	}
	token, from := a.getenv(mcpTokenVar), mcpTokenVar
	if token == "" {
		var b [32]byte
		rand.Read(b[:])
		token, from = hex.EncodeToString(b[:]), ""
	} else if len(token) < 32 {
		return runner.Usagef(mcpTokenVar + ": a bearer token of at least 32 characters, or unset for one awl makes")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return runner.Usagef("mcp serve: --http: " + err.Error())
	}
	h := ms.HTTPHandler(a.ctx, token)
	url := "http://" + ln.Addr().String() + "/mcp"
	if from == "" {
		fmt.Fprintf(a.stderr, "awl: mcp serve: streamable HTTP at %s, bearer token %s\n", url, token)
	} else {
		fmt.Fprintf(a.stderr, "awl: mcp serve: streamable HTTP at %s, bearer token from %s\n", url, from)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mcpserve.Serve1(ctx, ln, h) }()
	select {
	case <-a.ctx.Done():
	case err := <-done:
		h.Close()
		cancel()
		return err
	}
	// Every call's run is interrupted and ends its session; then the
	// connections close.
	h.Close()
	cancel()
	<-done
	return nil
}

// childEnviron is the environment of a call's run: the server's, without
// the bearer token.
func childEnviron() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, mcpTokenVar+"=") })
}

// mcpServeMaxMessage is the longest request read: a prompt of a little
// less than that fits.
const mcpServeMaxMessage = 64 << 20

const serveUsage = `Usage: awl mcp serve [RUN FLAGS]

Serve awl over MCP on stdin and stdout (JSON-RPC, one message a line),
or with --http ADDR over streamable HTTP on a loopback address, every
request carrying the bearer token of $AWL_MCP_TOKEN or one awl prints.
The tools run, resume and fork each start an ` + "`awl run`" + ` with
RUN FLAGS (any flag of awl run but the prompt, session and output ones),
the configuration files applying as they do to awl run; a caller's
options only narrow them. See docs/mcp.md.
`

const serveInstructions = "awl runs an LLM agent to completion on a prompt, in the server's working directory, with the server's tools, sandbox and budgets. " +
	"Call run with a prompt; the result gives the final answer, the session id, the exit code and the usage. Call resume with that session id to go on with the conversation, fork to branch it; sessions lists the sessions."

// parseRunFlags parses flags as `awl run` would (the fast parser, else
// kong's), with the record of those given; cmd names the command in an
// error.
func parseRunFlags(a *app, cmd string, flags []string) (*runCmd, error) {
	args := append([]string{"run"}, flags...)
	if _, fast, ok := fastRun(args); ok {
		return &fast, nil
	}
	var g runCLI
	parser, err := newParser(&g, a.stdout, a.stderr)
	if err != nil {
		return nil, err
	}
	kctx, err := parse(parser, args)
	if err != nil {
		return nil, runner.Usagef(cmd + ": " + err.Error())
	}
	rc := g.Run
	rc.given = givenOf(kctx)
	return &rc, nil
}

// serveCeiling parses the server's run flags as `awl run` would, refuses
// the ones a call sets, and resolves the configuration over them.
func serveCeiling(a *app, flags []string) (*runCmd, error) {
	rc, err := parseRunFlags(a, "mcp serve", flags)
	if err != nil {
		return nil, err
	}
	if len(rc.Args) > 0 {
		return nil, runner.Usagef(fmt.Sprintf("mcp serve: %q: a server takes run flags only; each call brings its prompt", rc.Args[0]))
	}
	for _, name := range serveRefused {
		if rc.given.has(name) {
			return nil, runner.Usagef(fmt.Sprintf("mcp serve: --%s is each call's to set, not the server's", name))
		}
	}
	if err := rc.configure(a); err != nil {
		return nil, err
	}
	return rc, nil
}

// serveOptions are what a caller may set of a run: each narrows the
// server's ceiling, never loosens it.
type serveOptions struct {
	Prompt         string          `json:"prompt"`
	Session        string          `json:"session"`
	Model          string          `json:"model"`
	Tools          []string        `json:"tools"`
	DenyTools      []string        `json:"deny_tools"`
	MaxTurns       int64           `json:"max_turns"`
	MaxCostUSD     float64         `json:"max_cost_usd"`
	MaxTotalTokens int64           `json:"max_total_tokens"`
	Timeout        string          `json:"timeout"`
	Sandbox        string          `json:"sandbox"`
	OutputSchema   json.RawMessage `json:"output_schema"`
}

// decodeOptions reads a call's arguments: unknown fields and wrong types
// are refused, as is an empty prompt.
func decodeOptions(args json.RawMessage, needSession bool) (serveOptions, error) {
	var o serveOptions
	if len(args) == 0 || string(args) == "null" {
		return o, errors.New("arguments: a prompt is required")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return o, fmt.Errorf("arguments: %v", err)
	}
	switch {
	case strings.TrimSpace(o.Prompt) == "":
		return o, errors.New("arguments: prompt must be a non-empty string")
	case needSession && strings.TrimSpace(o.Session) == "":
		return o, errors.New("arguments: session must name a session (its id, a prefix of it, or a name)")
	case !needSession && o.Session != "":
		return o, errors.New("arguments: session is resume's and fork's; run starts a new session")
	}
	return o, nil
}

// runFlags are the flags o adds to the server's: only those that narrow
// what the server's flags and configuration allow. replaced names the
// server's list flags they replace.
func (o serveOptions) runFlags(ceil *runCmd, schema config.Schema) (flags []string, replaced []string, err error) {
	has := func(set bool) config.Setting {
		if set {
			return config.Setting{Source: config.Source{Kind: "flag"}}
		}
		return config.Setting{}
	}
	limit := func(name string, v, below config.Value, set bool) {
		s := has(set)
		s.Value = below
		if nv, ok := config.NarrowValue(schema.Lookup(name), s, v); ok {
			flags = append(flags, "--"+name+"="+config.Format(nv))
		}
	}
	if o.Model != "" {
		flags = append(flags, "--model="+o.Model)
	}
	if o.MaxTurns < 0 || o.MaxCostUSD < 0 || o.MaxTotalTokens < 0 {
		return nil, nil, errors.New("arguments: a limit must be positive (0 or absent: the server's)")
	}
	if o.MaxTurns > 0 {
		limit("max-turns", o.MaxTurns, int64(ceil.MaxTurns), ceil.MaxTurns != 0)
	}
	if o.MaxCostUSD > 0 {
		limit("max-cost-usd", o.MaxCostUSD, ceil.MaxCostUSD, ceil.MaxCostUSD != 0)
	}
	if o.MaxTotalTokens > 0 {
		limit("max-total-tokens", o.MaxTotalTokens, ceil.MaxTotalTokens, ceil.MaxTotalTokens != 0)
	}
	if o.Timeout != "" {
		d, err := time.ParseDuration(o.Timeout)
		if err != nil || d <= 0 {
			return nil, nil, fmt.Errorf("arguments: timeout %q is not a positive duration such as 10m", o.Timeout)
		}
		limit("timeout", d, ceil.Timeout, ceil.Timeout != 0)
	}
	if o.Sandbox != "" {
		if !slices.Contains([]string{"off", "workspace-write", "read-only"}, o.Sandbox) {
			return nil, nil, fmt.Errorf("arguments: sandbox %q is not off, workspace-write or read-only", o.Sandbox)
		}
		s := has(ceil.Sandbox != "")
		s.Value = ceil.Sandbox
		if nv, ok := config.NarrowValue(schema.Lookup("sandbox"), s, o.Sandbox); ok {
			flags = append(flags, "--sandbox="+nv.(string))
		}
	}
	toolFlags, err := o.toolFlags(ceil, schema)
	if err != nil {
		return nil, nil, err
	}
	if len(toolFlags) > 0 && !ceil.NoTools {
		replaced = append(replaced, "tools")
	}
	return append(flags, toolFlags...), replaced, nil
}

// toolFlags are the caller's tool rules: its allow list intersected with
// the server's (none in common: no tools), its deny list added.
func (o serveOptions) toolFlags(ceil *runCmd, schema config.Schema) ([]string, error) {
	var flags []string
	for _, d := range o.DenyTools {
		if strings.TrimSpace(d) == "" {
			return nil, errors.New("arguments: deny_tools holds an empty rule")
		}
		flags = append(flags, "--deny-tools="+d)
	}
	if o.Tools == nil || ceil.NoTools {
		return flags, nil
	}
	var mine, below []string
	for _, t := range o.Tools {
		if strings.TrimSpace(t) == "" {
			return nil, errors.New("arguments: tools holds an empty rule (an empty list: no tools)")
		}
		mine = append(mine, policy.Split(t)...)
	}
	for _, t := range ceil.Tools {
		below = append(below, policy.Split(t)...)
	}
	s := config.Setting{Value: below}
	if len(below) > 0 {
		s.Source.Kind = "flag"
	}
	if mine == nil {
		mine = []string{}
	}
	nv, _ := config.NarrowValue(schema.Lookup("tools"), s, mine)
	both := nv.([]string)
	if len(both) == 0 {
		return append(flags, "--no-tools"), nil
	}
	for _, t := range both {
		flags = append(flags, "--tools="+t)
	}
	return flags, nil
}

// withoutFlags is flags with every --NAME (and its value) of names left out.
func withoutFlags(flags []string, names []string) []string {
	var out []string
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		drop := false
		for _, n := range names {
			if f == "--"+n {
				drop = true
				i++ // its value
			} else if strings.HasPrefix(f, "--"+n+"=") {
				drop = true
			}
		}
		if !drop {
			out = append(out, f)
		}
	}
	return out
}

// runTool is a tool that runs awl: a new session (mode ""), or a resume or
// fork of the session its arguments name.
func (s *server) runTool(name, mode, title, desc string) mcpserve.Tool {
	return mcpserve.Tool{
		Name: name, Title: title, Description: desc,
		InputSchema: runInputSchema(mode != ""), OutputSchema: json.RawMessage(runOutputSchema), Destructive: true,
		Call: func(ctx context.Context, args json.RawMessage, progress func(string)) mcpserve.Result {
			return s.call(ctx, args, mode, progress)
		},
	}
}

// tools are the server's tools.
func (s *server) tools() []mcpserve.Tool {
	return []mcpserve.Tool{
		s.runTool("run", "", "Run awl on a prompt",
			"Run an LLM agent to completion on a prompt in a new session: the answer, the session id, the exit code and the usage come back. Progress notifications follow the run's steps."),
		s.runTool("resume", "resume", "Continue an awl session",
			"Continue a session (by the id a run returned, a unique prefix of it, or its name) with a new prompt, as `awl run --resume` does."),
		s.runTool("fork", "fork", "Fork an awl session",
			"Start a new session from an existing one (its id, a unique prefix, or its name) with a new prompt, as `awl run --fork` does; the session forked is left as it is."),
		{
			Name: "sessions", Title: "List awl's sessions",
			Description: "List the sessions of the server's directory (or of every directory with all), oldest first, as `awl sessions --json` does: each one's id, first prompt, final answer, status, cost and last run.",
			InputSchema: json.RawMessage(sessionsInputSchema), OutputSchema: json.RawMessage(`{"type":"object","properties":{"sessions":{"type":"array","items":{"type":"object"}}},"required":["sessions"]}`),
			ReadOnly: true,
			Call: func(ctx context.Context, args json.RawMessage, _ func(string)) mcpserve.Result {
				return s.sessions(ctx, args)
			},
		},
	}
}

const sessionsInputSchema = `{"type":"object","properties":{` +
	`"all":{"type":"boolean","description":"Every directory's sessions, not only the server's directory's."},` +
	`"limit":{"type":"integer","minimum":1,"description":"Keep the newest N (default 20)."},` +
	`"since":{"type":"string","description":"Keep those modified within this long (30d, 24h, 90m)."}` +
	`},"additionalProperties":false}`

// sessions lists the sessions as `awl sessions --json` does, in the
// directory the runs use.
func (s *server) sessions(ctx context.Context, args json.RawMessage) mcpserve.Result {
	var o struct {
		All   bool   `json:"all"`
		Limit int    `json:"limit"`
		Since string `json:"since"`
	}
	if len(args) > 0 && string(args) != "null" {
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil {
			return mcpserve.Result{Text: "arguments: " + err.Error(), IsError: true}
		}
	}
	if o.Limit < 0 {
		return mcpserve.Result{Text: "arguments: limit must be positive", IsError: true}
	}
	argv := []string{"--session-dir=" + s.dir, "sessions", "list", "--json", "--limit=" + strconv.Itoa(cmp.Or(o.Limit, 20))}
	if o.All {
		argv = append(argv, "--all")
	}
	if o.Since != "" {
		argv = append(argv, "--since="+o.Since)
	}
	cmd := exec.CommandContext(ctx, s.exe, argv...)
	cmd.Dir = s.ceiling.Dir
	cmd.Env = childEnviron()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return mcpserve.Result{Text: strings.TrimSpace("awl sessions: " + stderr.String()), IsError: true}
	}
	var list []json.RawMessage
	if err := json.Unmarshal(out, &list); err != nil {
		return mcpserve.Result{Text: "awl sessions: " + err.Error(), IsError: true}
	}
	if list == nil {
		list = []json.RawMessage{}
	}
	return mcpserve.Result{Text: string(bytes.TrimSpace(out)), Structured: map[string]any{"sessions": list}}
}

// runInputSchema is the input schema of run, or with a session, of resume
// and fork.
func runInputSchema(withSession bool) json.RawMessage {
	props := `"prompt":{"type":"string","minLength":1,"description":"What to ask."},`
	req := `["prompt"]`
	if withSession {
		props += `"session":{"type":"string","minLength":1,"description":"The session: its id (as run returned it), a unique prefix of it, or its name."},`
		req = `["session","prompt"]`
	}
	return json.RawMessage(`{"type":"object","properties":{` + props + runOptionProps + `},"required":` + req + `,"additionalProperties":false}`)
}

// runOptionProps are the options a caller may set; each only narrows what
// the server allows.
const runOptionProps = `"model":{"type":"string","minLength":1,"description":"The model (as awl run --model)."},` +
	`"tools":{"type":"array","items":{"type":"string","minLength":1},"description":"Tool rules to allow (as --tools), intersected with the server's; an empty list offers none."},` +
	`"deny_tools":{"type":"array","items":{"type":"string","minLength":1},"description":"Tool rules to deny (as --deny-tools), added to the server's."},` +
	`"max_turns":{"type":"integer","minimum":1,"description":"At most this many model requests (the server's limit, if smaller, stays)."},` +
	`"max_cost_usd":{"type":"number","exclusiveMinimum":0,"description":"A budget in US dollars (the server's, if smaller, stays)."},` +
	`"max_total_tokens":{"type":"integer","minimum":1,"description":"A token budget (the server's, if smaller, stays)."},` +
	`"timeout":{"type":"string","description":"A time limit such as 10m (the server's, if shorter, stays)."},` +
	`"sandbox":{"type":"string","enum":["off","workspace-write","read-only"],"description":"A sandbox mode; the stricter of it and the server's applies."},` +
	`"output_schema":{"type":"object","description":"A JSON Schema the final answer must validate against (as --output-schema); the value is in structuredContent.structured."}`

// runOutputSchema is the structured content of every call: the run's
// result event (docs/events.md), less its type and timestamp.
const runOutputSchema = `{"type":"object","properties":{` +
	`"session_id":{"type":"string"},"exit_code":{"type":"integer"},"reason":{"type":"string"},"text":{"type":"string"},` +
	`"turns":{"type":"integer"},"usage":{"type":"object"},"cost_usd":{"type":["number","null"]},"session_path":{"type":"string"},` +
	`"error":{"type":"string"},"duration_ms":{"type":"integer"}},"required":["session_id","exit_code","reason"]}`

// call runs one call as an `awl run` process: mode is "" for a new
// session, "resume" or "fork".
func (s *server) call(ctx context.Context, args json.RawMessage, mode string, progress func(string)) mcpserve.Result {
	o, err := decodeOptions(args, mode != "")
	if err != nil {
		return mcpserve.Result{Text: err.Error(), IsError: true}
	}
	flags, replaced, err := o.runFlags(s.ceiling, runSchema())
	if err != nil {
		return mcpserve.Result{Text: err.Error(), IsError: true}
	}
	if len(o.OutputSchema) > 0 {
		f, err := os.CreateTemp("", "awl-output-schema-*.json")
		if err != nil {
			return mcpserve.Result{Text: err.Error(), IsError: true}
		}
		defer os.Remove(f.Name())
		_, err = f.Write(o.OutputSchema)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return mcpserve.Result{Text: err.Error(), IsError: true}
		}
		flags = append(flags, "--output-schema="+f.Name())
	}
	argv := append([]string{"--session-dir=" + s.dir, "run"}, withoutFlags(s.flags, replaced)...)
	argv = append(argv, flags...)
	argv = append(argv, "--output=ndjson", "--stdin")
	if mode != "" {
		argv = append(argv, "--"+mode+"="+o.Session)
	}
	return s.runChild(ctx, argv, o.Prompt, progress)
}

// childWait is how long a run has to end its session after the SIGINT of
// a cancellation before it is killed.
const childWait = 10 * time.Second

// runChild starts awl with argv, hands it the prompt on stdin, turns its
// events into progress, and its result event into the call's result. A
// cancelled ctx interrupts it (SIGINT) as a signal would a run.
func (s *server) runChild(ctx context.Context, argv []string, prompt string, progress func(string)) mcpserve.Result {
	cmd := exec.CommandContext(ctx, s.exe, argv...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = childWait
	cmd.Stderr = s.a.stderr
	cmd.SysProcAttr = childAttr()
	cmd.Env = childEnviron()
	cmd.Stdin = strings.NewReader(prompt)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return mcpserve.Result{Text: err.Error(), IsError: true}
	}
	if err := cmd.Start(); err != nil {
		return mcpserve.Result{Text: "starting awl run: " + err.Error(), IsError: true}
	}
	s.watch.track(cmd.Process.Pid, true)
	var result map[string]any
	sessionID := ""
	br := bufio.NewReaderSize(out, 64<<10)
	for {
		line, err := readLine(br)
		if len(line) > 0 {
			if r, id := s.event(line, progress); r != nil {
				result = r
			} else if id != "" {
				sessionID = id
			}
		}
		if err != nil {
			break
		}
	}
	werr := cmd.Wait()
	s.watch.track(cmd.Process.Pid, false)
	if result == nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(werr, &ee) {
			code = ee.ExitCode()
		}
		return mcpserve.Result{
			Text:       fmt.Sprintf("awl run ended without a result (%v)", werr),
			Structured: map[string]any{"session_id": sessionID, "exit_code": code, "reason": "internal_error"},
			IsError:    true,
		}
	}
	return resultOf(result)
}

// readLine reads one line, whole.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// event reads one event of a call's run: a progress message for what
// a caller follows, the result event decoded, or the session's id.
func (s *server) event(line []byte, progress func(string)) (map[string]any, string) {
	var ev struct {
		Type      string          `json:"type"`
		SessionID string          `json:"session_id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		Attempt   int             `json:"attempt"`
		Error     string          `json:"error"`
		Entry     struct {
			Message struct {
				Role    string `json:"role"`
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			} `json:"message"`
		} `json:"entry"`
	}
	if json.Unmarshal(line, &ev) != nil {
		return nil, ""
	}
	switch ev.Type {
	case "result":
		var r map[string]any
		if json.Unmarshal(line, &r) != nil {
			return nil, ""
		}
		return r, ""
	case "session":
		progress("session " + ev.SessionID)
		return nil, ev.SessionID
	case "tool_start":
		progress(oneline.Cut(ev.Name+" "+string(ev.Input), 200))
	case "retry":
		progress(oneline.Cut("model request failed, retry "+strconv.Itoa(ev.Attempt)+": "+ev.Error, 200))
	case "compaction":
		progress("the context was compacted")
	case "entry":
		if ev.Entry.Message.Role != "assistant" {
			break
		}
		for _, b := range ev.Entry.Message.Content {
			if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
				progress(oneline.Cut(b.Text, 200))
				break
			}
		}
	}
	return nil, ""
}

// resultOf is a call's result from its run's result event: the answer as
// the text (or, when the run failed, what went wrong), the event less its
// type and timestamp as the structured content.
func resultOf(r map[string]any) mcpserve.Result {
	delete(r, "type")
	delete(r, "timestamp")
	code, _ := r["exit_code"].(float64)
	text, _ := r["text"].(string)
	if code != 0 {
		reason, _ := r["reason"].(string)
		msg, _ := r["error"].(string)
		text = fmt.Sprintf("awl run exited %d (%s)", int(code), reason)
		if msg != "" {
			text += ": " + msg
		}
		if t, _ := r["text"].(string); t != "" {
			text += "\n\n" + t
		}
	}
	return mcpserve.Result{Text: text, Structured: r, IsError: code != 0}
}
