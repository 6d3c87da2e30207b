// Package runner is awl's turn loop: it appends the prompt and its context to
// the session, projects the session into provider requests, runs the tools
// the model asks for, enforces limits, and reports everything as NDJSON
// events. It never parses flags and never formats for humans.
package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/internal/jsonstr"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/mcp"
	"github.com/awlrun/awl/runner/modelctx"
	"github.com/awlrun/awl/runner/modelinfo"
	"github.com/awlrun/awl/runner/policy"
	"github.com/awlrun/awl/runner/projection"
	"github.com/awlrun/awl/runner/redact"
	"github.com/awlrun/awl/runner/sandbox"
	"github.com/awlrun/awl/runner/tool"
	"github.com/awlrun/awl/session"
)

// Config is one run.
type Config struct {
	Store *session.Store
	// BeforeCreate, when set, is called before the run creates its new
	// session (or fork), the first thing it writes, after it has gathered
	// what the session starts with: cmd/awl waits there for its signal
	// handlers, which start on a thread of their own meanwhile.
	BeforeCreate func()
	Cwd          string
	// Resume is the session to continue, opened (and locked) by the
	// caller; Run takes it over and closes it. Nil starts a new session in
	// Store, created once the prompt is known to be there.
	Resume *session.Session
	// Fork, when set, is a session read with session.OpenShared (--fork):
	// the run starts a new session with a copy of its active path. Run
	// closes it once the copy is made, and never writes it.
	Fork *session.Session
	// SessionID, when set, is the id of the new session (--session-id).
	SessionID string

	Prompt string
	Images []conv.Attachment
	// Script, when set, replaces Prompt and Images with several user turns
	// run one after the other in the same session (replay uses it).
	Script []conv.Message

	Provider provider.Provider
	Model    string

	// Tools are the tools offered to the model, in order. Known lists the
	// names of every tool awl has, so a call to a known but disallowed tool
	// is reported as denied.
	Tools []tool.Tool
	Known []string
	// Denies, when set, reports whether the tool policy denies a call to
	// a name not in Known: a tool of an MCP server that was not started
	// because the policy denies all its tools is a denial too.
	Denies func(name string) bool
	// Policy, when set, judges each call to an offered tool before it
	// runs (its command, the path it names); a denied call gets an error
	// result naming the rule and the reason, and is reported as denied.
	Policy *policy.Policy
	// FailOnDeny ends a run that would have completed with exit 9
	// (DeniedError) when the policy denied any of its calls.
	FailOnDeny bool
	// Hooks are the pre-tool hooks (--tool-hook), run in order before
	// each call the policy allows (policy.RunHooks).
	Hooks []policy.Hook
	// RecordedHooks, when not nil, replaces Hooks in a replay: the hook
	// decisions of the recording, by call id, applied without running a
	// hook; a call with none is allowed.
	RecordedHooks map[string]*conv.HookRecord
	// RecordedInterrupts, in a replay, are the results the recording's
	// interrupt messages gave tool calls (conv.Block.Interrupted), by call
	// id: such a call is not run; its recorded result is appended and
	// the turn ends as an interrupted one.
	RecordedInterrupts map[string]conv.Block
	// MCP is how the MCP servers' start went (reported on the session
	// event and shown to the model); their tools are in Tools.
	MCP []mcp.Status

	// Window keeps requests inside the model's context window: pruning,
	// then compaction (window.go, stubresults.go, compact.go).
	Window Window
	// CacheTTL is --cache-ttl: "" or "5m" the API's default, "1h"
	// Anthropic's extended TTL (its writes priced at the 1-hour price),
	// "24h" OpenAI's extended retention (provider.ExtendedCache).
	CacheTTL string
	// ServiceTier is --service-tier ("" none, "auto", "default", "flex",
	// "priority"); each request is priced at the tier the API reports.
	ServiceTier string

	// Sandbox, when set, confines the tools (the caller gave them it as
	// their tool.Env.Confine); the model is told its limits. SandboxStatus
	// is reported on the session event; its zero value means off.
	Sandbox       *sandbox.Sandbox
	SandboxStatus sandbox.Status

	MaxTurns        int // model requests; 0 = unlimited
	MaxOutputTokens int
	// MaxCostUSD and MaxTotalTokens stop the run before a request once
	// this run has spent that much; 0 = unlimited. Prices prices each
	// request (nil: every cost is unknown).
	MaxCostUSD     float64
	MaxTotalTokens int64
	Prices         *modelinfo.Table
	// Timeout is --timeout, recorded in the run entry; the deadline itself
	// is the context's.
	Timeout time.Duration
	// Version is awl's version, recorded in the run entry.
	Version string
	// ConfigFiles is the configuration files read, recorded in the run
	// entry; nil when none was.
	ConfigFiles *session.RunConfig
	Reasoning   string
	Stream      bool

	System, AppendSystem string
	NoEnv, NoAgentsMD    bool
	// Skills are the skills whose catalogue the model is shown.
	Skills []modelctx.Skill

	// OutputSchema is --output-schema; nil keeps the schema a resumed
	// session recorded, unless DropOutputSchema (--output-schema none).
	// SchemaRetries bounds the turns spent fixing an answer that fails it.
	OutputSchema     *OutputSchema
	DropOutputSchema bool
	SchemaRetries    int
	// Checks are --check commands, run after the model ends its turn;
	// CheckRetries bounds the turns spent fixing what they report.
	Checks       []string
	CheckRetries int
	// Gates judge each final answer after the output schema's gate, in
	// order (gate.go).
	Gates []Gate

	// Input, when set, is the channel of further user turns (awl run
	// --input ndjson): once the prompt's turn has run, each next prompt
	// is taken from it and run in the same session, until it ends.
	Input Input

	// StdinState is reported on the session event ("read", "empty",
	// "timeout", "terminal", "off", "ndjson").
	StdinState string

	// Start is when the run began, for the result's duration_ms: the
	// process start, so the wait for stdin counts. Zero means when Run
	// was called.
	Start time.Time

	// Redact replaces secret values in every entry before it is
	// appended, and so before it is echoed or sent; nil redacts nothing.
	Redact *redact.Redactor

	Events *event.Emitter
	// ToolEnviron and CheckEnviron, when set, give the variables
	// ("NAME=value") added to the environment of the process a tool call
	// (by its call id) or a check (by command and attempt) starts: the
	// TRACEPARENT naming its own span when tracing is on. They are called
	// after the call's tool_start or check_start event was emitted.
	ToolEnviron  func(callID string) []string
	CheckEnviron func(cmd string, attempt int) []string
	// Notes receives one-line human diagnostics (retries), typically
	// stderr; nil discards them.
	Notes  io.Writer
	Now    func() time.Time
	Getenv func(string) string
	// Environ is the environment --check commands run with, the tools'
	// own: awl's without its secret variables. Nil means the process's
	// own.
	Environ []string
}

