package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/awlrun/awl/cmd/awl/config"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/google/uuid"
	"github.com/mattn/go-isatty"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/internal/oneline"
	"github.com/awlrun/awl/provider"
	_ "github.com/awlrun/awl/provider/cloud" // bedrock: registered in the provider registry
	"github.com/awlrun/awl/provider/replay"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/mcp"
	"github.com/awlrun/awl/runner/modelctx"
	"github.com/awlrun/awl/runner/modelinfo"
	"github.com/awlrun/awl/runner/policy"
	"github.com/awlrun/awl/runner/redact"
	"github.com/awlrun/awl/runner/sandbox"
	"github.com/awlrun/awl/runner/tool"
	"github.com/awlrun/awl/session"
)

// runCmd is `awl run` and its flags. A flag added here needs a config tag
// too, and runFlagTable rewritten: given.go says how.
type runCmd struct {
	Args         []string      `arg:"" optional:"" name:"prompt"`
	Dir          string        `name:"cd" short:"C" placeholder:"DIR" config:"trusted,path"`
	Prompt       string        `short:"p" name:"prompt" placeholder:"TEXT" config:"free"`
	PromptFile   string        `short:"f" name:"prompt-file" placeholder:"FILE" config:"trusted,path"`
	Stdin        bool          `name:"stdin" config:"free"`
	NoStdin      bool          `name:"no-stdin" config:"free"`
	StdinTimeout time.Duration `name:"stdin-timeout" default:"3s" config:"min"`
	// Input "ndjson" reads stdin as the input channel's messages, one
	// turn a user message, until EOF (input.go); InputStrict ends the run
	// with exit 2 at the first line refused.
	Input       string `name:"input" enum:"text,ndjson" default:"text" config:"-"`
	InputStrict bool   `name:"input-strict" config:"-"`
	input       *ndjsonInput

	System       string `name:"system" placeholder:"TEXT" config:"free"`
	AppendSystem string `name:"append-system" placeholder:"TEXT" config:"free"`

	Provider   string `name:"provider" placeholder:"NAME" config:"free"`
	Model      string `name:"model" placeholder:"NAME" config:"free"`
	BaseURL    string `name:"base-url" placeholder:"URL" config:"trusted"`
	MaxRetries int    `name:"max-retries" default:"4" config:"min"`
	// StallTimeout bounds what a silent server costs one model request.
	StallTimeout time.Duration `name:"stall-timeout" default:"3m" placeholder:"DURATION" config:"min"`
	Reasoning    string        `name:"reasoning" placeholder:"EFFORT" config:"free"`

	// Tools and DenyTools are lists of rules, split on the commas outside
	// parentheses by runner/policy (bash(echo a,b) is one rule).
	Tools     []string `name:"tools" sep:"none" placeholder:"RULES" config:"allow"`
	DenyTools []string `name:"deny-tools" sep:"none" placeholder:"RULES" config:"deny"`
	NoTools   bool     `name:"no-tools" config:"narrow"`
	// FailOnDeny makes a run that would have completed exit 9 when the
	// tool policy denied any call.
	FailOnDeny bool `name:"fail-on-deny" config:"narrow"`
	// ToolHook are the pre-tool hooks, run with bash -c before each
	// allowed call (runner/policy's RunHooks).
	ToolHook        []string      `name:"tool-hook" sep:"none" placeholder:"CMD" config:"trusted"`
	ToolHookTimeout time.Duration `name:"tool-hook-timeout" default:"30s" placeholder:"DURATION" config:"min"`

	Sandbox           string        `name:"sandbox" placeholder:"MODE" config:"sandbox"`
	SandboxWritable   []string      `name:"sandbox-writable" sep:"none" placeholder:"DIR" config:"trusted,path"`
	SandboxNetwork    bool          `name:"sandbox-network" config:"trusted"`
	SandboxBestEffort bool          `name:"sandbox-best-effort" config:"trusted"`
	MCPConfig         []string      `name:"mcp-config" sep:"none" placeholder:"FILE" config:"trusted,path"`
	MCPTimeout        time.Duration `name:"mcp-timeout" default:"30s" config:"min"`
	MCPCallTimeout    time.Duration `name:"mcp-call-timeout" default:"2m" config:"min"`
	MCPStrict         bool          `name:"mcp-strict" config:"narrow"`
	mcp               *mcp.Manager
	policy            *policy.Policy // built by buildTools
	// secretVars are the variables kept from tools and MCP servers
	// (secretNames), set by prepare. The credentials a cloud provider
	// holds in no variable reach every redactor through app.secrets
	// (provider.Options.OnSecret), those of a refresh mid-run included.
	secretVars []string

	MaxTurns        int           `name:"max-turns" placeholder:"N" config:"limit"`
	Timeout         time.Duration `name:"timeout" placeholder:"DURATION" config:"limit"`
	MaxOutputTokens int           `name:"max-output-tokens" placeholder:"N" config:"limit"`
	MaxCostUSD      float64       `name:"max-cost-usd" placeholder:"X" config:"limit"`
	MaxTotalTokens  int64         `name:"max-total-tokens" placeholder:"N" config:"limit"`
	Pricing         string        `name:"pricing" placeholder:"FILE" config:"trusted,path"`

	// The context window: nil means the flag was not given (pointers, so
	// that an explicit 0 is refused rather than taken for the default).
	ContextWindow *int64 `name:"context-window" placeholder:"N" config:"free"`
	PruneAt       *int   `name:"prune-at" placeholder:"PCT" config:"free"`
	CompactAt     *int   `name:"compact-at" placeholder:"PCT" config:"free"`
	NoCompact     bool   `name:"no-compact" config:"free"`
	// CacheTTL is how long the provider's prompt cache keeps what a
	// request writes (5m, 1h, 24h; docs/cost.md); "" the API's default.
	CacheTTL string `name:"cache-ttl" placeholder:"TTL" config:"free"`
	// ServiceTier is the provider's processing tier (auto, default, flex,
	// priority; docs/cost.md); "" sends none.
	ServiceTier string `name:"service-tier" placeholder:"TIER" config:"free"`

	Output   string `name:"output" short:"o" enum:"text,json,ndjson" default:"text" config:"free"`
	Stream   bool   `name:"stream" config:"free"`
	Quiet    bool   `name:"quiet" short:"q" config:"free"`
	Progress bool   `name:"progress" config:"free"`

	OutputSchema      schemaRef `name:"output-schema" placeholder:"FILE" config:"trusted,path"`
	SchemaRetries     int       `name:"schema-retries" default:"2" placeholder:"N" config:"min"`
	Check             []string  `name:"check" sep:"none" placeholder:"CMD" config:"trusted"`
	CheckRetries      int       `name:"check-retries" default:"2" placeholder:"N" config:"min"`
	recordedSchema    []byte    // the --output-schema of a --replay recording
	OutputLastMessage string    `name:"output-last-message" placeholder:"FILE" config:"trusted,path"`

	Resume   string `name:"resume" short:"r" placeholder:"REF" config:"-"`
	Continue bool   `name:"continue" short:"c" config:"-"`
	Fork     string `name:"fork" placeholder:"REF" config:"-"`
	// SessionID is validated and lower-cased by prepare.
	SessionID string `name:"session-id" placeholder:"UUID" config:"-"`

	Image []string `name:"image" sep:"none" placeholder:"FILE" config:"trusted,path"`

	RedactEnv []string `name:"redact-env" sep:"none" placeholder:"NAME" config:"deny"`
	// ShareCloudCredentials passes the clouds' credential variables to
	// the tools and checks (an aws command); they stay redacted.
	ShareCloudCredentials bool `name:"share-cloud-credentials" config:"trusted"`

	// Skills are --skills directories (skills.go).
	Skills       []string `name:"skills" sep:"none" placeholder:"DIR" config:"free,path"`
	NoSkills     bool     `name:"no-skills" config:"free"`
	SkillsStrict bool     `name:"skills-strict" config:"narrow"`
	NoAgentsMD   bool     `name:"no-agents-md" config:"free"`
	NoEnvContext bool     `name:"no-env-context" config:"free"`

	Replay        string `name:"replay" placeholder:"REF" config:"-"`
	ReplayLenient bool   `name:"replay-lenient" config:"-"`

	// The configuration files (configure.go).
	Config       string `name:"config" placeholder:"FILE" config:"-"`
	NoConfig     bool   `name:"no-config" config:"-"`
	Profile      string `name:"profile" placeholder:"NAME" config:"-"`
	TrustProject bool   `name:"trust-project" config:"-"`
	// configured is what configure read and set, for the run entry.
	configured *configured
	// tree is what the walk up from the run's directory found (lookUp),
	// which the configuration and the skills share.
	tree *config.Tree

	// given is the record of the flags the command line gave (given.go).
	given givenFlags
	// recordedRules are the tool rules of a --replay recording's step.
	recordedRules *session.RunRules
}

