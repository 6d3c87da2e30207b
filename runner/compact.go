package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/modelctx"
	"github.com/awlrun/awl/runner/projection"
	"github.com/awlrun/awl/session"
)

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

// compact asks the model for a summary of the conversation and appends a
// compaction entry, followed by the model-visible context rebuilt in full
// and its baseline. If the summary request fails, nothing is appended and
// the error is the run's. A summary that would not make the projection
// shorter is not appended either: the error is an *errNoSummary, and the
// caller goes on with pruning alone.
func (r *run) compact(ctx context.Context, specs []provider.Tool, before int64, reason string) error {
	start := time.Now()
	path := r.sess.ActivePath()
	msgs, marks := projection.ProjectPrefixes(path)
	if reason == "overflow" {
		// The request was already too long: summarise from a projection
		// with every large tool result stubbed.
		msgs, marks = projection.AllPruned(path), projection.Prefixes{}
	}
	msg, err := r.summarise(ctx, specs, msgs, marks)
	if err != nil && reason != "overflow" && overflowed(err) {
		// The summary request itself did not fit (the window was
		// overestimated, or a manual compaction of a session that had
		// outgrown it): once more with every large tool result stubbed.
		msg, err = r.summarise(ctx, specs, projection.AllPruned(path), projection.Prefixes{})
	}
	if err != nil {
		return err
	}
	summary := msg.Text()

	state, err := modelctx.Gather(r.promptOpts)
	if err != nil {
		return fmt.Errorf("gather context: %w", err)
	}
	fullContext := modelctx.Build(state, nil)

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
	// A summary no shorter than the conversation it replaces (a small
	// one, a model that wrote at length) would make the request longer,
	// not shorter: it is not appended, and the caller prunes instead.
	// Both sides are estimated from bytes.
	if now := projection.Estimate(projection.Project(path)) + specTokens(specs); fields.TokensAfter >= now {
		return r.noSummary(fmt.Sprintf("with a summary that is not shorter than what it would replace (%d tokens after it, %d now)", fields.TokensAfter, now))
	}

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
	if err := r.forgetSummarised(); err != nil {
		return err
	}
	em := r.cfg.Events
	em.Emit(event.Compaction{
		Base: em.Stamp("compaction", r.res.SessionID), Reason: reason,
		TokensBefore: fields.TokensBefore, TokensAfter: fields.TokensAfter,
		FirstKeptEntryID: fields.FirstKeptEntryID, DurationMS: time.Since(start).Milliseconds(),
	})
	return nil
}

// forgetSummarised drops from memory the entries no request can show any
// more, now that a summary stands in for them (projection.Reach): a long
// run then holds about one window of entries, not all it ever wrote.
// The session file keeps them all.
func (r *run) forgetSummarised() error {
	path := r.sess.ActivePath()
	if at := projection.Reach(path); at > 0 {
		return r.sess.Forget(path[at].ID)
	}
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
func (r *run) summarise(ctx context.Context, specs []provider.Tool, msgs []conv.Message, marks projection.Prefixes) (conv.Message, error) {
	msgs = append(msgs[:len(msgs):len(msgs)], conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock(CompactInstruction)}})
	// Tools stay offered, so that a history with tool calls is a valid
	// request on every API and the cached prefix still serves; the
	// instruction asks for none, and none that come back are run.
	req := provider.Request{Model: r.cfg.Model, Messages: msgs, StablePrefix: marks.Stable, SharedPrefix: marks.Shared, Tools: specs, MaxTokens: r.cfg.MaxOutputTokens, Reasoning: r.cfg.Reasoning}
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
// compaction's rebuilt context; when none fits, the prompt the model has
// not answered yet, if it follows a turn and fits in keepShare itself
// (unanswered). "" keeps nothing.
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
	if kept == "" {
		kept = unanswered(path[floor:], budget)
	}
	return kept
}

// unanswered is the id of the first prompt after the last assistant
// message of path, "" for none: a prompt the model has not answered is
// kept whole after a compaction (and the turn before it, which did not
// fit, is in the summary), so that the request still ends with what the
// user asked, not with a summary of it. It is "" too when no assistant
// message comes before the prompts, or when they do not fit in budget
// tokens: then the prompts are what is too long, and only a summary of
// them can shorten the request (the first request of a run refused as
// too long).
func unanswered(path []session.Entry, budget int64) string {
	id := ""
	var size int64
	for i := len(path) - 1; i >= 0; i-- {
		m := path[i].Message
		switch {
		case m == nil:
		case m.Role == conv.RoleAssistant:
			if size > budget {
				return ""
			}
			return id
		case m.Role == conv.RoleUser && !modelctx.IsContextualMessage(*m) && !slices.ContainsFunc(m.Content, func(b conv.Block) bool { return b.Type == conv.BlockToolResult }):
			id = path[i].ID
			size += projection.Estimate([]conv.Message{*m})
		}
	}
	return ""
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
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
		specs[i] = toolSpec(t, cfg.Redact)
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
	if err := r.closeDanglingToolCalls(false); err != nil {
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