// Input is a source of user turns read while the run goes on (awl run
// --input ndjson).
type Input interface {
	// Start is called once the session event is out, with the session's
	// id: what the input reports (its control and error events) names it
	// and follows that event.
	Start(sessionID string)
	// Next blocks until the next prompt, and returns ok false when the
	// input has ended (EOF, or an end message). An error ends the run.
	Next(ctx context.Context) (blocks []conv.Block, ok bool, err error)
	// Turn is called with a function that interrupts the turn starting
	// (an interrupt message calls it), and with nil once the turn ended.
	Turn(interrupt func())
	// Stop is called before the result event: the input emits nothing
	// after it, whatever it reads, so the result stays last.
	Stop()
}

// Result is what a run produced, whether it succeeded or not.
type Result struct {
	SessionID   string
	SessionPath string
	Text        string
	Turns       int
	Usage       conv.Usage
	// CostUSD is what this run's requests cost, nil when unknown.
	CostUSD   *float64
	ToolCalls int
	Denied    []event.Denial
	// Structured is the final answer parsed as JSON when an output schema
	// accepted it; Problems is what a gate still rejected (exit 7 or 8).
	Structured json.RawMessage
	Problems   []string
	// Checks is each --check command's last exit code and runs.
	Checks []event.CheckResult
	Err    error
}

// Run executes cfg to completion, emits the result event last, and returns
// the result. A failure is in Result.Err; Classify maps it to an exit code.
func Run(ctx context.Context, cfg Config) Result {
	return execute(ctx, cfg, (*run).do)
}

// execute runs body as the run cfg describes, then appends the run entry
// (when the run holds the session), emits the result event and returns
// the result.
func execute(ctx context.Context, cfg Config, body func(*run, context.Context) error) Result {
	start := cfg.Start
	if start.IsZero() {
		start = cfg.now()
	}
	r := &run{cfg: cfg, start: start, args: argChecker{}}
	if cfg.Redact != nil {
		// Every event's strings, not only the entries' (redacted before
		// they are stored): what a tool name or an error carries too.
		cfg.Events.SetRedact(cfg.Redact.JSON)
	}
	r.res.CostUSD = new(float64)
	err := body(r, ctx)
	if err == nil && cfg.FailOnDeny && len(r.res.Denied) > 0 {
		err = &DeniedError{Calls: len(r.res.Denied)}
	}
	// A run signalled (or timed out) while it was finishing anyway, say
	// blocked on a stdout nobody reads, ends as interrupted: its output
	// was cut short, and the run entry says so with the exit code.
	if ctx.Err() != nil {
		if cause := context.Cause(ctx); cause != nil {
			err = cause
		} else if err == nil {
			err = ctx.Err()
		}
	}
	if r.sess != nil {
		if derr := r.sess.Durable(); derr != nil {
			// The new session could not be made durable: it does not
			// exist, nothing said it did, and the run ends as when it
			// could not be created.
			err = derr
			r.sess.Close()
			r.sess = nil
			r.res.SessionID, r.res.SessionPath = "", ""
		}
	}
	r.res.Err = cfg.Redact.Error(err)
	if cfg.Input != nil {
		cfg.Input.Stop()
	}
	if r.checks != nil {
		r.res.Checks = r.checks.results
	}
	d := cfg.now().Sub(start)
	r.finish(d)
	EmitResult(cfg.Events, r.res, d)
	return r.res
}

