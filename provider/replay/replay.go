// Package replay is the provider that plays a recorded session as the
// model (`--provider replay --replay REF`): no key, no network, the same
// answers every time, and a divergence from the recording fails the run.
//
// A request is answered by conversation, not by position: with the
// recorded assistant message that followed the same conversation in the
// recording (the same real prompts and tool results, in order, from the
// start). So any step of a recorded pipeline replays on its own, in its own
// process: a new session, a --resume, a -c or a --fork of a session that
// followed the recording so far.
package replay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/runner/modelctx"
	"github.com/awlrun/awl/runner/projection"
	"github.com/awlrun/awl/session"
)

// Name is the provider name recorded by replayed runs.
const Name = "replay"

func init() {
	provider.Register(provider.Spec{Name: Name, Recorded: true, Open: open})
}

// runEntry is the type of the entry that ends each run: a step.
const runEntry = "run"

// DivergedError says a replayed run no longer matches its recording.
type DivergedError struct{ Diff string }

func (e *DivergedError) Error() string { return "replay diverged from the recording:\n" + e.Diff }

// ExitCode is 5: the replayed model failed, as a provider does.
func (e *DivergedError) ExitCode() int { return 5 }

// ExitReason is "replay_diverged".
func (e *DivergedError) ExitReason() string { return "replay_diverged" }

// open loads opts.Recording for provider.New.
func open(opts provider.Options) (provider.Provider, error) {
	rec, err := session.Load(opts.Recording)
	if err != nil {
		return nil, err
	}
	r := fromPath(rec.ActivePath(), opts.Lenient, opts.Warn)
	r.rec = rec
	if r.model == "" {
		_, r.model = rec.ActiveModel()
	}
	return r, nil
}

// Provider serves the assistant messages of a recorded conversation as the
// model. Before serving one it compares the request awl would send with the
// recording: the real user prompts and the tool results, each with the call
// it answers (context fragments such as the working directory and date,
// and system messages, are left out, so a recording replays in another
// directory or on another day).
type Provider struct {
	rec   *session.Session
	model string
	// items are what the recording's conversation holds that replay
	// compares, in order. The recording is one path, so the conversation
	// before each answer is a prefix of it.
	items []string
	// answers are the recorded assistant messages, each with at, how many
	// items come before it.
	answers []answer
	// prompts are the recording's real prompts, in order.
	prompts []recordedPrompt
	// path is the recording's active path, for the schema of each step.
	path []session.Entry

	lenient bool
	warn    io.Writer
	// served is the index of the answer this process served last, or -1.
	served int
	// diverged: a lenient replay that diverged goes on by position,
	// comparing only what is new each turn: wantSeen items of the
	// recording and gotSeen of the requests were compared already.
	diverged          bool
	wantSeen, gotSeen int
}

type answer struct {
	msg conv.Message
	at  int
	// projected is the digest of what the request the recording made for
	// this answer compared (its prune stubs and compaction summary
	// included); set only in a recording with such boundaries.
	projected *[sha256.Size]byte
}

// recordedPrompt is a real prompt of the recording: its message, how many
// items come before it, the step it belongs to (how many run entries come
// before it) and the index in path of the entry that ends its step (len(path)
// when none does).
type recordedPrompt struct {
	msg     conv.Message
	at      int
	step    int
	stepEnd int
}

var _ provider.Provider = (*Provider)(nil)

// New prepares a replay of recorded, a session's conversation. With
// lenient, a divergence is written to warn and the replay goes on.
func New(recorded []conv.Message, model string, lenient bool, warn io.Writer) *Provider {
	path := make([]session.Entry, len(recorded))
	for i := range recorded {
		path[i] = session.Entry{Type: session.TypeMessage, Message: &recorded[i]}
	}
	r := fromPath(path, lenient, warn)
	if model != "" {
		r.model = model
	}
	return r
}