// Run runs a prompt.
func (c *runCmd) Run(a *app, store *session.Store) error {
	// The configuration first: it may set how the run reports itself.
	if err := c.configure(a); err != nil {
		c.failBeforeStart(a, err)
		return nil
	}
	c.flexDefaults()
	store = c.configured.store(store)
	if store.Dir == "" {
		c.failBeforeStart(a, a.noSessionDir)
		return nil
	}
	if pr := c.progress(a); pr != nil {
		// Diagnostics go out in order with the progress lines, and a
		// blocked stderr stalls neither the run nor its end.
		stderr := a.stderr
		a.stderr = pr.Diag()
		defer func() {
			pr.Close(progressFlush)
			a.stderr = stderr
		}()
		a.progress = pr
	}
	tr := c.startTracing(a)
	defer tr.finish(a)
	em := c.emitter(a, tr)
	// --timeout covers the whole run, reading stdin included.
	ctx := a.ctx
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, c.Timeout, &runner.TimeoutError{After: c.Timeout})
		defer cancel()
	}
	res, cfg, err := c.prepare(ctx, a, store, em)
	defer cfg.Sandbox.Close()
	// Only when there is a manager: (*mcp.Manager).Close on nil does
	// nothing, but calling it pages in its 64 KB of text (docs/performance.md).
	if m := c.mcp; m != nil {
		defer m.Close()
	}
	if err != nil {
		res.Err = err
		runner.EmitResult(em, res, time.Since(a.start))
		a.code, _ = runner.Classify(err)
		// A session that was refused (busy, corrupt, not found) is no
		// session to continue with.
		se := (*session.Error)(nil)
		c.report(a, store, res, !errors.As(err, &se))
		writeStepSummary(a, res, a.code)
		return nil
	}
	tr.hook(&cfg)
	// A .git replaced or made where git looks, or (where .git is not
	// read-only) a config or hook changed: said once the command that did
	// it has ended, and what is left at the end of the run.
	cfg.Sandbox.OnGitChange(func(ch string) { gitChangeWarning(a, cfg.Redact, ch) })
	res = runner.Run(ctx, cfg)
	a.code, _ = runner.Classify(res.Err)
	for _, ch := range cfg.Sandbox.GitChanges() {
		gitChangeWarning(a, cfg.Redact, ch)
	}
	textErr := c.report(a, store, res, true)
	c.undelivered(a, em, tr, textErr)
	writeStepSummary(a, res, a.code)
	return nil
}

// undelivered makes a run whose answer (text) or events (json, ndjson)
// could not be written to stdout fail with exit 1, saying so, when it
// would have exited 0: a full disk must not pass for a delivered answer.
// A stdout its reader closed (EPIPE: `| head -1`) is no failure, and one
// given up on after a signal keeps the signal's code.
func (c *runCmd) undelivered(a *app, em *event.Emitter, tr *tracing, textErr error) {
	err := textErr
	if err == nil {
		err = em.Err()
	}
	if err == nil && tr != nil && tr.tee != nil {
		err = tr.tee.err
	}
	if quietPipe(err) == nil || a.code != 0 {
		return
	}
	what := "result"
	if c.Output == "text" {
		what = "answer"
	}
	fmt.Fprintf(a.stderr, "awl: stdout: %v: the %s was not delivered; the session holds it\n", err, what)
	a.code = runner.ExitInternal
}

// failBeforeStart ends a run that failed before it started (its
// configuration): the result event, the error, the step summary.
func (c *runCmd) failBeforeStart(a *app, err error) {
	res := runner.Result{Err: err}
	runner.EmitResult(c.emitter(a, nil), res, time.Since(a.start))
	a.code, _ = runner.Classify(err)
	fmt.Fprintln(a.stderr, "awl:", err)
	writeStepSummary(a, res, a.code)
}

// emitter returns where events go for the chosen output mode; the
// progress printer, when there is one, reads them too, and so does the
// trace when there is one.
func (c *runCmd) emitter(a *app, tr *tracing) *event.Emitter {
	var out io.Writer
	switch c.Output {
	case "ndjson":
		out = lines{a.stdout}
	case "json":
		out = resultOnly{a.stdout}
	}
	switch {
	case a.progress == nil:
	case out == nil:
		out = a.progress
	default:
		out = progressTee{out, a.progress}
	}
	if tr != nil {
		tr.tee = &tee{trace: tr.b, out: out}
		return event.NewEmitter(tr.tee, nil)
	}
	return event.NewEmitter(out, nil)
}

// progressTee writes each event to w and to the progress printer, which
// never fails; w's error is the write's.
type progressTee struct{ w, progress io.Writer }

func (t progressTee) Write(p []byte) (int, error) {
	t.progress.Write(p)
	return t.w.Write(p)
}

// WriteParts hands both the parts, where they take them.
func (t progressTee) WriteParts(parts ...[]byte) error {
	var line []byte
	for _, w := range []io.Writer{t.progress, t.w} {
		if pw, ok := w.(event.PartsWriter); ok {
			if err := pw.WriteParts(parts...); err != nil && w == t.w {
				return err
			}
			continue
		}
		if line == nil {
			line = event.Join(parts...)
		}
		if _, err := w.Write(line); err != nil && w == t.w {
			return err
		}
	}
	return nil
}

// report prints the text-mode answer and the diagnostics on stderr; hint
// adds how to continue the session.
func (c *runCmd) report(a *app, store *session.Store, res runner.Result, hint bool) (textErr error) {
	if res.Err != nil {
		fmt.Fprintln(a.stderr, "awl:", res.Err)
	}
	c.writeLastMessage(a, res)
	if c.Output == "text" && res.Err == nil {
		text := res.Text
		if res.Structured != nil {
			text = string(res.Structured)
		}
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		_, textErr = io.WriteString(a.stdout, text)
	}
	if hint && res.SessionID != "" {
		fmt.Fprintf(a.stderr, "awl: session %s (continue with: awl run --resume %s \"…\")\n", res.SessionID, continueRef(store, res))
	}
	return textErr
}

// continueRef is what to give --resume to continue the session of res: its
// id when it lives in the store, else its path (a session resumed as
// ./artifact.jsonl: the id would find another copy, or none), quoted for a
// shell when it needs to be.
func continueRef(store *session.Store, res runner.Result) string {
	if res.SessionPath == "" {
		return res.SessionID
	}
	p, err := filepath.Abs(res.SessionPath)
	if err != nil {
		p = res.SessionPath
	}
	if rel, err := filepath.Rel(store.Dir, p); err == nil && filepath.IsLocal(rel) {
		return res.SessionID
	}
	return shellQuote(p)
}

