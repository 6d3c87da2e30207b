package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/modelinfo"
	"github.com/awlrun/awl/runner/projection"
	"github.com/awlrun/awl/runner/prompt"
	"github.com/awlrun/awl/session"
)

// Window is how a run keeps its requests inside the model's context window.
type Window struct {
	// Tokens is the context window; 0 means unknown, which turns pruning
	// and threshold compaction off (a "prompt is too long" answer still
	// compacts).
	Tokens int64
	// PruneAt and CompactAt are the thresholds, in percent of Tokens;
	// 0 means the defaults, 60 and 80.
	PruneAt, CompactAt int
	// NoCompact turns compaction off, on threshold and on overflow.
	NoCompact bool
}

func (w Window) pruneAt() int64 {
	if w.PruneAt > 0 {
		return int64(w.PruneAt)
	}
	return 60
}

func (w Window) compactAt() int64 {
	if w.CompactAt > 0 {
		return int64(w.CompactAt)
	}
	return 80
}

// over reports whether tokens reach pct percent of the window. It counts
// in floating point: a window near the top of int64 must not wrap.
func (w Window) over(tokens, pct int64) bool {
	return w.Tokens > 0 && float64(tokens)*100 >= float64(pct)*float64(w.Tokens)
}

// CompactInstruction is the fixed request awl appends, for one request
// only, to have the model summarise the conversation.
const CompactInstruction = `Stop here and write a summary of this conversation so far, for your own later use: the earlier messages will be replaced by it, and the work will go on from it. Call no tools. Write plain text with these headings:

1. Task: what the user asked for, in their words where they matter.
2. Decisions: what was decided and why, and approaches that were tried and failed.
3. Files: each file created, changed or read that matters, with what changed.
4. State: what is done, and what is left, as a list of next steps.
5. Must not be lost: exact names, values, commands, error messages, constraints and preferences the user stated.`

// keepShare is the most of the window that the messages kept whole after
// a compaction may take, in percent.
const keepShare = 20

// windowState tracks how full the window is: the usage of the last
// response (which covers every message of its request and itself) and how
// many projected messages that covers.
type windowState struct {
	tokens  int64
	covered int
}

// estimate is the tokens a request of msgs and specs takes: the last
// response's usage for the messages it covered (and the tools), and bytes
// for the rest. Before the first response of this run, and after a
// boundary, it is bytes alone, the tool definitions' included.
//
// A usage under a third of what the bytes say is not a real count (some
// compatible servers report zeros, or fixed figures) and is not used.
func (r *run) estimate(msgs []conv.Message, specs []provider.Tool) int64 {
	w := r.window
	if w.covered > 0 && w.covered <= len(msgs) {
		if w.tokens*3 >= projection.Estimate(msgs[:w.covered])+specTokens(specs) {
			return w.tokens + projection.Estimate(msgs[w.covered:])
		}
	}
	return projection.Estimate(msgs) + specTokens(specs)
}

// specTokens estimates the tokens the tool definitions take in a request.
func specTokens(specs []provider.Tool) int64 {
	var n int
	for _, s := range specs {
		n += len(s.Name) + len(s.Description) + len(s.Schema) + 16
	}
	return int64(float64(n) / projection.BytesPerToken)
}

// pruneGain is the least a prune must free, in percent of the window, to
// be written: each prune changes the request from its boundary on, so
// the provider's cache of what follows is lost, and a prune that frees
// little would come again a turn later.
const pruneGain = 20

// seedWindow is the window state the session's own log gives: the usage
// recorded with its last model response, when no prune or compaction came
// after it and the response came from provider and model (another model
// counts tokens otherwise). A resumed run so estimates as the run that
// wrote the session would have for its next request, rather than from
// bytes alone.
//
// msgs is projection.Project(path): the messages the response's request
// covered are those before the message entries that follow it.
func seedWindow(path []session.Entry, msgs []conv.Message, provider, model string, table *modelinfo.Table) windowState {
	after := 0
	for i := len(path) - 1; i >= 0; i-- {
		e := path[i]
		switch {
		case e.Type == session.TypePrune || e.Type == session.TypeCompaction:
			return windowState{}
		case e.Message != nil && e.Message.Role == conv.RoleAssistant:
			u := e.Message.Usage
			if p, m := sentTo(path[:i]); u == nil || !sameModel(table, p, m, provider, model) {
				return windowState{}
			}
			return windowState{tokens: u.Input + u.CacheRead + u.CacheWrite + u.Output, covered: len(msgs) - after}
		case e.Type == session.TypeMessage && e.Message != nil:
			after++
		}
	}
	return windowState{}
}