// fromPath indexes a recording's active path. The model is that of its
// last answer.
func fromPath(path []session.Entry, lenient bool, warn io.Writer) *Provider {
	r := &Provider{path: path, lenient: lenient, warn: warn, served: -1}
	var c collector
	step := 0
	first := 0 // the first prompt of the current step
	for i, e := range path {
		if e.Type == runEntry {
			for j := first; j < len(r.prompts); j++ {
				r.prompts[j].stepEnd = i
			}
			first = len(r.prompts)
			step++
			continue
		}
		if e.Type != session.TypeMessage || e.Message == nil {
			continue
		}
		m := *e.Message
		if m.Role == conv.RoleAssistant {
			r.answers = append(r.answers, answer{msg: m, at: len(c.items)})
			if m.Model != "" {
				r.model = m.Model
			}
		}
		if isPrompt(m) {
			r.prompts = append(r.prompts, recordedPrompt{msg: conv.Message{Role: conv.RoleUser, Content: m.Content}, at: len(c.items), step: step, stepEnd: len(path)})
		}
		c.add(m)
	}
	r.items = c.items
	if hasBoundary(path) {
		// A session that a real run pruned or compacted sends stubs and a
		// summary in place of what they stand for: continued with replay,
		// its requests are the recording's own requests, compared as
		// such. One projection per answer: only in such recordings.
		k := 0
		for i, e := range path {
			if e.Type == session.TypeMessage && e.Message != nil && e.Message.Role == conv.RoleAssistant {
				var pc collector
				for _, m := range projection.Project(path[:i]) {
					pc.add(m)
				}
				d := itemsDigest(pc.items)
				r.answers[k].projected = &d
				k++
			}
		}
	}
	return r
}

// hasBoundary reports whether a path holds a prune or compaction entry.
func hasBoundary(path []session.Entry) bool {
	return slices.ContainsFunc(path, func(e session.Entry) bool {
		return e.Type == session.TypePrune || e.Type == session.TypeCompaction
	})
}