// shellQuote quotes s for a POSIX shell unless it holds only characters
// that need no quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// prepare turns flags, environment and stdin into a run configuration,
// in named steps. Everything that can be checked is checked before stdin
// is read: a job piping a long build into a misconfigured awl learns so at
// once, not when the build ends. MCP servers start last, right before the
// first request.
func (c *runCmd) prepare(ctx context.Context, a *app, store *session.Store, em *event.Emitter) (runner.Result, runner.Config, error) {
	if c.Replay == "" && recorded(cmp.Or(c.Provider, a.getenv("AWL_PROVIDER"))) {
		c.Replay = a.getenv("AWL_REPLAY")
	}
	st := &runSetup{}
	err := c.enterDir()
	if err == nil {
		st.cwd, err = os.Getwd()
		if err != nil {
			err = fmt.Errorf("working directory: %w", err)
		}
	}
	// The steps before reading stdin do not block, unless one takes a
	// session's lock: the signals are caught before anything that may
	// wait, and before the session is created (signalContext).
	for _, step := range []func() error{
		func() error { return c.checkFlags(a, st) },
		func() error { return c.keepSecrets(a, st) },
		func() error { return c.loadSkills(a, st) },
		func() error {
			if len(c.MCPConfig) > 0 || len(c.Image) > 0 {
				awaitSignals(a.ctx) // a file named may be a pipe
			}
			return c.loadInputs(a, st)
		},
		func() error {
			if c.Resume != "" || c.Continue || c.Fork != "" {
				awaitSignals(a.ctx)
			}
			return c.openSessions(store, st)
		},
		func() error { return c.resolveModel(a, store, st) },
		func() error { return c.buildTools(a, st) },
		func() error { return c.readSchemaFile(ctx, a, st) },
		func() error { return c.openProvider(st) },
		func() error {
			if c.Input == "ndjson" {
				awaitSignals(a.ctx)
				return c.readFirstInput(ctx, a, st, em)
			}
			if c.readsInput() {
				awaitSignals(a.ctx)
			}
			return c.readPromptInput(ctx, a, st)
		},
		func() error {
			if len(st.mcpServers) > 0 {
				awaitSignals(a.ctx) // servers to start, and stop on a signal
			}
			return c.startMCPTools(ctx, a, st)
		},
	} {
		if err != nil {
			break
		}
		err = step()
	}
	if err != nil {
		st.release()
		return st.res, runner.Config{}, err
	}
	return st.res, c.config(a, store, em, st), nil
}

// runSetup is what prepare's steps build, in their order.
type runSetup struct {
	res runner.Result // the session's id and path, once known
	// open opens the provider resolveModel chose (nil for a replay's).
	open func() (provider.Provider, error)
	// schemaRead is whether schema has been read (readSchema).
	schemaRead bool
	cwd        string
	replay     bool // --provider replay
	// secrets are the variables kept secret: from tools and MCP servers,
	// and redacted; toolSecrets those kept from the tools and checks
	// (all but the clouds' with --share-cloud-credentials).
	secrets     []string
	toolSecrets []string
	mcpServers  []mcp.Server
	images      []conv.Attachment
	// skills are the skills offered, their catalogue within its budget.
	skills []modelctx.Skill
	// resumed is the session continued (--resume, -c), forked the one
	// --fork copies; fresh says -c found none to continue.
	resumed, forked *session.Session
	fresh           bool
	prov            provider.Provider
	model           string
	script          []conv.Message // replay's prompts
	prices          *modelinfo.Table
	window          runner.Window
	sb              *sandbox.Sandbox
	sbStatus        sandbox.Status
	toolEnv         tool.Env
	schema          *runner.OutputSchema
	text            string
	stdinState      string
	policy          *policy.Policy
	tools           []tool.Tool
	known           []string
	mcpStatus       []mcp.Status
}

// release closes what a failed setup opened: the sessions and the
// sandbox (Run closes the MCP servers).
func (st *runSetup) release() {
	if st.resumed != nil {
		st.resumed.Close()
	}
	if st.forked != nil {
		st.forked.Close()
	}
	st.sb.Close()
}

// enterDir applies --cd. Paths given on the command line are the
// caller's: they are resolved before moving to DIR.
func (c *runCmd) enterDir() error {
	if c.Dir == "" {
		return nil
	}
	files := append([]*string{&c.PromptFile, &c.OutputLastMessage, &c.Pricing}, pathPtrs(c.Image)...)
	if c.OutputSchema.Ref != "none" {
		files = append(files, &c.OutputSchema.Ref)
	}
	files = append(files, pathPtrs(c.SandboxWritable)...)
	files = append(files, pathPtrs(c.MCPConfig)...)
	files = append(files, pathPtrs(c.Skills)...)
	for _, ref := range []*string{&c.Resume, &c.Replay, &c.Fork} {
		if looksLikePath(*ref) {
			files = append(files, ref)
		}
	}
	for _, p := range files {
		if *p != "" && *p != "-" {
			*p, _ = filepath.Abs(*p)
		}
	}
	if err := os.Chdir(c.Dir); err != nil {
		return runner.Usagef(fmt.Sprintf("--cd: %v", err))
	}
	return nil
}

// checkFlags checks the flags against each other.
func (c *runCmd) checkFlags(a *app, st *runSetup) error {
	if c.Stdin && c.NoStdin {
		return runner.Usagef("--stdin and --no-stdin exclude each other")
	}
	st.replay = recorded(cmp.Or(c.Provider, a.getenv("AWL_PROVIDER")))
	if err := c.checkInputFlags(st.replay); err != nil {
		return err
	}
	if err := c.checkForkFlags(); err != nil {
		return err
	}
	if err := c.validate(); err != nil {
		return err
	}
	if err := c.checkPromptGiven(st.replay); err != nil {
		return err
	}
	if st.replay && (c.ContextWindow != nil || c.PruneAt != nil || c.CompactAt != nil) {
		// A summary request would be served a recorded answer, and a
		// pruned tool result would diverge from the recording.
		return runner.Usagef("--context-window, --prune-at and --compact-at have no place in a replay: it sends what the recording holds, never prunes, and never compacts")
	}
	return c.checkLastMessage()
}

// checkPromptGiven refuses, before any credential is looked for, a run
// that can have no prompt: --no-stdin with none in the arguments, -p or
// --image, and a -f FILE that is not there. The prompt itself is read
// last (readPrompt), once the provider is open; without these checks a
// run with no key was exit 4 for what is a usage error. A replay takes
// its prompts from the recording, and --input ndjson from stdin.
func (c *runCmd) checkPromptGiven(replay bool) error {
	if c.PromptFile != "" && c.PromptFile != "-" {
		if _, err := os.Stat(c.PromptFile); err != nil {
			return runner.Usagef(fmt.Sprintf("--prompt-file: %v", err))
		}
		return nil
	}
	if !c.NoStdin || replay || c.Input == "ndjson" || len(c.Image) > 0 {
		return nil
	}
	if strings.Trim(strings.Join(append([]string{c.Prompt}, c.Args...), " "), " \t\r\n\x00") == "" {
		return runner.Usagef("no prompt: --no-stdin reads none from stdin; give one as arguments, with -p/--prompt or -f/--prompt-file")
	}
	return nil
}

// keepSecrets names the secret variables and hides them from every
// process but awl.
func (c *runCmd) keepSecrets(a *app, st *runSetup) error {
	names, err := secretNames(a, c.RedactEnv)
	if err != nil {
		return err
	}
	hideSecrets(a, names)
	st.secrets, c.secretVars = names, names
	st.toolSecrets = names
	if c.ShareCloudCredentials {
		cloud := provider.CloudSecretVars()
		st.toolSecrets = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(cloud, n) })
	}
	return nil
}

// loadInputs reads the --mcp-config files and the --image files.
func (c *runCmd) loadInputs(a *app, st *runSetup) error {
	var err error
	if st.mcpServers, err = c.loadMCP(a); err != nil {
		return err
	}
	st.images = make([]conv.Attachment, 0, len(c.Image))
	for _, p := range c.Image {
		img, err := tool.LoadImage(p)
		if err != nil {
			return runner.Usagef("--image " + err.Error())
		}
		st.images = append(st.images, img)
	}
	return nil
}