// sameModel reports whether provider p's model m counts tokens as
// provider's model does: the same names, or names the model table takes
// for one model (an alias, a dated snapshot) in one price family.
func sameModel(table *modelinfo.Table, p, m, provider, model string) bool {
	if p == provider && m == model {
		return true
	}
	if modelinfo.Family(p) != modelinfo.Family(provider) {
		return false
	}
	a, ok := table.Lookup(p, m)
	b, ok2 := table.Lookup(provider, model)
	return ok && ok2 && a.Provider == b.Provider && a.Name == b.Name
}

// sentTo is where the request answered after path was sent: the provider
// and model of the last user message that records them. An assistant
// message names none at the entry's level, and the model it names inside
// may be the API's dated name for the one requested.
func sentTo(path []session.Entry) (provider, model string) {
	for i := len(path) - 1; i >= 0; i-- {
		e := path[i]
		if e.Message != nil && e.Message.Role == conv.RoleUser && (e.Provider != "" || e.Model != "") {
			return e.Provider, e.Model
		}
	}
	return "", ""
}

// noteUsage records a response's usage for estimate.
func (r *run) noteUsage(reqMsgs int, u *conv.Usage) {
	if u == nil {
		r.window = windowState{}
		return
	}
	r.window = windowState{tokens: u.Input + u.CacheRead + u.CacheWrite + u.Output, covered: reqMsgs + 1}
}

// fit projects the session for the next request, pruning and then
// compacting first when the request would pass a threshold.
func (r *run) fit(ctx context.Context, specs []provider.Tool) ([]conv.Message, error) {
	path := r.sess.ActivePath()
	if !r.limitSeeded {
		r.limitSeeded = true
		if lim := learnedLimit(path, r.cfg.Provider.Name(), r.cfg.Model, r.cfg.Prices); lim > 0 && (r.cfg.Window.Tokens <= 0 || lim < r.cfg.Window.Tokens) {
			r.cfg.Window.Tokens = lim
		}
	}
	w := r.cfg.Window
	msgs := projection.Project(path)
	if w.Tokens <= 0 {
		return msgs, nil
	}
	if !r.windowSeeded {
		r.window, r.windowSeeded = seedWindow(path, msgs, r.cfg.Provider.Name(), r.cfg.Model, r.cfg.Prices), true
	}
	est := r.estimate(msgs, specs)
	if w.over(est, w.pruneAt()) {
		// Without summaries, a request at the compaction threshold is
		// pruned whatever the prune frees.
		pruned, err := r.prune(est, specTokens(specs), keepTurns, r.summaryOff && w.over(est, w.compactAt()))
		if err != nil {
			return nil, err
		}
		if pruned {
			msgs = projection.Project(r.sess.ActivePath())
			est = projection.Estimate(msgs) + specTokens(specs)
		}
	}
	if !w.NoCompact && !r.summaryOff && w.over(est, w.compactAt()) && turnSinceCompaction(r.sess.ActivePath()) {
		if err := r.compact(ctx, specs, est, "threshold"); err != nil {
			ns, ok := errors.AsType[*errNoSummary](err)
			if !ok {
				return nil, err
			}
			if _, err := r.pruneAlone(ns, est, specTokens(specs), keepTurns); err != nil {
				return nil, err
			}
		}
		// The summary request was paid for: a budget it used up stops
		// the run before the request it was made for.
		if err := r.budgetStop(); err != nil {
			return nil, err
		}
		msgs = projection.Project(r.sess.ActivePath())
	}
	return msgs, nil
}

// turnSinceCompaction reports whether path holds an assistant message
// after its latest compaction (or at all, without one). Without one there
// is no work to summarise: the context and the prompt alone pass the
// threshold, and a summary would only stand in for the prompt.
func turnSinceCompaction(path []session.Entry) bool {
	for i := len(path) - 1; i >= 0; i-- {
		switch e := path[i]; {
		case projection.InForce(path, i):
			return false
		case e.Message != nil && e.Message.Role == conv.RoleAssistant:
			return true
		}
	}
	return false
}

// keepTurns is how many of the latest assistant turns keep their tool
// results whole when older ones are pruned.
const keepTurns = 2