// itemsDigest is a digest of a list of items, each one's length first.
func itemsDigest(items []string) [sha256.Size]byte {
	h := sha256.New()
	for _, it := range items {
		fmt.Fprintf(h, "%d:", len(it))
		io.WriteString(h, it)
	}
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// isPrompt reports whether m is a real prompt: a user message that is
// neither context, tool results nor a gate's feedback (the replayed run's
// own gates give that again).
func isPrompt(m conv.Message) bool {
	return m.Role == conv.RoleUser && len(m.Content) > 0 && !modelctx.IsContextualMessage(m) && !isToolResults(m) && !modelctx.IsGateFeedback(m)
}

func isToolResults(m conv.Message) bool {
	for _, b := range m.Content {
		if b.Type == conv.BlockToolResult {
			return true
		}
	}
	return false
}

// Name implements provider.Provider.
func (r *Provider) Name() string { return Name }

// Model is the model the recording names: that of its last answer, else
// the session's active one.
func (r *Provider) Model() string { return r.model }

// Recording is the session the replay plays, when it was opened from a
// file (nil from New).
func (r *Provider) Recording() *session.Session { return r.rec }

// Prompts returns the recording's real prompts, in order.
func (r *Provider) Prompts() []conv.Message {
	out := make([]conv.Message, len(r.prompts))
	for i, p := range r.prompts {
		out[i] = p.msg
	}
	return out
}

// Remaining reports how many recorded answers come after the last one this
// process served.
func (r *Provider) Remaining() int { return len(r.answers) - r.served - 1 }

// Step is what a run replays next: the prompts of the recording's step
// that follows the conversation so far, the output schema in force at
// the end of that step (nil for none), and the tool rules its run entry
// records (nil when it records none, or the step has no run entry).
type Step struct {
	Prompts []conv.Message
	Schema  []byte
	Rules   *session.RunRules
}

// Next returns the recording's next step after history, the conversation
// of the session the run continues (nil for a new session). With given (a
// prompt from the command line), the step is that prompt, which must be the
// recording's next one. history off the recording's path, a given prompt
// other than the recorded one, and a recording that ends before history
// does are divergences.
func (r *Provider) Next(history []conv.Message, given string) (Step, error) {
	var c collector
	for _, m := range history {
		c.add(m)
	}
	got := c.items
	if d := commonPrefix(r.items, got); d < len(got) {
		if d == len(r.items) {
			return Step{}, r.noContinuation(got[d])
		}
		return Step{}, &DivergedError{Diff: "the session to continue is not the recording's conversation:\n" + diffAt(r.items, got, d)}
	}
	k := slices.IndexFunc(r.prompts, func(p recordedPrompt) bool { return p.at >= len(got) })
	if k < 0 {
		now := "(none: the recording's next prompt)"
		if strings.TrimSpace(given) != "" {
			now = "prompt:\n" + given
		}
		return Step{}, r.noContinuation(now)
	}
	next := r.prompts[k]
	var step Step
	if strings.TrimSpace(given) != "" {
		if strings.TrimSpace(given) != strings.TrimSpace(next.msg.Text()) {
			return Step{}, &DivergedError{Diff: "the prompt differs from the recording's prompt at this point:\n--- recorded\n" + indent("prompt:\n"+next.msg.Text()) + "\n+++ now\n" + indent("prompt:\n"+given)}
		}
		step.Prompts = []conv.Message{next.msg}
	} else {
		for _, p := range r.prompts[k:] {
			if p.step != next.step {
				break
			}
			step.Prompts = append(step.Prompts, p.msg)
		}
	}
	if base, err := modelctx.LastBaseline(r.path[:next.stepEnd]); err == nil && base != nil {
		step.Schema = base.OutputSchema
	}
	if next.stepEnd < len(r.path) {
		var run session.Run
		if json.Unmarshal(r.path[next.stepEnd].Fields, &run) == nil {
			step.Rules = run.Flags.Rules
		}
	}
	return step, nil
}

// noContinuation is the divergence of a conversation that goes on where the
// recording ends.
func (r *Provider) noContinuation(now string) error {
	return &DivergedError{Diff: fmt.Sprintf("the recording has no recorded continuation: it ends after model turn %d, and this run goes further\n+++ now\n%s", len(r.answers), indent(now))}
}

// Stream implements provider.Provider.
func (r *Provider) Stream(ctx context.Context, req provider.Request, emit func(provider.Event)) (conv.Message, error) {
	if err := ctx.Err(); err != nil {
		return conv.Message{}, err
	}
	k, err := r.match(req.Messages)
	if err != nil {
		return conv.Message{}, err
	}
	r.served = k
	m := r.answers[k].msg
	out := conv.Message{Role: conv.RoleAssistant, Content: m.Content, Provider: Name, Model: m.Model, StopReason: m.StopReason, Usage: m.Usage}
	if emit != nil {
		for i, b := range out.Content {
			if b.Type == conv.BlockText {
				emit(provider.Event{Kind: provider.EventTextDelta, Index: i, Text: b.Text})
			}
		}
	}
	return out, nil
}

// match finds the recorded answer to a request's messages: the one after
// the same items, the n-th of those when the request already ends in n
// answers with nothing to compare after them.
func (r *Provider) match(msgs []conv.Message) (int, error) {
	var c collector
	for _, m := range msgs {
		c.add(m)
	}
	got := c.items
	if r.diverged {
		return r.byPosition(got)
	}
	d := commonPrefix(r.items, got)
	if d == len(got) {
		first := slices.IndexFunc(r.answers, func(a answer) bool { return a.at == d })
		if first >= 0 {
			k := first + c.trailing
			if k < len(r.answers) && r.answers[k].at == d {
				return k, nil
			}
		}
		if c.trailing == 0 && r.interruptedAt(d) {
			return 0, provider.ErrInterrupted
		}
	}
	if k, ok := r.byProjection(got, c.trailing); ok {
		return k, nil
	}
	// The first answer the request is missing the items for: the turn the
	// difference comes before.
	turn := slices.IndexFunc(r.answers, func(a answer) bool { return a.at > d })
	var diff string
	switch {
	case d == len(r.items) && d < len(got):
		return 0, r.noContinuation(got[d])
	case turn < 0:
		return 0, &DivergedError{Diff: fmt.Sprintf("the run asked for model turn %d, but the recording has only %d", len(r.answers)+1, len(r.answers))}
	default:
		diff = fmt.Sprintf("before model turn %d:\n%s", turn+1, diffAt(r.items, got, d))
	}
	if !r.lenient {
		return 0, &DivergedError{Diff: diff}
	}
	r.warnf(diff)
	r.diverged, r.wantSeen, r.gotSeen = true, r.answers[turn].at, len(got)
	return turn, nil
}

// interruptedAt reports whether the recording's request after its first d
// items was interrupted by an interrupt message: no answer follows them,
// and the next item is a prompt of the same step as the prompt before it
// (within a step, only an interrupt moves on to the next prompt with no
// answer).
func (r *Provider) interruptedAt(d int) bool {
	k := slices.IndexFunc(r.prompts, func(p recordedPrompt) bool { return p.at == d })
	return k > 0 && r.prompts[k-1].step == r.prompts[k].step && r.prompts[k-1].at < d
}

// Interrupts returns the results the recording's interrupt messages gave
// tool calls (conv.Block.Interrupted), by call id, for the runner to
// re-enact; nil when there are none.
func (r *Provider) Interrupts() map[string]conv.Block {
	var out map[string]conv.Block
	for _, e := range r.path {
		if e.Type != session.TypeMessage || e.Message == nil || e.Message.Role != conv.RoleUser {
			continue
		}
		for _, b := range e.Message.Content {
			if b.Type == conv.BlockToolResult && b.Interrupted {
				if out == nil {
					out = map[string]conv.Block{}
				}
				out[b.ToolUseID] = b
			}
		}
	}
	return out
}

// byProjection finds the answer whose recorded request compared as got,
// in a recording with prune or compaction boundaries: the n-th such answer
// when the request ends in n answers with nothing to compare after them.
func (r *Provider) byProjection(got []string, trailing int) (int, bool) {
	if len(r.answers) == 0 || r.answers[0].projected == nil {
		return 0, false
	}
	d := itemsDigest(got)
	for k, a := range r.answers {
		if *a.projected != d {
			continue
		}
		if trailing == 0 {
			return k, true
		}
		trailing--
	}
	return 0, false
}

// byPosition is a lenient replay after its first divergence: the next
// recorded answer is served whatever the request holds, and what is new in
// the request since the last turn is compared with what is new in the
// recording, each divergence reported once.
func (r *Provider) byPosition(got []string) (int, error) {
	k := r.served + 1
	if k >= len(r.answers) {
		return 0, &DivergedError{Diff: fmt.Sprintf("the run asked for model turn %d, but the recording has only %d", k+1, len(r.answers))}
	}
	at := r.answers[k].at
	want := r.items[min(r.wantSeen, at):at]
	now := got[min(r.gotSeen, len(got)):]
	r.wantSeen, r.gotSeen = max(r.wantSeen, at), len(got)
	if d := commonPrefix(want, now); d < len(want) || d < len(now) {
		r.warnf(fmt.Sprintf("before model turn %d:\n%s", k+1, diffAt(want, now, d)))
	}
	return k, nil
}

func (r *Provider) warnf(diff string) {
	if r.warn != nil {
		fmt.Fprintf(r.warn, "awl: replay diverged (--replay-lenient, going on): %s\n", diff)
	}
}

// collector lists what replay compares in a conversation: the real user
// text and images, and the tool results, each with the tool call it
// answers. The results of one message are listed in the order of their
// calls, so parallel results that arrive in another order compare equal.
type collector struct {
	items []string
	// calls are the tool calls seen, by id, with their order.
	calls map[string]call
	// trailing counts the assistant messages after the last item.
	trailing int
}

type call struct {
	desc  string
	order int
}

func (c *collector) add(m conv.Message) {
	switch m.Role {
	case conv.RoleAssistant:
		c.trailing++
		for _, b := range m.Content {
			if b.Type == conv.BlockToolUse {
				if c.calls == nil {
					c.calls = map[string]call{}
				}
				c.calls[b.ID] = call{desc: b.Name + " " + b.Input, order: len(c.calls)}
			}
		}
	case conv.RoleUser:
		if modelctx.IsContextualMessage(m) {
			return
		}
		var results []conv.Block
		n := len(c.items)
		for _, b := range m.Content {
			switch b.Type {
			case conv.BlockText:
				c.items = append(c.items, "prompt:\n"+b.Text)
			case conv.BlockImage:
				c.items = append(c.items, "prompt image: "+b.MimeType+" sha256:"+digest(b.Data))
			case conv.BlockToolResult:
				results = append(results, b)
			}
		}
		// sort.SliceStable, not slices.SortStableFunc, which is compiled
		// anew for each struct shape it sorts by value (a conv.Block's
		// stable sort was 16 KB of binary).
		sort.SliceStable(results, func(i, j int) bool {
			return c.callOrder(results[i].ToolUseID) < c.callOrder(results[j].ToolUseID)
		})
		for _, b := range results {
			s := fmt.Sprintf("result of tool call %s (%s)", b.ToolUseID, c.calls[b.ToolUseID].desc)
			if b.IsError {
				s += " [error]"
			}
			s += ":\n" + b.Content
			for _, a := range b.Attachments {
				s += "\n[attachment " + a.MimeType + " sha256:" + digest(a.Data) + "]"
			}
			c.items = append(c.items, s)
		}
		if len(c.items) > n {
			c.trailing = 0
		}
	}
}

// callOrder is the position of the call id answers; an unknown id sorts
// last.
func (c *collector) callOrder(id string) int {
	if k, ok := c.calls[id]; ok {
		return k.order
	}
	return len(c.calls)
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// commonPrefix is how many leading items a and b share.
func commonPrefix(a, b []string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// diffAt describes the difference at item d between the recorded and the
// current items.
func diffAt(want, got []string, d int) string {
	w, g := "  (nothing)", "  (missing)"
	if d < len(want) {
		w = indent(want[d])
	}
	if d < len(got) {
		g = indent(got[d])
	}
	return "--- recorded\n" + w + "\n+++ now\n" + g
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