// openSessions resolves --resume, -c and --fork and opens (locks) their
// sessions, once, here: a busy or corrupt session fails before anything
// else is set up, and the runner takes it over without reading it again.
// A new session (--session-id, or none given) is created by the runner
// once the run starts; a taken id is exit 3 before anything is written.
func (c *runCmd) openSessions(store *session.Store, st *runSetup) error {
	resumePath, err := c.resumePath(store, st)
	if err != nil {
		return err
	}
	if c.SessionID != "" {
		if err := store.CheckNewID(c.SessionID); err != nil {
			return err
		}
	}
	if c.Fork != "" {
		// REF is read under a shared lock, held until the run has copied
		// it into the fork: many forks at once, no writer meanwhile.
		forkPath, err := store.Resolve(c.Fork, st.cwd)
		if se := (*session.Error)(nil); errors.As(err, &se) && (se.Kind == session.KindNotFound || se.Kind == session.KindAmbiguous) {
			err = &session.Error{Kind: se.Kind, Path: se.Path, Err: se.Err, Candidates: se.Candidates,
				Msg: fmt.Sprintf("--fork %s: %s", c.Fork, se.Msg)}
		}
		if err != nil {
			return err
		}
		if st.forked, err = session.OpenShared(forkPath); err != nil {
			return err
		}
	}
	if resumePath != "" {
		st.resumed, err = openSession(&st.res, resumePath)
	}
	return err
}

// resumePath is the session file --resume or -c names; "" for a new
// session.
func (c *runCmd) resumePath(store *session.Store, st *runSetup) (string, error) {
	switch {
	case c.Resume != "" && c.Continue:
		return "", runner.Usagef("--resume REF and --continue exclude each other")
	case c.Resume != "":
		p, err := store.Resolve(c.Resume, st.cwd)
		if se := (*session.Error)(nil); errors.As(err, &se) && se.Kind == session.KindNotFound {
			err = &session.Error{Kind: se.Kind, Path: se.Path, Err: se.Err,
				Msg: fmt.Sprintf("--resume %s: %s; to continue the latest session, use -c", c.Resume, se.Msg)}
		}
		return p, err
	case c.Continue:
		p, err := store.Latest(st.cwd)
		if se := (*session.Error)(nil); errors.As(err, &se) && se.Kind == session.KindNotFound {
			// Nothing to continue here yet: start the conversation.
			st.fresh = true
			return "", nil
		}
		return p, err
	}
	return "", nil
}

// openSession opens (locks) the session file at path for a run to
// continue, the one way awl run and awl sessions compact open one: res
// says which session it is even when opening fails.
func openSession(res *runner.Result, path string) (*session.Session, error) {
	res.SessionID, res.SessionPath = session.SessionIDFromPath(path), path
	s, err := session.Open(path)
	if err != nil {
		return nil, err
	}
	res.SessionID, res.SessionPath = s.Header.ID, s.Path
	return s, nil
}

// resolveModel chooses the provider and model: the flags, else the
// session's active ones, else the provider whose key is set.
func (c *runCmd) resolveModel(a *app, store *session.Store, st *runSetup) error {
	var activeProvider, activeModel string
	switch {
	case st.resumed != nil:
		activeProvider, activeModel = st.resumed.ActiveModel()
	case st.forked != nil:
		activeProvider, activeModel = st.forked.ActiveModel()
	}
	o := c.modelOptions()
	name, from, model := o.choose(a, activeProvider, activeModel)
	if recorded(name) {
		return c.resolveReplay(a, store, st, name, model)
	}
	if c.Replay != "" {
		return runner.Usagef("--replay needs --provider replay")
	}
	spec, model, err := o.pick(a, name, from, model)
	if err != nil {
		return err
	}
	// What the flags ask of this provider and model is checked before
	// its credentials are looked for: a flag the provider refuses is
	// exit 2 with no credential lookup, no token fetched, no network.
	st.model = model
	if err := c.priceModel(a, st, spec.Name); err != nil {
		return err
	}
	// The tool flags (--tools, --deny-tools, --sandbox) are checked
	// before the credentials too: openProvider opens it after buildTools.
	st.open = func() (provider.Provider, error) { return o.open(a, spec, model) }
	return nil
}

// openProvider opens the provider resolveModel chose, which looks for its
// credentials: after every flag is checked, so that a flag given wrong is
// exit 2 whatever the environment holds, with no token fetched for it.
func (c *runCmd) openProvider(st *runSetup) error {
	if st.open == nil {
		return nil // --provider replay: opened with its recording
	}
	var err error
	st.prov, err = st.open()
	return err
}

// resolveReplay sets up --provider replay and checks the flags against
// the recording's provider and model.
func (c *runCmd) resolveReplay(a *app, store *session.Store, st *runSetup, name, model string) error {
	var err error
	if st.prov, st.model, err = c.buildReplay(a, store, st.cwd, name, model); err != nil {
		return err
	}
	// The schema of the recording's next step is known before the
	// prompt is read (--output-schema - reads stdin); a run that has no
	// next step fails in readPromptInput, with its prompt in the diff.
	if step, err := st.prov.(*replay.Provider).Next(continued(st.resumed, st.forked), ""); err == nil {
		c.recordedSchema, c.recordedRules = step.Schema, step.Rules
	}
	return c.priceModel(a, st, st.prov.Name())
}

// buildTools sets up the sandbox and checks the tool flags against the
// built-in tools (the MCP servers' are added once they start).
func (c *runCmd) buildTools(a *app, st *runSetup) error {
	var err error
	if st.sb, st.sbStatus, err = c.sandbox(a, st.cwd); err != nil {
		return err
	}
	st.toolEnv = tool.Env{Dir: st.cwd, Getenv: a.getenv, Environ: toolEnviron(st.toolSecrets), Confine: confiner(st.sb)}
	allow, deny := c.ruleLists(a)
	if st.policy, err = c.toolPolicy(st.cwd, tool.Builtins(st.toolEnv), allow, deny); err != nil {
		return err
	}
	c.policy = st.policy
	if st.policy.HasPathRules("read") || st.policy.HasPathRules("write") || st.policy.HasPathRules("edit") {
		st.toolEnv.Paths = st.policy
	}
	return nil
}

// priceModel loads the price table, refuses --max-cost-usd on a model it
// has no price for and what the model cannot take (--reasoning,
// --max-output-tokens), and sets the context window.
func (c *runCmd) priceModel(a *app, st *runSetup, provName string) error {
	var err error
	if st.prices, err = loadPrices(a.getenv, c.Pricing, c.origin("pricing")); err != nil {
		return err
	}
	if err := runner.CheckPriced(st.prices, provName, st.model, c.MaxCostUSD); err != nil {
		return err
	}
	if err := runner.CheckModelFlags(st.prices, provName, st.model, c.Reasoning, c.MaxOutputTokens); err != nil {
		return err
	}
	st.window = c.window(a, st.prices, provName, st.model)
	if st.replay {
		return nil
	}
	model := st.model
	if m, ok := st.prices.Lookup(provName, model); ok {
		model = m.Name // an Azure deployment, a Bedrock inference profile: the model it serves
	}
	if err := checkCacheTTL(c.CacheTTL, provName, model); err != nil {
		return err
	}
	return c.checkServiceTier(st, provName)
}

// checkServiceTier refuses a --service-tier the provider's API does not
// offer (exit 2), and a --max-cost-usd whose budget the tier's price,
// missing from the table, could not keep.
func (c *runCmd) checkServiceTier(st *runSetup, provName string) error {
	if c.ServiceTier == "" {
		return nil
	}
	if ok, why := provider.ServiceTierOffered(provName, c.ServiceTier); !ok {
		return runner.Usagef(fmt.Sprintf("--service-tier %q: %s", c.ServiceTier, why))
	}
	if c.MaxCostUSD > 0 {
		if m, ok := st.prices.Lookup(provName, st.model); ok {
			if _, ok := m.TierPrice(c.ServiceTier, provider.CloudTiers(provName)); !ok {
				return runner.Usagef(fmt.Sprintf("--max-cost-usd cannot be kept: awl's price table has no %s price for %s (add one with --pricing)", c.ServiceTier, st.model))
			}
		}
	}
	return nil
}