// TypeContextLimit is the entry type that records a context limit a
// server stated when it refused a request as too long.
const TypeContextLimit = "contextLimit"

// contextLimitFields are the members of a contextLimit entry.
type contextLimitFields struct {
	Tokens   int64  `json:"tokens"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Stated says the refusal stated the limit; false when it named none
	// and the limit is the last request the server took.
	Stated bool `json:"stated"`
}

// learnedLimit is the latest limit a contextLimit entry on path records
// for provider's model (or a name the model table takes for it), 0 for
// none.
func learnedLimit(path []session.Entry, provider, model string, table *modelinfo.Table) int64 {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type != TypeContextLimit {
			continue
		}
		var f contextLimitFields
		if json.Unmarshal(path[i].Fields, &f) == nil && f.Tokens > 0 && sameModel(table, f.Provider, f.Model, provider, model) {
			return f.Tokens
		}
	}
	return 0
}

// learnLimit takes the limit a refusal as too long states (or, when it
// states none, the size of the last request the server took) as the
// window, when it is smaller than the window in force, and records it in
// the session so that a resume knows it.
func (r *run) learnLimit(err error) error {
	lim, stated := provider.ContextLimit(err), true
	if lim <= 0 {
		lim, stated = r.window.tokens, false
	}
	if lim <= 0 || r.cfg.Window.Tokens > 0 && lim >= r.cfg.Window.Tokens {
		return nil
	}
	r.cfg.Window.Tokens = lim
	f := contextLimitFields{Tokens: lim, Provider: r.cfg.Provider.Name(), Model: r.cfg.Model, Stated: stated}
	if err := r.appendEntry(session.Entry{Type: TypeContextLimit, Fields: mustJSON(f)}); err != nil {
		return err
	}
	note := fmt.Sprintf("the server refused a request as too long and states a limit of %d tokens, which is the window from now on", lim)
	if !stated {
		note = fmt.Sprintf("the server refused a request as too long and states no limit; the size of the last request it took, %d tokens, is the window from now on", lim)
	}
	r.notice(note)
	return nil
}

// fitOverflow shortens the session after the API refused a request of est
// tokens as too long: it compacts (reason overflow); when the model will
// not summarise, or would not before in this run, it stubs every large
// tool result, the latest included. It returns errNotShorter when
// nothing was left to stub, and then the refusal is the run's error.
func (r *run) fitOverflow(ctx context.Context, specs []provider.Tool, est int64) error {
	if !r.summaryOff {
		err := r.compact(ctx, specs, est, "overflow")
		ns, ok := errors.AsType[*errNoSummary](err)
		if !ok {
			return err
		}
		r.sayPruningAlone(ns)
	}
	pruned, err := r.prune(est, specTokens(specs), 0, true)
	if err == nil && !pruned {
		return errNotShorter
	}
	return err
}

// errNotShorter: nothing is left to prune; the caller's error stands.
var errNotShorter = errors.New("nothing left to prune")

// sayPruningAlone turns threshold compaction off for the rest of the run
// after ns, and says so (a notice event and a note).
func (r *run) sayPruningAlone(ns *errNoSummary) {
	r.summaryOff = true
	r.notice(ns.err.Message + "; going on with pruning alone")
}

// notice reports what the run did instead of what was asked: a notice
// event and a note.
func (r *run) notice(note string) {
	em := r.cfg.Events
	em.Emit(event.Notice{Base: em.Stamp("notice", r.res.SessionID), Message: note})
	if r.cfg.Notes != nil {
		fmt.Fprintln(r.cfg.Notes, "awl:", note)
	}
}

// pruneAlone goes on without a summary after ns: it says so (a notice
// event and a note), turns threshold compaction off for the rest of the
// run, and prunes the tool results of all but the last keep assistant
// turns, whatever that frees. It reports whether it pruned.
func (r *run) pruneAlone(ns *errNoSummary, before, overhead int64, keep int) (bool, error) {
	r.sayPruningAlone(ns)
	return r.prune(before, overhead, keep, true)
}

// prune appends a prune entry that stubs the tool results of all but the
// last keep assistant turns, if that frees pruneGain percent of the
// window, or anything at all when force is set. overhead is the tokens of
// the request besides its messages.
func (r *run) prune(before, overhead int64, keep int, force bool) (bool, error) {
	path := r.sess.ActivePath()
	// The boundary: the last tool-result message before the keepTurns-th
	// latest assistant message, and after the latest compaction and prune.
	floor := -1
	for i, e := range path {
		if projection.InForce(path, i) {
			floor = i
		}
		if e.Type == session.TypePrune {
			var pf session.Prune
			if e.Decode(&pf) == nil {
				for j := range path[:i] {
					if path[j].ID == pf.UpToID && j > floor {
						floor = j
					}
				}
			}
		}
	}
	seen, upTo := 0, -1
	for i := len(path) - 1; i > floor; i-- {
		m := path[i].Message
		if m == nil {
			continue
		}
		if m.Role == conv.RoleAssistant {
			seen++
			continue
		}
		if seen >= keep && hasLargeResult(m) {
			upTo = i
			break
		}
	}
	if upTo < 0 {
		return false, nil
	}
	fields := session.Prune{UpToID: path[upTo].ID, TokensBefore: before}
	after := projection.Project(append(path[:len(path):len(path)], session.Entry{Type: session.TypePrune, Fields: mustJSON(fields)}))
	fields.TokensAfter = projection.Estimate(after) + overhead
	if gain := projection.Estimate(projection.Project(path)) + overhead - fields.TokensAfter; gain <= 0 || !force && gain*100 < pruneGain*r.cfg.Window.Tokens {
		return false, nil
	}
	if err := r.appendEntry(session.Entry{Type: session.TypePrune, Fields: mustJSON(fields)}); err != nil {
		return false, err
	}
	r.window = windowState{}
	em := r.cfg.Events
	em.Emit(event.Prune{Base: em.Stamp("prune", r.res.SessionID), UpToID: fields.UpToID, TokensBefore: fields.TokensBefore, TokensAfter: fields.TokensAfter})
	return true, nil
}

func hasLargeResult(m *conv.Message) bool {
	for _, b := range m.Content {
		if b.Type == conv.BlockToolResult && (len(b.Content) > projection.PruneMin || len(b.Attachments) > 0) {
			return true
		}
	}
	return false
}

// compact asks the model for a summary of the conversation and appends a
// compaction entry, followed by the model-visible context rebuilt in full
// and its baseline. If the summary request fails, nothing is appended and
// the error is the run's.
func (r *run) compact(ctx context.Context, specs []provider.Tool, before int64, reason string) error {
	start := time.Now()
	path := r.sess.ActivePath()
	msgs := projection.Project(path)
	if reason == "overflow" {
		// The request was already too long: summarise from a projection
		// with every large tool result stubbed.
		msgs = projection.AllPruned(path)
	}
	msg, err := r.summarise(ctx, specs, msgs)
	if err != nil && reason != "overflow" && overflowed(err) {
		// The summary request itself did not fit (the window was
		// overestimated, or a manual compaction of a session that had
		// outgrown it): once more with every large tool result stubbed.
		msg, err = r.summarise(ctx, specs, projection.AllPruned(path))
	}
	if err != nil {
		return err
	}
	summary := msg.Text()

	state, err := prompt.Gather(r.promptOpts)
	if err != nil {
		return fmt.Errorf("gather context: %w", err)
	}
	fullContext := prompt.Build(state, nil)

	fields := session.Compaction{
		Summary:          summary,
		FirstKeptEntryID: r.firstKept(path),
		TokensBefore:     before,
		Provider:         r.cfg.Provider.Name(),
		Model:            r.cfg.Model,
		Reason:           reason,
		CostUSD:          msg.CostUSD,
		ContextMessages:  new(len(fullContext)),
	}
	if u := msg.Usage; u != nil {
		fields.Usage = &session.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
	}
	// tokensAfter: the projection as it will be, estimated from bytes.
	probe := append(path[:len(path):len(path)], session.Entry{Type: session.TypeCompaction, Fields: mustJSON(fields)})
	for i := range fullContext {
		probe = append(probe, session.Entry{Type: session.TypeMessage, Message: &fullContext[i]})
	}
	probe = append(probe, state.Baseline().Entry())
	fields.TokensAfter = projection.Estimate(projection.Project(probe)) + specTokens(specs)

	if err := r.appendEntry(session.Entry{Type: session.TypeCompaction, Fields: mustJSON(fields)}); err != nil {
		return err
	}
	for _, m := range fullContext {
		e := session.Entry{Type: session.TypeMessage, Message: &m}
		if m.Role == conv.RoleUser {
			e.Provider, e.Model = r.cfg.Provider.Name(), r.cfg.Model
		}
		if err := r.appendEntry(e); err != nil {
			return err
		}
	}
	if err := r.appendEntry(state.Baseline().Entry()); err != nil {
		return err
	}
	r.window = windowState{}
	em := r.cfg.Events
	em.Emit(event.Compaction{
		Base: em.Stamp("compaction", r.res.SessionID), Reason: reason,
		TokensBefore: fields.TokensBefore, TokensAfter: fields.TokensAfter,
		FirstKeptEntryID: fields.FirstKeptEntryID, DurationMS: time.Since(start).Milliseconds(),
	})
	return nil
}

// errNoSummary is a summary request answered without usable text even
// with tool calls forbidden: the model (or a server that ignores
// tool_choice) would not summarise. The caller goes on with pruning alone.
// It unwraps to a provider error: when pruning alone cannot make the
// request fit either, it is the run's error (exit 5).
type errNoSummary struct{ err *provider.Error }

func (r *run) noSummary(what string) *errNoSummary {
	return &errNoSummary{&provider.Error{Kind: provider.KindRequest, Provider: r.cfg.Provider.Name(),
		Message: "compaction: the model answered the summary request " + what + "; nothing was compacted"}}
}

func (e *errNoSummary) Error() string { return e.err.Error() }
func (e *errNoSummary) Unwrap() error { return e.err }

// summarise sends the summary request: msgs and the fixed instruction. It
// accounts for its usage and cost, and returns the answer, which must hold
// text. Tool calls in the answer are never run: with text beside them the
// text is the summary. An answer with tool calls and no text is asked
// again once with tool calls forbidden (tool_choice none); when that one
// has no text either, or the server refuses the parameter, the error is
// an *errNoSummary.
func (r *run) summarise(ctx context.Context, specs []provider.Tool, msgs []conv.Message) (conv.Message, error) {
	msgs = append(msgs[:len(msgs):len(msgs)], conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock(CompactInstruction)}})
	// Tools stay offered, so that a history with tool calls is a valid
	// request on every API and the cached prefix still serves; the
	// instruction asks for none, and none that come back are run.
	req := provider.Request{Model: r.cfg.Model, Messages: msgs, Tools: specs, MaxTokens: r.cfg.MaxOutputTokens, Reasoning: r.cfg.Reasoning}
	msg, err := r.summaryRequest(ctx, req)
	if err != nil {
		return conv.Message{}, err
	}
	if strings.TrimSpace(msg.Text()) != "" {
		return msg, nil
	}
	what := "with no text"
	if uses := msg.ToolUses(); len(uses) > 0 {
		what = fmt.Sprintf("with a call to %s and no text (the tool was not run)", uses[0].Name)
	}
	if len(specs) == 0 {
		return conv.Message{}, r.noSummary(what)
	}
	// Once more with tool calls forbidden by the API. Forbidding them
	// from the start would cost the cache (Anthropic keys the cached
	// messages on tool_choice), so only a disobedient answer pays it.
	req.ToolChoice = provider.ToolChoiceNone
	msg, err = r.summaryRequest(ctx, req)
	var pe *provider.Error
	switch {
	case err != nil && errors.As(err, &pe) && pe.Kind == provider.KindRequest && !overflowed(err):
		// A server that refuses tool_choice (an unsupported parameter).
		return conv.Message{}, r.noSummary(what + ", and refused the request again with tool calls forbidden (" + pe.Message + ")")
	case err != nil:
		return conv.Message{}, err
	case strings.TrimSpace(msg.Text()) != "":
		return msg, nil
	case len(msg.ToolUses()) > 0:
		return conv.Message{}, r.noSummary(what + ", and again with tool calls forbidden")
	}
	return conv.Message{}, r.noSummary(what + ", and with no text with tool calls forbidden")
}

// summaryRequest sends one summary request and accounts for it. An
// answer that ends in an error is a failed request.
func (r *run) summaryRequest(ctx context.Context, req provider.Request) (conv.Message, error) {
	msg, err := r.providerStream(ctx, req)
	if err != nil {
		return conv.Message{}, fmt.Errorf("compaction: %w", err)
	}
	msg.CostUSD = r.priceOf(msg)
	r.account(msg)
	if msg.StopReason == conv.StopError {
		return conv.Message{}, &provider.Error{Kind: provider.KindRequest, Provider: r.cfg.Provider.Name(),
			Message: "compaction: the model answered the summary request with an error; nothing was compacted"}
	}
	return msg, nil
}

// firstKept picks where the messages kept whole after a compaction start:
// the earliest assistant message such that it and everything after it fit
// in keepShare of the window, and that comes after the previous
// compaction's rebuilt context. "" keeps nothing.
func (r *run) firstKept(path []session.Entry) string {
	floor := 0
	for i := len(path) - 1; i >= 0; i-- {
		if _, end, ok := projection.CompactionAt(path, i); ok {
			floor = end + 1
			break
		}
	}
	budget := r.cfg.Window.Tokens * keepShare / 100
	var size int64
	kept := ""
	for i := len(path) - 1; i >= floor; i-- {
		m := path[i].Message
		if m == nil {
			continue
		}
		size += projection.Estimate([]conv.Message{*m})
		if size > budget {
			break
		}
		if m.Role == conv.RoleAssistant {
			kept = path[i].ID
		}
	}
	return kept
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// overflowed reports whether err is a provider's answer that the request
// did not fit the context window.
func overflowed(err error) bool {
	var pe *provider.Error
	return errors.As(err, &pe) && provider.IsContextOverflow(pe)
}

// Compact compacts a session on demand (`awl sessions compact`): one
// summary request to cfg.Provider and cfg.Model, with the reason "manual".
// The session is cfg.Resume, opened and locked by the caller; Compact
// closes it. Like a resume, it first closes tool
// calls a killed run left without results. It then appends the compaction
// entry, the model-visible context rebuilt in full from cfg (Cwd, System,
// AppendSystem, Tools, NoEnv, NoAgentsMD; the output schema the session
// recorded) with its baseline, and the run entry, echoing each entry, then
// the compaction event, and the result event last.
//
// When the summary request fails, nothing but the run entry is appended
// and Result.Err is the request's error (exit 5). A session with no model
// turn since its last compaction has nothing to compact: nothing is
// appended, Notes says so, and Result.Err is nil. Result.Text is the
// summary; Turns stays 0, Usage and CostUSD are the summary request's.
func Compact(ctx context.Context, cfg Config) Result {
	return execute(ctx, cfg, (*run).compactSession)
}

func (r *run) compactSession(ctx context.Context) error {
	cfg := r.cfg
	sess := cfg.Resume
	if sess == nil {
		return errors.New("compact: no session given")
	}
	r.res.SessionID, r.res.SessionPath = sess.Header.ID, sess.Path
	cfg.Tools, _ = offerable(cfg.Tools) // a run that offered them warned
	names := make([]string, len(cfg.Tools))
	specs := make([]provider.Tool, len(cfg.Tools))
	for i, t := range cfg.Tools {
		names[i] = t.Name()
		specs[i] = provider.Tool{Name: t.Name(), Description: t.Description(), Schema: t.Schema()}
	}
	cfg.Events.Emit(event.Session{
		Base:      cfg.Events.Stamp("session", sess.Header.ID),
		Schema:    event.SchemaVersion,
		Path:      sess.Path,
		Cwd:       cfg.Cwd,
		Provider:  cfg.Provider.Name(),
		Model:     cfg.Model,
		Resumed:   true,
		Stdin:     "off",
		Recovered: sess.Recovered,
		Tools:     names,
		Sandbox:   cfg.sandboxStatus(),
		MCP:       mcpEvents(cfg.MCP),
	})
	if !turnSinceCompaction(sess.ActivePath()) {
		// Nothing to do, and so nothing to record: r.sess stays nil, so
		// no run entry is appended.
		sess.Close()
		if cfg.Notes != nil {
			fmt.Fprintf(cfg.Notes, "awl: session %s has no model turn since its last compaction; nothing to compact\n", sess.Header.ID)
		}
		return nil
	}
	r.sess = sess
	if err := r.closeDanglingToolCalls(); err != nil {
		return err
	}
	if err := r.setupGates(); err != nil {
		return err
	}
	r.setContextOptions(names)
	path := r.sess.ActivePath()
	if err := r.compact(ctx, specs, projection.Estimate(projection.Project(path))+specTokens(specs), "manual"); err != nil {
		return err
	}
	path = r.sess.ActivePath()
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type == session.TypeCompaction {
			var f session.Compaction
			if path[i].Decode(&f) == nil {
				r.res.Text = f.Summary
			}
			break
		}
	}
	return nil
}