// EmitResult writes the result event for res.
func EmitResult(em *event.Emitter, res Result, d time.Duration) {
	code, reason := Classify(res.Err)
	ev := event.Result{
		Base:        em.Stamp("result", res.SessionID),
		ExitCode:    code,
		Reason:      reason,
		Text:        res.Text,
		Turns:       res.Turns,
		Usage:       event.Usage{Input: res.Usage.Input, Output: res.Usage.Output, CacheRead: res.Usage.CacheRead, CacheWrite: res.Usage.CacheWrite},
		CostUSD:     res.CostUSD,
		ToolCalls:   res.ToolCalls,
		Denied:      res.Denied,
		DurationMS:  d.Milliseconds(),
		SessionPath: res.SessionPath,
		Structured:  res.Structured,
		Problems:    res.Problems,
		Checks:      res.Checks,
	}
	if ev.Denied == nil {
		ev.Denied = []event.Denial{}
	}
	if share, ok := res.Usage.CacheReadShare(); ok {
		ev.CacheReadShare = &share
	}
	if res.Err != nil {
		ev.Error = res.Err.Error()
	}
	em.Emit(ev)
}

// sandboxStatus is SandboxStatus for the session event, with the zero
// value spelt out as off.
func (c Config) sandboxStatus() event.Sandbox {
	st := c.SandboxStatus
	if st.Mode == "" || st.Mode == sandbox.Off {
		st.Mode, st.Network, st.Enforced = sandbox.Off, true, sandbox.Enforced{}
	}
	return event.Sandbox{Mode: string(st.Mode), Network: st.Network, ABI: st.ABI, Enforced: event.Enforced(st.Enforced), Warning: st.Warning}
}

// confine is the tools' confinement, for commands awl runs itself (the
// checks); nil when the sandbox is off.
func (r *run) confine() tool.Confiner {
	if r.cfg.Sandbox == nil {
		return nil
	}
	return r.cfg.Sandbox
}