// Flex processing answers more slowly and is refused more often when
// capacity is short (429); these are the defaults of --stall-timeout and
// --max-retries with --service-tier flex, when nothing set them.
const (
	flexStallTimeout = 15 * time.Minute
	flexMaxRetries   = 8
)

// flexDefaults gives a flex run room to wait: the longer stall budget and
// more retries, unless a flag, a variable or a configuration file set
// them.
func (c *runCmd) flexDefaults() {
	if c.ServiceTier != "flex" {
		return
	}
	if !c.chose("stall-timeout") {
		c.StallTimeout = flexStallTimeout
	}
	if !c.chose("max-retries") {
		c.MaxRetries = flexMaxRetries
	}
}

// chose reports whether the command line, a variable or a configuration
// file gave the run flag name.
func (c *runCmd) chose(name string) bool {
	if c.given.has(name) {
		return true
	}
	cf := c.configured
	return cf != nil && cf.res.Settings[name].Source.Kind != "" && cf.res.Settings[name].Source.Kind != "default"
}

// checkCacheTTL refuses a --cache-ttl that is not a lifetime, or that the
// provider's API does not offer for the model (exit 2).
func checkCacheTTL(ttl, provName, model string) error {
	switch ttl {
	case "", "5m", "1h", "24h":
	default:
		return runner.Usagef(fmt.Sprintf("--cache-ttl %q: want 5m, 1h (Anthropic) or 24h (OpenAI)", ttl))
	}
	if ok, why := provider.ExtendedCache(provName, model, ttl); !ok {
		return runner.Usagef("--cache-ttl " + ttl + ": " + why)
	}
	return nil
}

// readPromptInput reads the schema file and the prompt. A schema file is
// checked here too; `--output-schema -` reads stdin, so it comes after
// every other check.
func (c *runCmd) readPromptInput(ctx context.Context, a *app, st *runSetup) error {
	if err := c.readSchema(ctx, a, st); err != nil {
		return err
	}
	var err error
	if st.text, st.stdinState, err = c.readPrompt(ctx, a, st.replay); err != nil {
		return err
	}
	limitMemory(len(st.text), a.getenv)
	if rp, _ := st.prov.(*replay.Provider); rp != nil {
		// The step is the recording's next one, or the prompt given if it
		// is the recording's prompt at this point.
		step, err := rp.Next(continued(st.resumed, st.forked), st.text)
		if err != nil {
			return err
		}
		st.script, st.text, st.images = step.Prompts, "", nil
	}
	if st.stdinState == "timeout" {
		fmt.Fprintf(a.stderr, "awl: nothing arrived on stdin within %s; going on without it (--stdin waits, --no-stdin skips)\n", c.StdinTimeout)
	}
	if st.fresh {
		fmt.Fprintf(a.stderr, "awl: no session of %s to continue; starting a new one\n", st.cwd)
	}
	return nil
}

// readsInput reports whether readPromptInput may read stdin or a named
// file (which may be a pipe that blocks): the signals are caught before
// it does. A run that reads neither waits for them later, only before it
// creates its session (runner.Config.BeforeCreate): the thread the signal
// handlers start on is up meanwhile, instead of the run waiting for it
// (up to 0.35 ms of a 3 ms start on a quiet machine).
func (c *runCmd) readsInput() bool {
	return !c.NoStdin || c.PromptFile != "" || c.OutputSchema.Ref != ""
}

// startMCPTools starts the MCP servers and chooses the tools to offer,
// theirs included.
func (c *runCmd) startMCPTools(ctx context.Context, a *app, st *runSetup) error {
	var err error
	if c.mcp, err = c.startMCP(ctx, a, st.cwd, st.mcpServers, st.sb); err != nil {
		return err
	}
	var mcpTools []tool.Tool
	if c.mcp != nil {
		mcpTools, st.mcpStatus = c.mcp.Tools(), c.mcp.Status()
	}
	st.tools, st.known = selectTools(st.policy, append(tool.Builtins(st.toolEnv), mcpTools...))
	return nil
}

// config is the run's configuration, from the flags and what setup built.
func (c *runCmd) config(a *app, store *session.Store, em *event.Emitter, st *runSetup) runner.Config {
	return runner.Config{
		Store:              store,
		BeforeCreate:       func() { awaitSignals(a.ctx) },
		Cwd:                st.cwd,
		Resume:             st.resumed,
		Fork:               st.forked,
		SessionID:          c.SessionID,
		Prompt:             st.text,
		Images:             st.images,
		Script:             st.script,
		Provider:           st.prov,
		Model:              st.model,
		Tools:              st.tools,
		Known:              st.known,
		Denies:             deniesUnoffered(st.policy, st.mcpServers),
		Policy:             st.policy,
		FailOnDeny:         c.FailOnDeny,
		Hooks:              c.hooks(st),
		RecordedHooks:      recordedHooks(st.prov),
		RecordedInterrupts: recordedInterrupts(st.prov),
		Sandbox:            st.sb,
		SandboxStatus:      st.sbStatus,
		MCP:                st.mcpStatus,
		Window:             st.window,
		CacheTTL:           c.CacheTTL,
		ServiceTier:        c.ServiceTier,
		MaxTurns:           c.MaxTurns,
		MaxOutputTokens:    c.MaxOutputTokens,
		MaxCostUSD:         c.MaxCostUSD,
		MaxTotalTokens:     c.MaxTotalTokens,
		Prices:             st.prices,
		Timeout:            c.Timeout,
		Version:            version,
		ConfigFiles:        c.configured.runConfig(),
		Reasoning:          c.Reasoning,
		Stream:             c.Stream,
		System:             c.System,
		AppendSystem:       c.AppendSystem,
		NoEnv:              c.NoEnvContext,
		NoAgentsMD:         c.NoAgentsMD,
		Skills:             st.skills,
		OutputSchema:       st.schema,
		DropOutputSchema:   c.OutputSchema.Ref == "none",
		SchemaRetries:      c.SchemaRetries,
		Checks:             c.Check,
		CheckRetries:       c.CheckRetries,
		StdinState:         st.stdinState,
		Input:              c.runInput(),
		Start:              a.start,
		Redact:             redactor(a, st.secrets),
		Events:             em,
		Notes:              a.stderr,
		Getenv:             a.getenv,
		Environ:            st.toolEnv.Environ,
	}
}

// checkForkFlags checks --fork and --session-id against each other and the
// other session flags, and puts the id in its canonical form.
func (c *runCmd) checkForkFlags() error {
	if c.Fork != "" && (c.Resume != "" || c.Continue) {
		return runner.Usagef("--fork starts a new session; it cannot be combined with --resume or -c/--continue")
	}
	if c.SessionID == "" {
		return nil
	}
	if c.Resume != "" || c.Continue {
		return runner.Usagef("--session-id names a new session; it cannot be combined with --resume or -c/--continue")
	}
	u, err := uuid.Parse(c.SessionID)
	if err != nil || len(c.SessionID) != 36 {
		return runner.Usagef(fmt.Sprintf("--session-id %q: not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx; on Linux, /proc/sys/kernel/random/uuid holds a new one)", c.SessionID))
	}
	c.SessionID = u.String()
	return nil
}

// validate rejects flag values that would otherwise silently mean "no
// limit" or "every tool".
func (c *runCmd) validate() error {
	for _, f := range []struct {
		name string
		bad  bool
	}{
		{"--max-turns", c.MaxTurns < 0},
		{"--max-output-tokens", c.MaxOutputTokens < 0},
		{"--max-cost-usd", c.MaxCostUSD < 0 || math.IsNaN(c.MaxCostUSD) || math.IsInf(c.MaxCostUSD, 0)},
		{"--max-total-tokens", c.MaxTotalTokens < 0},
		{"--max-retries", c.MaxRetries < 0},
		{"--timeout", c.Timeout < 0},
		{"--stdin-timeout", c.StdinTimeout < 0},
		{"--mcp-timeout", c.MCPTimeout < 0},
		{"--mcp-call-timeout", c.MCPCallTimeout < 0},
		{"--schema-retries", c.SchemaRetries < 0},
		{"--check-retries", c.CheckRetries < 0},
		{"--tool-hook-timeout", c.ToolHookTimeout < 0},
		{"--stall-timeout", c.StallTimeout < 0},
	} {
		if f.bad {
			return runner.Usagef(f.name + " must not be negative")
		}
	}
	if c.StallTimeout == 0 {
		return runner.Usagef("--stall-timeout must be more than 0 (it bounds how long a silent server may hold a request)")
	}
	switch c.Reasoning {
	case "", "low", "medium", "high":
	default:
		return runner.Usagef(fmt.Sprintf("--reasoning: %q is not low, medium or high", c.Reasoning))
	}
	if err := c.validateWindow(); err != nil {
		return err
	}
	if c.Tools != nil && len(ruleList(c.Tools)) == 0 {
		return runner.Usagef("--tools: the list is empty (use --no-tools to offer none)")
	}
	for _, cmd := range c.Check {
		if strings.TrimSpace(cmd) == "" {
			return runner.Usagef("--check: the command is empty")
		}
	}
	for _, cmd := range c.ToolHook {
		if strings.TrimSpace(cmd) == "" {
			return runner.Usagef("--tool-hook: the command is empty")
		}
	}
	if len(c.ToolHook) > 0 && c.ToolHookTimeout == 0 {
		return runner.Usagef("--tool-hook-timeout must be more than 0")
	}
	return nil
}

// loadPrices returns the price table: awl's, overridden and extended by
// --pricing FILE (pricing, which came from from) or else AWL_PRICING.
func loadPrices(getenv func(string) string, pricing, from string) (*modelinfo.Table, error) {
	path := pricing
	if path == "" {
		path, from = getenv("AWL_PRICING"), "AWL_PRICING"
	}
	t, err := modelinfo.Load(path)
	if err != nil {
		return nil, runner.Usagef(from + ": " + err.Error())
	}
	return t, nil
}

// sandbox sets up --sandbox (or AWL_SANDBOX) for the tools. It returns nil
// when the sandbox is off. When the kernel cannot enforce the mode asked
// for, it fails with exit 4 unless --sandbox-best-effort, which warns on
// stderr and goes on.
func (c *runCmd) sandbox(a *app, cwd string) (*sandbox.Sandbox, sandbox.Status, error) {
	from, value := c.origin("sandbox"), c.Sandbox
	if value == "" {
		from, value = "AWL_SANDBOX", a.getenv("AWL_SANDBOX")
	}
	mode, err := sandbox.ParseMode(value)
	if err != nil {
		return nil, sandbox.Status{}, runner.Usagef(from + ": " + err.Error())
	}
	if mode == sandbox.Off && (len(c.SandboxWritable) > 0 || c.SandboxNetwork) {
		return nil, sandbox.Status{}, runner.Usagef("--sandbox-writable and --sandbox-network need --sandbox read-only or workspace-write (or AWL_SANDBOX)")
	}
	for _, d := range c.SandboxWritable {
		st, err := os.Stat(d)
		switch {
		case d == "":
			return nil, sandbox.Status{}, runner.Usagef("--sandbox-writable: the directory is empty")
		case err != nil:
			return nil, sandbox.Status{}, runner.Usagef(fmt.Sprintf("--sandbox-writable: %v", err))
		case !st.IsDir():
			return nil, sandbox.Status{}, runner.Usagef(fmt.Sprintf("--sandbox-writable: %s is not a directory", d))
		}
	}
	writable := make([]string, len(c.SandboxWritable))
	for i, d := range c.SandboxWritable {
		writable[i], _ = filepath.Abs(d)
	}
	sb, st, err := sandbox.New(sandbox.Options{
		Mode:       mode,
		Network:    c.SandboxNetwork,
		Cwd:        cwd,
		Writable:   writable,
		BestEffort: c.SandboxBestEffort,
		ABI:        assumeABI,
	})
	if err != nil {
		return nil, st, err
	}
	if st.Warning != "" {
		fmt.Fprintf(a.stderr, "awl: warning: %s\n", st.Warning)
	}
	if w := sb.GitWarning(); w != "" {
		fmt.Fprintf(a.stderr, "awl: warning: %s\n", w)
	}
	if w := sb.NamespaceWarning(); w != "" {
		fmt.Fprintf(a.stderr, "awl: warning: %s\n", w)
	}
	if w := sb.ProcessWarning(); w != "" {
		fmt.Fprintf(a.stderr, "awl: warning: %s\n", w)
	}
	if sb != nil {
		for _, d := range sb.WritableDirs() {
			if d == sb.TmpDir {
				continue
			}
			if w := broadWrite(d, a.getenv("HOME")); w != "" {
				fmt.Fprintf(a.stderr, "awl: warning: --sandbox %s: tools may write anywhere under %s, %s\n", mode, d, w)
			}
		}
	}
	return sb, st, nil
}

// broadWrite says what a sandbox that lets tools write dir fails to
// protect, when dir is the root or holds the home directory: "" when it
// is narrower.
func broadWrite(dir, home string) string {
	dir = filepath.Clean(dir)
	switch {
	case dir == "/":
		return "which is the whole file system"
	case home != "" && filepath.IsAbs(home) && (filepath.Clean(home) == dir || strings.HasPrefix(filepath.Clean(home), dir+"/")):
		return "which holds the home directory " + filepath.Clean(home) + " (~/.bashrc, ~/.ssh)"
	}
	return ""
}

// assumeABI, when not 0, replaces the kernel's Landlock ABI version (tests;
// negative means none).
var assumeABI int

// confiner returns sb as the tools' confinement; nil when the sandbox is
// off (a nil *Sandbox in an interface would not be nil).
func confiner(sb *sandbox.Sandbox) tool.Confiner {
	if sb == nil {
		return nil
	}
	return sb
}

// toolPolicy builds the tool policy of --tools, --deny-tools and
// --no-tools. A rule that names no built-in tool is a usage error, unless
// it is a glob or an MCP tool's name: an MCP server may be down.
func (c *runCmd) toolPolicy(cwd string, builtins []tool.Tool, allow, deny []string) (*policy.Policy, error) {
	names := make([]string, len(builtins))
	for i, t := range builtins {
		names[i] = t.Name()
	}
	p, err := policy.New(policy.Options{
		Allow: allow, Deny: deny, NoTools: c.NoTools, Dir: cwd,
		Known: func(n string) bool { return slices.Contains(names, n) }, Builtins: names,
	})
	if err != nil {
		return nil, runner.Usagef(err.Error())
	}
	return p, nil
}

// ruleLists returns the rules of --tools and --deny-tools (or their
// configuration keys) the run judges calls by. A replay that gives none
// takes those the recording's step ran under, and says so on stderr, so
// that a call the recording's rules denied is denied again rather than
// run for real; one that gives rules other than the recording's keeps
// its own and says on stderr that they differ: a call they judge
// otherwise diverges from the recording there.
func (c *runCmd) ruleLists(a *app) (allow, deny []string) {
	allow, deny = c.Tools, c.DenyTools
	rec := c.recordedRules
	if rec == nil {
		return allow, deny
	}
	if allow == nil && deny == nil && !c.NoTools {
		fmt.Fprintf(a.stderr, "awl: replay: calls are judged by the recording's rules: %s\n", describeRules(rec))
		return rec.Allow, rec.Deny
	}
	if !slices.Equal(ruleList(allow), rec.Allow) || !slices.Equal(ruleList(deny), rec.Deny) {
		fmt.Fprintf(a.stderr, "awl: replay: the rules differ from the recording's (%s): a call they judge otherwise diverges from the recording\n", describeRules(rec))
	}
	return allow, deny
}