func (c Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

type run struct {
	cfg  Config
	sess *session.Session
	res  Result

	schema    *OutputSchema // in force for this run, nil for none
	nativeOff bool          // the server rejected native structured output
	gateList  []Gate
	gateTries []int // rejections so far, per gate, for the current prompt
	start     time.Time
	// The last turn's cost, tokens and duration measure "one more turn"
	// for the wrap-up notice, given once (noticed).
	lastCost   float64
	lastTokens int64
	lastTurn   time.Duration
	noticed    bool
	// unpriced says why the run's cost became unknown, for the budget's
	// stop; "" while it is known.
	unpriced string
	checks   *checkGate // nil without --check

	promptOpts modelctx.Options // the last context gathered, for compaction
	window     windowState      // how full the window is (window.go)
	deltas     *redact.Stream   // --stream text held back until no secret can begin in it
	// windowSeeded says window was seeded from the session's log.
	windowSeeded bool
	// summaryOff: the model would not summarise; threshold compaction
	// is off and pruning goes on alone (stubresults.go).
	summaryOff bool
	// args checks a call's arguments against its tool's own schema
	// where the schema sent was lowered (toolschema.go).
	args argChecker
	// limitSeeded says a context limit the session recorded was looked
	// for (window.go).
	limitSeeded bool
	// thinking is how the model takes --reasoning, once thinkingSeeded
	// (thinking.go).
	thinking       string
	thinkingSeeded bool
	// key is the prompt cache key, once taken (model.go).
	key string
}

func (r *run) do(ctx context.Context) error {
	cfg := r.cfg
	if err := r.checkStart(); err != nil {
		if cfg.Resume != nil {
			cfg.Resume.Close()
		}
		if cfg.Fork != nil {
			cfg.Fork.Close()
		}
		return err
	}
	names, unoffered := r.offerTools()
	cfg = r.cfg
	turns := r.turns()
	// The connection opens while the session is written and its fsyncs
	// wait: a request follows unless the run fails first.
	if w, ok := cfg.Provider.(provider.Warmer); ok {
		w.Warm()
	}
	var err error
	// first is the first prompt's entries, stored with a new session's
	// header (created); firstErr is why they could not be built.
	var first []session.Entry
	var created bool
	var firstErr error
	resumed := cfg.Resume != nil
	switch {
	case resumed:
		r.sess = cfg.Resume
	case cfg.Fork != nil:
		first, firstErr, err = r.createFork(names, turns[0].Content)
		created = true
	default:
		first, firstErr, err = r.createWithPrompt(names, turns[0].Content)
		created = true
	}
	if err != nil {
		return err
	}
	if r.sess.Memo == nil {
		// The requests take the long strings the run appends from their
		// session lines, escaped once (provider.Request.Memo).
		r.sess.Memo = &jsonstr.Memo{}
	}
	// Run closes the session after appending the run entry (finish).
	r.res.SessionID = r.sess.Header.ID
	r.res.SessionPath = r.sess.Path
	// A new session's first entries are still being made durable while
	// the first request is built and sent: the events that say they are
	// stored wait for that, and are written before any later event.
	deferred := created && firstErr == nil
	if deferred {
		cfg.Events.Hold()
	}
	r.emitSession(names, resumed)

	for _, w := range unoffered {
		r.notice(w)
	}
	if resumed {
		if err := r.closeDanglingToolCalls(false); err != nil {
			return err
		}
	}
	if !created {
		if err := r.setupGates(); err != nil {
			return err
		}
	}
	for i, t := range turns {
		switch {
		case i == 0 && created && firstErr != nil:
			r.echo(first)
			return firstErr
		case i == 0 && created:
			r.echo(first)
			if deferred {
				cfg.Events.Release(r.sess.Durable)
			}
		default:
			if err := r.appendPrompt(names, t.Content); err != nil {
				return err
			}
		}
		if err := r.turn(ctx); err != nil {
			return err
		}
	}
	return r.moreTurns(ctx, names)
}

// moreTurns runs each prompt the input gives (none without an input),
// one after the other, as a resumed run would: the context diff, the
// prompt and its baseline are appended (durable before the request), then
// the turn runs. The limits count over the whole run.
func (r *run) moreTurns(ctx context.Context, names []string) error {
	for r.cfg.Input != nil {
		blocks, ok, err := r.cfg.Input.Next(ctx)
		if err != nil || !ok {
			return err
		}
		if err := r.appendPrompt(names, blocks); err != nil {
			return err
		}
		if err := r.turn(ctx); err != nil {
			return err
		}
	}
	return nil
}

// errTurnInterrupted is the cause of a turn's context cancelled by an
// interrupt message.
var errTurnInterrupted = errors.New("the turn was interrupted (an interrupt message)")

// turn runs the loop for one prompt. With an input, a turn_end event
// says when a turn that does not end the run is over, and an interrupt message
// ends the turn as a signal ends a run: the request in flight is dropped,
// the tools running are stopped and their results appended, the calls left
// without one are closed as interrupted; then the run goes on. A limit the
// turn reached ends the run all the same.
//
// A replay re-enacts the recording's interrupts: the loop ends the turn
// where the recording's did (errTurnInterrupted), or the replayed model
// says the recorded request was interrupted (provider.ErrInterrupted).
func (r *run) turn(ctx context.Context) error {
	in := r.cfg.Input
	tctx, cancel := context.WithCancelCause(ctx)
	if in != nil {
		in.Turn(func() { cancel(errTurnInterrupted) })
	}
	err := r.loop(tctx)
	if in != nil {
		in.Turn(nil)
	}
	cancel(nil)
	var limit *LimitError
	interrupted := ctx.Err() == nil && !errors.As(err, &limit) &&
		(context.Cause(tctx) == errTurnInterrupted || errors.Is(err, errTurnInterrupted) || errors.Is(err, provider.ErrInterrupted))
	if interrupted {
		r.notice("the turn was interrupted by an interrupt message; the run goes on")
		err = r.closeDanglingToolCalls(true)
	}
	if in != nil && err == nil {
		te := event.TurnEnd{Text: r.res.Text, Interrupted: interrupted}
		if interrupted {
			te.Text = ""
		}
		te.Base = r.cfg.Events.Stamp("turn_end", r.res.SessionID)
		r.cfg.Events.Emit(te)
	}
	return err
}

// checkStart says why the run cannot start: no prompt, or no price for a
// cost limit.
func (r *run) checkStart() error {
	cfg := r.cfg
	if strings.Trim(cfg.Prompt, " \t\r\n\x00") == "" && len(cfg.Images) == 0 && len(cfg.Script) == 0 {
		return Usagef("no prompt: give one as arguments, with -p/--prompt, -f/--prompt-file, or on stdin")
	}
	return r.checkPriced()
}

// offerTools keeps the tools whose schemas can be sent, and returns their
// names and a warning for each one left out.
func (r *run) offerTools() (names, unoffered []string) {
	r.cfg.Tools, unoffered = offerable(r.cfg.Tools)
	names = make([]string, len(r.cfg.Tools))
	for i, t := range r.cfg.Tools {
		names[i] = t.Name()
	}
	return names, unoffered
}

// emitSession emits the session event, the first of the run's.
func (r *run) emitSession(names []string, resumed bool) {
	cfg := r.cfg
	cfg.Events.Emit(event.Session{
		Base:      cfg.Events.Stamp("session", r.sess.Header.ID),
		Schema:    event.SchemaVersion,
		Path:      r.sess.Path,
		Cwd:       cfg.Cwd,
		Provider:  cfg.Provider.Name(),
		Model:     cfg.Model,
		Resumed:   resumed,
		Fork:      forkOf(r.sess.Header),
		Stdin:     cfg.StdinState,
		Recovered: r.sess.Recovered,
		Tools:     names,
		Sandbox:   cfg.sandboxStatus(),
		MCP:       mcpEvents(cfg.MCP),
	})
	// What the input reports follows the session event and names it.
	if cfg.Input != nil {
		cfg.Input.Start(r.sess.Header.ID)
	}
}

// turns is what the run prompts the model with: the script, or the
// prompt and its images as one user message.
func (r *run) turns() []conv.Message {
	if len(r.cfg.Script) > 0 {
		return r.cfg.Script
	}
	var blocks []conv.Block
	if r.cfg.Prompt != "" {
		blocks = append(blocks, conv.TextBlock(r.cfg.Prompt))
	}
	for _, img := range r.cfg.Images {
		blocks = append(blocks, conv.Block{Type: conv.BlockImage, MimeType: img.MimeType, Data: img.Data})
	}
	return []conv.Message{{Role: conv.RoleUser, Content: blocks}}
}

// createWithPrompt creates the new session with the first prompt's
// entries (the context, the prompt, the baseline) written with its
// header: one fsync for both, where appending them after took one more.
// Nothing reads the session to build them (a new one holds nothing). It
// returns the entries as stored, to be echoed after the session event.
// When they cannot be built (gatherErr), the session is created without
// them and gatherErr is the run's once the session event is out, as when
// they were built after.
func (r *run) createWithPrompt(names []string, blocks []conv.Block) (stored []session.Entry, gatherErr, err error) {
	cfg := r.cfg
	o := session.CreateOptions{Cwd: cfg.Cwd, Provider: cfg.Provider.Name(), Model: cfg.Model, ID: cfg.SessionID,
		Memo: &jsonstr.Memo{}}
	var es []session.Entry
	gatherErr = r.setupGates()
	if gatherErr == nil {
		es, gatherErr = r.promptEntries(names, blocks, nil)
	}
	if gatherErr != nil {
		r.beforeCreate()
		r.sess, err = cfg.Store.CreateWith(o)
		return nil, gatherErr, err
	}
	for i := range es {
		es[i] = cfg.Redact.Entry(es[i])
	}
	o.DeferSync = true
	r.beforeCreate()
	r.sess, stored, err = cfg.Store.CreateAppending(o, es)
	return stored, nil, err
}

// createFork creates the fork of cfg.Fork with the entries its first
// prompt appends, as createWithPrompt does a new session: the copied
// history, the interrupted results of the calls its source left dangling
// (closed in the fork: the source is never written), the context, the
// prompt and the baseline are made durable by one fsync, which runs while
// the first request is built and sent. A fork of a large session spends
// most of its extra time over a resume in that fsync of the copy. When
// the prompt's entries cannot be built (gatherErr), the fork is created
// with the closed calls only, and gatherErr is the run's once the session
// event is out. cfg.Fork is closed once its lines are copied.
func (r *run) createFork(names []string, blocks []conv.Block) (stored []session.Entry, gatherErr, err error) {
	cfg := r.cfg
	defer cfg.Fork.Close()
	// The fork starts as its source's initial provider and model; its
	// copied user messages say which are active.
	o := session.CreateOptions{Cwd: cfg.Cwd, Provider: cfg.Fork.Header.Provider, Model: cfg.Fork.Header.Model,
		ID: cfg.SessionID, Fork: cfg.Fork, Memo: &jsonstr.Memo{}}
	path := cfg.Fork.ActivePath()
	var es []session.Entry
	if closed := danglingResults(path, false); len(closed) > 0 {
		es = append(es, r.userEntry(closed))
	}
	// The output schema a baseline of the source records is the fork's.
	r.sess = cfg.Fork
	gatherErr = r.setupGates()
	r.sess = nil
	if gatherErr == nil {
		var prompt []session.Entry
		if prompt, gatherErr = r.promptEntries(names, blocks, path); gatherErr == nil {
			es = append(es, prompt...)
			o.DeferSync = true
		}
	}
	for i := range es {
		es[i] = cfg.Redact.Entry(es[i])
	}
	r.beforeCreate()
	r.sess, stored, err = cfg.Store.CreateAppending(o, es)
	return stored, gatherErr, err
}

// beforeCreate calls Config.BeforeCreate, if set.
func (r *run) beforeCreate() {
	if r.cfg.BeforeCreate != nil {
		r.cfg.BeforeCreate()
	}
}

// forkOf is the origin a fork's header records; nil for another session.
func forkOf(h session.Header) *event.ForkOrigin {
	if h.ForkedFrom == "" {
		return nil
	}
	return &event.ForkOrigin{ID: h.ForkedFrom, EntryID: h.ForkedAt}
}

// appendEntry appends e and echoes it once it is durable.
func (r *run) appendEntry(e session.Entry) error {
	_, err := r.append(e)
	return err
}

// append is the one place entries are appended: secrets are redacted here,
// so the stored line, the echoed entry event and every request built from
// the session carry the same redacted bytes. It returns the stored entry.
func (r *run) append(e session.Entry) (session.Entry, error) {
	stored, err := r.sess.Append(r.cfg.Redact.Entry(e))
	if err != nil {
		return session.Entry{}, fmt.Errorf("append to session %s: %w", r.sess.Path, err)
	}
	r.cfg.Events.Emit(event.Entry{Base: r.cfg.Events.Stamp("entry", r.sess.Header.ID), Entry: event.EchoLine(stored.Line), Stored: true})
	return stored, nil
}

func (r *run) appendUser(blocks []conv.Block) error {
	return r.appendEntry(r.userEntry(blocks))
}

func (r *run) userEntry(blocks []conv.Block) session.Entry {
	return session.Entry{
		Type:     "message",
		Provider: r.cfg.Provider.Name(),
		Model:    r.cfg.Model,
		Message:  &conv.Message{Role: conv.RoleUser, Content: blocks},
	}
}

// appendAll appends entries that become durable together (one write, one
// fsync), redacted like every other, and echoes each once all are durable.
func (r *run) appendAll(es []session.Entry) error {
	for i := range es {
		es[i] = r.cfg.Redact.Entry(es[i])
	}
	stored, err := r.sess.AppendAll(es)
	if err != nil {
		return fmt.Errorf("append to session %s: %w", r.sess.Path, err)
	}
	r.echo(stored)
	return nil
}

// echo emits an entry event for each of stored, entries already durable.
func (r *run) echo(stored []session.Entry) {
	for _, e := range stored {
		r.cfg.Events.Emit(event.Entry{Base: r.cfg.Events.Stamp("entry", r.sess.Header.ID), Entry: event.EchoLine(e.Line), Stored: true})
	}
}

// closeDanglingToolCalls appends interrupted results for tool calls that a
// killed run left without results. They are never run again. byMessage
// says an interrupt message left them: their results are marked so.
func (r *run) closeDanglingToolCalls(byMessage bool) error {
	blocks := danglingResults(r.sess.ActivePath(), byMessage)
	if len(blocks) == 0 {
		return nil
	}
	return r.appendUser(blocks)
}

// danglingResults is the interrupted result of each tool call of path's
// last assistant message that no later entry of path answers; byMessage
// as for closeDanglingToolCalls.
func danglingResults(path []session.Entry, byMessage bool) []conv.Block {
	last := -1
	for i := len(path) - 1; i >= 0; i-- {
		if m := path[i].Message; m != nil && m.Role == conv.RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 {
		return nil
	}
	answered := map[string]bool{}
	for _, e := range path[last+1:] {
		if e.Message == nil {
			continue
		}
		for _, b := range e.Message.Content {
			if b.Type == conv.BlockToolResult {
				answered[b.ToolUseID] = true
			}
		}
	}
	var blocks []conv.Block
	for _, u := range path[last].Message.ToolUses() {
		if !answered[u.ID] {
			blocks = append(blocks, conv.Block{
				Type:      conv.BlockToolResult,
				ToolUseID: u.ID,
				Content:   "interrupted: the run stopped before this tool call finished; it was not run again",
				IsError:   true,
				// Interrupted: only when an interrupt message
				// left it (a replay re-enacts that); a killed
				// run's call is not re-enacted.
				Interrupted: byMessage,
			})
		}
	}
	return blocks
}

// appendPrompt appends the context diff, the user's prompt and the new
// context baseline.
func (r *run) appendPrompt(toolNames []string, blocks []conv.Block) error {
	es, err := r.promptEntries(toolNames, blocks, r.sess.ActivePath())
	if err != nil {
		return err
	}
	return r.appendAll(es)
}

// promptEntries gathers the context and returns the entries a prompt is
// appended with: the context diff against the last baseline on path, the
// user's prompt and the new baseline. They are written together, with one
// fsync: nothing is done with any of them until all are durable.
func (r *run) promptEntries(toolNames []string, blocks []conv.Block, path []session.Entry) ([]session.Entry, error) {
	cfg := r.cfg
	r.setContextOptions(toolNames)
	state, err := modelctx.Gather(r.promptOpts)
	if err != nil {
		return nil, fmt.Errorf("gather context: %w", err)
	}
	// A malformed baseline is treated as none: the full context is sent
	// again, which is always correct, only less economical.
	base, err := modelctx.LastBaseline(path)
	if err != nil {
		base = nil
	}
	var es []session.Entry
	for _, m := range modelctx.Build(state, base) {
		e := session.Entry{Type: "message", Message: &m}
		if m.Role == conv.RoleUser {
			e.Provider, e.Model = cfg.Provider.Name(), cfg.Model
		}
		es = append(es, e)
	}
	return append(es, r.userEntry(blocks), state.Baseline().Entry()), nil
}

// setContextOptions sets what the model-visible context is gathered from:
// the run's settings and the names of the tools it offers.
func (r *run) setContextOptions(toolNames []string) {
	cfg := r.cfg
	system := cfg.System
	if system == "" {
		system = modelctx.DefaultSystem
	}
	r.promptOpts = modelctx.Options{
		Cwd:          cfg.Cwd,
		Getenv:       cfg.Getenv,
		Now:          cfg.Now,
		System:       system,
		AppendSystem: cfg.AppendSystem,
		Tools:        toolNames,
		OutputSchema: r.schemaText(),
		Sandbox:      cfg.promptSandbox(),
		MCP:          mcpContext(cfg.MCP, toolNames),
		Skills:       cfg.Skills,
		NoEnv:        cfg.NoEnv,
		NoAgentsMD:   cfg.NoAgentsMD,
	}
	r.promptOpts.AllowRules, r.promptOpts.DenyRules = cfg.Policy.PatternRules()
}

// promptSandbox is what the model is told about the sandbox.
func (c Config) promptSandbox() modelctx.Sandbox {
	if c.Sandbox == nil {
		return modelctx.Sandbox{}
	}
	p := c.Sandbox.Policy
	return modelctx.Sandbox{Mode: string(p.Mode), Network: p.Network, Writable: p.Writable}
}

// toolSpec is what a request tells the model of t. An MCP tool's
// description and schema are its server's words, and a server may put
// in them what its configuration gave it (a database URL with its
// password in a description): they are redacted as every entry is, so no
// secret the run knows at its start reaches the model through them.
func toolSpec(t tool.Tool, r *redact.Redactor) provider.Tool {
	spec := provider.Tool{Name: t.Name(), Description: r.String(t.Description()), Schema: t.Schema()}
	if j := r.JSON(string(spec.Schema)); j != string(spec.Schema) {
		spec.Schema = json.RawMessage(j)
	}
	return spec
}

func (r *run) loop(ctx context.Context) error {
	cfg := r.cfg
	specs := make([]provider.Tool, len(cfg.Tools))
	byName := make(map[string]tool.Tool, len(cfg.Tools))
	for i, t := range cfg.Tools {
		specs[i] = toolSpec(t, cfg.Redact)
		byName[t.Name()] = t
	}
	r.gateTries = make([]int, len(r.gateList))
	for {
		if cfg.MaxTurns > 0 && r.res.Turns >= cfg.MaxTurns {
			return &LimitError{Reason: "max_turns", Msg: fmt.Sprintf("stopped after %d model request(s) (--max-turns %d)", r.res.Turns, cfg.MaxTurns)}
		}
		if err := r.budgetStop(); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.wrapUp(ctx); err != nil {
			return err
		}
		turnStart := r.cfg.now()
		// fit may compact first: a request that --max-turns does not
		// count, but whose cost and tokens the budgets do.
		msgs, marks, err := r.fit(ctx, specs)
		if err != nil {
			return err
		}
		r.res.Turns++
		req := provider.Request{
			Model:        cfg.Model,
			Messages:     msgs,
			StablePrefix: marks.Stable,
			SharedPrefix: marks.Shared,
			Tools:        specs,
			MaxTokens:    cfg.MaxOutputTokens,
			Reasoning:    cfg.Reasoning,
			Memo:         r.sess.Memo,
		}
		msg, err := r.stream(ctx, req)
		if err != nil && overflowed(err) && !cfg.Window.NoCompact {
			// The API says the prompt is too long: compact (or prune),
			// then send the shorter request once.
			if lerr := r.learnLimit(err); lerr != nil {
				return lerr
			}
			if ferr := r.fitOverflow(ctx, specs, r.estimate(msgs, specs)); ferr == errNotShorter {
				return err
			} else if ferr != nil {
				return ferr
			}
			req.Messages, marks = projection.ProjectPrefixes(r.sess.ActivePath())
			req.StablePrefix, req.SharedPrefix = marks.Stable, marks.Shared
			msg, err = r.stream(ctx, req)
		}
		if err != nil {
			return err
		}
		r.noteUsage(len(req.Messages), msg.Usage)
		msg.CostUSD = r.priceOf(msg)
		r.account(msg)
		stored, err := r.append(session.Entry{Type: "message", Message: &msg})
		if err != nil {
			return err
		}
		// What is stored (secrets redacted) is what runs and is reported.
		msg = *stored.Message
		if t := msg.Text(); t != "" || msg.StopReason != conv.StopToolUse {
			r.res.Text = t
		}
		uses := msg.ToolUses()
		switch {
		case msg.StopReason == conv.StopLength:
			return &LimitError{Reason: "max_output_tokens", Msg: "the model reached its output token limit (--max-output-tokens)"}
		case msg.StopReason == conv.StopError:
			return &provider.Error{Kind: provider.KindRequest, Provider: cfg.Provider.Name(), Message: "the model ended its response with an error"}
		case len(uses) == 0:
			if again, err := r.gates(ctx, msg); !again {
				return err
			}
			continue
		}
		results := r.runTools(ctx, uses, byName)
		if err := r.appendUser(results); err != nil {
			return err
		}
		if slices.ContainsFunc(results, func(b conv.Block) bool { return b.Interrupted }) && r.cfg.RecordedInterrupts != nil {
			// A replay ends the turn where the recording's interrupt did.
			return errTurnInterrupted
		}
		r.measureTurn(msg, r.cfg.now().Sub(turnStart))
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// emitDelta emits a streamed piece of text (--stream), its secrets
// redacted: the end that could begin a secret waits for the next piece,
// or for flushDeltas when the response ends.
func (r *run) emitDelta(kind string, index int, text string) {
	if !r.cfg.Stream {
		return
	}
	if r.deltas == nil {
		r.deltas = redact.NewStream(r.cfg.Redact)
	}
	if text = r.deltas.Text(kind, index, text); text != "" {
		em := r.cfg.Events
		em.Emit(event.Delta{Base: em.Stamp(kind, r.res.SessionID), Index: index, Text: text})
	}
}

func (r *run) refuse(u conv.Block) conv.Block {
	allowed := make([]string, len(r.cfg.Tools))
	for i, t := range r.cfg.Tools {
		allowed[i] = t.Name()
	}
	list := strings.Join(allowed, ", ")
	if list == "" {
		list = "none"
	}
	msg := fmt.Sprintf("unknown tool %q (available tools: %s)", u.Name, list)
	if r.denied(u.Name) {
		msg = fmt.Sprintf("tool %q is not allowed in this run (allowed tools: %s)", u.Name, list)
		r.res.Denied = append(r.res.Denied, event.Denial{Name: u.Name, CallID: u.ID, Reason: "the tool is not allowed in this run"})
	}
	return conv.Block{Type: conv.BlockToolResult, ToolUseID: u.ID, Content: msg, IsError: true}
}

// deny is the result of a call the policy denied, d saying by which rule
// and why; the denial is reported (tool_denied) and kept for the result.
func (r *run) deny(u conv.Block, d *policy.Denial) conv.Block {
	msg := d.Error() + "\nThe run's tool policy refuses this call; do not retry it unchanged."
	r.res.Denied = append(r.res.Denied, event.Denial{Name: u.Name, CallID: u.ID, Rule: d.Rule, Hook: d.Hook, Reason: d.Reason})
	em := r.cfg.Events
	em.Emit(event.ToolDenied{Base: em.Stamp("tool_denied", r.res.SessionID), Name: u.Name, CallID: u.ID, Rule: d.Rule, Hook: d.Hook, Reason: d.Reason})
	return conv.Block{Type: conv.BlockToolResult, ToolUseID: u.ID, Content: msg, IsError: true}
}

// denied reports whether a call to name, which is not offered, is a
// denial of the tool policy rather than a call to an unknown tool.
func (r *run) denied(name string) bool {
	return slices.Contains(r.cfg.Known, name) || (r.cfg.Denies != nil && r.cfg.Denies(name))
}

func mustJSONString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