// describeRules writes recorded rules as the flags that give them.
func describeRules(r *session.RunRules) string {
	var parts []string
	if len(r.Allow) > 0 {
		parts = append(parts, fmt.Sprintf("--tools %q", strings.Join(r.Allow, ",")))
	}
	if len(r.Deny) > 0 {
		parts = append(parts, fmt.Sprintf("--deny-tools %q", strings.Join(r.Deny, ",")))
	}
	return strings.Join(parts, " ")
}

// hooks are the --tool-hook commands, run in the run's directory with the
// tools' environment (secrets removed), outside the sandbox.
func (c *runCmd) hooks(st *runSetup) []policy.Hook {
	var out []policy.Hook
	for _, cmd := range c.ToolHook {
		out = append(out, policy.Hook{Cmd: cmd, Timeout: c.ToolHookTimeout, Env: st.toolEnv.Environ, Dir: st.cwd})
	}
	return out
}

// recordedHooks returns, for a replay, the hook decisions of the recording
// by call id: a replay applies them and never runs a hook. nil when prov
// is not a replay.
func recordedHooks(prov provider.Provider) map[string]*conv.HookRecord {
	rp, ok := prov.(*replay.Provider)
	if !ok || rp.Recording() == nil {
		return nil
	}
	out := map[string]*conv.HookRecord{}
	for _, e := range rp.Recording().ActivePath() {
		if e.Message == nil {
			continue
		}
		for _, b := range e.Message.Content {
			if b.Type == conv.BlockToolResult && b.Hook != nil {
				out[b.ToolUseID] = b.Hook
			}
		}
	}
	return out
}

// recordedInterrupts is, in a replay, the results the recording's interrupt
// messages gave tool calls, for the run to re-enact.
func recordedInterrupts(prov provider.Provider) map[string]conv.Block {
	if rp, ok := prov.(*replay.Provider); ok {
		return rp.Interrupts()
	}
	return nil
}

// selectTools returns the tools the policy offers, of all (the built-ins
// and the MCP servers' tools), and the names of all.
func selectTools(p *policy.Policy, all []tool.Tool) (offered []tool.Tool, known []string) {
	for _, t := range all {
		known = append(known, t.Name())
		if p.Offers(t.Name()) {
			offered = append(offered, t)
		}
	}
	return offered, known
}

// deniesUnoffered reports whether a call to a tool the run does not offer
// is a denial of the policy: the runner asks it about names it does not
// know, such as the tools of a server not started because the policy
// denies them all.
func deniesUnoffered(p *policy.Policy, servers []mcp.Server) func(name string) bool {
	return func(name string) bool {
		ofServer := slices.ContainsFunc(servers, func(s mcp.Server) bool {
			return strings.HasPrefix(name, mcp.Prefix+s.Name+"__")
		})
		return p.DeniesUnoffered(name, ofServer)
	}
}

// ruleList is the rules of a list flag's values, split on the commas
// outside parentheses.
func ruleList(values []string) []string {
	var out []string
	for _, v := range values {
		out = append(out, policy.Split(v)...)
	}
	return out
}

func pathPtrs(ps []string) []*string {
	out := make([]*string, len(ps))
	for i := range ps {
		out[i] = &ps[i]
	}
	return out
}

// looksLikePath reports whether a session reference is a file path rather
// than an id or prefix.
func looksLikePath(ref string) bool {
	return strings.ContainsRune(ref, filepath.Separator) || strings.HasSuffix(ref, ".jsonl")
}

// modelOptions are the flags that choose and reach the model, which awl
// run and awl sessions compact share: each command's flags fill one.
type modelOptions struct {
	Provider, Model, BaseURL string
	// ProviderFrom names where Provider came from, for an error: "" for
	// --provider.
	ProviderFrom string
	MaxRetries   int
	StallTimeout time.Duration
}

func (c *runCmd) modelOptions() modelOptions {
	return modelOptions{Provider: c.Provider, ProviderFrom: c.origin("provider"), Model: c.Model, BaseURL: c.BaseURL, MaxRetries: c.MaxRetries, StallTimeout: c.StallTimeout}
}

// choose chooses the provider and model. Explicit settings (flags, then
// AWL_PROVIDER/AWL_MODEL) win; a resumed session otherwise continues with
// its active provider and model. from says where the name came from, for
// the error about an unknown one; name is "" when nothing chose one.
func (o modelOptions) choose(a *app, activeProvider, activeModel string) (name, from, model string) {
	name = cmp.Or(o.Provider, a.getenv("AWL_PROVIDER"))
	from = cmp.Or(o.ProviderFrom, "--provider")
	if o.Provider == "" {
		from = "AWL_PROVIDER"
	}
	model = cmp.Or(o.Model, a.getenv("AWL_MODEL"))
	if name == "" && activeProvider != "" && !recorded(activeProvider) {
		name, from = activeProvider, "the resumed session's provider"
		if model == "" {
			model = activeModel
		}
	}
	return name, from, model
}

// resolve chooses the provider and model and makes the provider (no
// replay).
func (o modelOptions) resolve(a *app, activeProvider, activeModel string) (provider.Provider, string, error) {
	name, from, model := o.choose(a, activeProvider, activeModel)
	spec, model, err := o.pick(a, name, from, model)
	if err != nil {
		return nil, "", err
	}
	p, err := o.open(a, spec, model)
	return p, model, err
}

// pick settles the provider name (from choose) stands for and its model:
// with no name, the first automatic provider whose API key is set; with
// no model, the provider's default. It reads no credential of a provider
// named, and obtains none.
func (o modelOptions) pick(a *app, name, from, model string) (provider.Spec, string, error) {
	if name == "" {
		for _, s := range provider.Specs() {
			if !s.Auto {
				continue
			}
			key, err := providerKey(a, s)
			if err != nil {
				return provider.Spec{}, "", err
			}
			if key != "" {
				name = s.Name
				break
			}
		}
		if name == "" {
			return provider.Spec{}, "", &provider.Error{Kind: provider.KindConfig, Message: "no provider configured: set " + orList(provider.AutoKeyVars()) + ", or choose one with --provider (env AWL_PROVIDER): " + providerNames()}
		}
	}
	spec, ok := provider.Lookup(name)
	if !ok {
		return provider.Spec{}, "", runner.Usagef(fmt.Sprintf("%s: unknown provider %q (%s)", from, name, providerNames()))
	}
	return spec, cmp.Or(model, spec.DefaultModel), nil
}

// open makes the provider of spec (from pick): its API key, or a cloud's
// credentials, obtained here.
func (o modelOptions) open(a *app, spec provider.Spec, model string) (provider.Provider, error) {
	baseURL := cmp.Or(o.BaseURL, a.getenv(spec.BaseURLVar))
	key, err := providerKey(a, spec)
	if err != nil {
		return nil, err
	}
	if key == "" && spec.KeyRequired && !(spec.KeylessWithBaseURL && baseURL != "") {
		msg := spec.KeyVar + " is not set"
		if spec.KeylessWithBaseURL {
			msg += " (a compatible server at --base-url or " + spec.BaseURLVar + " may run without one)"
		}
		return nil, &provider.Error{Kind: provider.KindConfig, Provider: spec.Name, Message: msg}
	}
	return provider.New(spec.Name, provider.Options{APIKey: key, BaseURL: baseURL, MaxRetries: o.MaxRetries, StallBudget: o.StallTimeout, Getenv: a.getenv,
		OnSecret: func(s provider.Secret) { a.secrets.add(s.Name, s.Value) }})
}

// providerNames lists what --provider accepts, for help and errors.
func providerNames() string {
	return strings.Join(provider.Names(), ", ")
}

// orList joins items as "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// providerHelp is what the run flags' help says of the providers, read
// from the provider registry: fillHelp puts each value where its @name@ is.
func providerHelp() map[string]string {
	var models, urls []string
	for _, s := range provider.Specs() {
		if s.Recorded {
			continue // no model of its own, no base URL
		}
		models = append(models, s.Name+": "+s.DefaultModel)
		if !slices.Contains(urls, s.BaseURLVar) {
			urls = append(urls, s.BaseURLVar)
		}
	}
	return map[string]string{
		"provider_names": orList(provider.Names()),
		"auto_key_vars":  orList(provider.AutoKeyVars()),
		"default_models": strings.Join(models, "; "),
		"base_url_vars":  orList(urls),
	}
}

// readPrompt assembles the prompt from arguments, -p, -f and stdin.
// A replay run reads stdin only with --stdin: its prompts come from the
// recording.
func (c *runCmd) readPrompt(ctx context.Context, a *app, replay bool) (string, string, error) {
	var parts []string
	if len(c.Args) > 0 {
		parts = append(parts, strings.Join(c.Args, " "))
	}
	if c.Prompt != "" {
		parts = append(parts, c.Prompt)
	}
	fromStdin := c.PromptFile == "-"
	if c.PromptFile != "" && !fromStdin {
		b, err := os.ReadFile(c.PromptFile)
		if err != nil {
			return "", "", runner.Usagef(fmt.Sprintf("--prompt-file: %v", err))
		}
		parts = append(parts, string(b))
	}
	text := strings.Join(parts, "\n\n")
	haveArgs := strings.TrimSpace(text) != ""
	if fromStdin {
		// -f - reads the prompt from stdin, waiting as long as it takes.
		if c.NoStdin {
			return "", "", runner.Usagef("-f - reads stdin, which --no-stdin forbids")
		}
		w := wrap{prefix: text}
		if haveArgs {
			w.prefix += "\n\n"
		}
		data, state, err := readStdin(ctx, a.stdin, 0, w)
		if err != nil {
			return "", "", err
		}
		if state == "empty" {
			return text, state, nil
		}
		return data, state, nil
	}

	if c.NoStdin || (replay && !c.Stdin) {
		return text, "off", nil
	}
	if f, ok := a.stdin.(*os.File); ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())) {
		return text, "terminal", nil
	}
	if a.stdin == nil {
		return text, "off", nil
	}
	wait := c.StdinTimeout
	if c.Stdin || !haveArgs {
		wait = 0 // wait as long as it takes
	}
	var w wrap
	if haveArgs {
		w = wrap{prefix: text + "\n\n<stdin>\n", suffix: "\n</stdin>", trim: true}
	}
	data, state, err := readStdin(ctx, a.stdin, wait, w)
	if err != nil {
		return "", "", err
	}
	if data == "" {
		return text, state, nil
	}
	return data, state, nil
}

// wrap is what readStdin puts around what it read, in the one buffer it
// reads into: a 50 MB input is then not copied again to be joined with the
// arguments. trim drops the input's trailing newlines before the suffix.
type wrap struct {
	prefix, suffix string
	trim           bool
}

// readStdin reads all of r and returns it within w. With wait > 0 it gives
// up if the first byte has not arrived by then (an inherited pipe that never
// sends anything), and returns state "timeout"; once a byte arrives it reads
// to EOF. An empty input is "" with state "empty", whatever w. ctx (the
// run's --timeout, a signal) interrupts it at any point.
func readStdin(ctx context.Context, r io.Reader, wait time.Duration, w wrap) (string, string, error) {
	type result struct {
		b   []byte
		err error
	}
	br := bufio.NewReaderSize(r, 64<<10)
	first := make(chan error, 1)
	all := make(chan result, 1)
	go func() {
		_, err := br.Peek(1)
		first <- err
		if err != nil {
			return
		}
		b, err := readAllExact(br, r, w.prefix, len(w.suffix))
		all <- result{b, err}
	}()
	var timer <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timer = t.C
	}
	select {
	case err := <-first:
		if err == io.EOF {
			return "", "empty", nil
		}
		if err != nil {
			return "", "", fmt.Errorf("read stdin: %w", err)
		}
	case <-timer:
		return "", "timeout", nil
	case <-ctx.Done():
		return "", "", context.Cause(ctx)
	}
	select {
	case res := <-all:
		if res.err != nil {
			return "", "", fmt.Errorf("read stdin: %w", res.err)
		}
		b := res.b
		if len(b) == len(w.prefix) {
			return "", "empty", nil
		}
		if w.trim {
			for len(b) > len(w.prefix) && b[len(b)-1] == '\n' {
				b = b[:len(b)-1]
			}
		}
		b = append(b, w.suffix...) // within the capacity reserved
		// The bytes are never touched again: the string shares them
		// instead of copying a prompt that may be 50 MB.
		return unsafe.String(unsafe.SliceData(b), len(b)), "read", nil
	case <-ctx.Done():
		return "", "", context.Cause(ctx)
	}
}

// readAllExact reads br to EOF into one slice that starts with prefix and
// has room for room more bytes after what it read, and no more: a 50 MB
// input is held once. From a regular file the size is known up front; from
// a pipe it reads chunks, growing, and joins them at the end. r is br's
// source, for the file case.
func readAllExact(br *bufio.Reader, r io.Reader, prefix string, room int) ([]byte, error) {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			if off, err := f.Seek(0, io.SeekCurrent); err == nil && fi.Size() >= off {
				b := make([]byte, 0, len(prefix)+int(fi.Size()-off)+br.Buffered()+room+1)
				b = append(b, prefix...)
				for {
					if cap(b)-len(b) <= room {
						b = append(b[:cap(b)], 0)[:len(b)] // the file grew while read
					}
					n, err := br.Read(b[len(b) : cap(b)-room])
					b = b[:len(b)+n]
					if err == io.EOF {
						return b, nil
					}
					if err != nil {
						return b, err
					}
				}
			}
		}
	}
	var chunks [][]byte
	total, size := 0, 64<<10
	for {
		c := make([]byte, size)
		n, err := io.ReadFull(br, c)
		if n > 0 {
			chunks = append(chunks, c[:n])
			total += n
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
		size = min(2*size, 4<<20)
	}
	if len(chunks) == 1 && prefix == "" && room == 0 {
		return chunks[0], nil
	}
	b := make([]byte, 0, len(prefix)+total+room)
	b = append(b, prefix...)
	for _, c := range chunks {
		b = append(b, c...)
	}
	return b, nil
}

// writeStepSummary appends a short markdown summary of the run to
// $GITHUB_STEP_SUMMARY when it is set.
func writeStepSummary(a *app, res runner.Result, code int) {
	path := a.getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		return
	}
	f, err := os.OpenFile(filepath.Clean(path), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(a.stderr, "awl: GITHUB_STEP_SUMMARY:", err)
		return
	}
	defer f.Close()
	_, reason := runner.Classify(res.Err)
	var b strings.Builder
	fmt.Fprintf(&b, "### awl run: %s (exit %d)\n\n", reason, code)
	id := "none"
	if res.SessionID != "" {
		id = "`" + res.SessionID + "`"
	}
	fmt.Fprintf(&b, "| session | turns | input tokens | output tokens | cache read | cache write | tool calls | denied |\n|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d |\n\n", id, res.Turns, res.Usage.Input, res.Usage.Output, res.Usage.CacheRead, res.Usage.CacheWrite, res.ToolCalls, len(res.Denied))
	if res.Err != nil {
		fmt.Fprintf(&b, "**Error:** %s\n\n", oneline.Cut(res.Err.Error(), 300))
	}
	if res.Text != "" {
		lines := strings.Split(strings.TrimSpace(res.Text), "\n")
		if len(lines) > 10 {
			lines = append(lines[:10], "…")
		}
		b.WriteString("> " + strings.Join(lines, "\n> ") + "\n\n")
	}
	f.WriteString(b.String())
}

// gitChangeWarning warns of a change to what git trusts in the working
// directory (sandbox.GitChanges words it) made during the run, redacted:
// the change names a path, which a command may have named after a secret
// it read, and stderr is the CI job's log.
func gitChangeWarning(a *app, r *redact.Redactor, change string) {
	fmt.Fprintf(a.stderr, "awl: warning: %s during the run: git outside the sandbox (a later CI step) runs the hooks and settings a .git leads to; review it, or run git with -c core.hooksPath=/dev/null -c core.fsmonitor=false\n", r.String(change))
}
