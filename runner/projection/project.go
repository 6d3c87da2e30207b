// Package projection turns a session's active path into the messages a
// request carries: the prune and compaction boundaries, which compaction
// is in force, and token estimates. It imports session, the context
// package (prompt) and conv only, so the compiler keeps a request a pure
// function of the log.
package projection

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/runner/modelctx"
	"github.com/awlrun/awl/session"
)

// CompactionAt reads path[i] as a compaction in force: its members parse,
// its summary is not blank, and the context rebuilt after it is complete:
// its ContextMessages context messages, then a turnContext.
// ctxEnd is the index of that context's turnContext baseline.
func CompactionAt(path []session.Entry, i int) (f session.Compaction, ctxEnd int, ok bool) {
	if path[i].Type != session.TypeCompaction || path[i].Decode(&f) != nil || strings.TrimSpace(f.Summary) == "" {
		return f, 0, false
	}
	if f.ContextMessages == nil {
		for j := i + 1; j < len(path); j++ {
			if path[j].Type == session.TypeTurnContext {
				return f, j, true
			}
		}
		return f, i, true
	}
	n := *f.ContextMessages
	end := i + n + 1
	if n < 0 || end >= len(path) || path[end].Type != session.TypeTurnContext {
		return f, 0, false
	}
	for j := i + 1; j < end; j++ {
		if path[j].Type != session.TypeMessage || !contextual(path[j].Message) {
			return f, 0, false
		}
	}
	return f, end, true
}

// contextual reports whether m is model-visible context as modelctx.Build
// renders it: the system message, or a user message of context fragments
// only (not a prompt a resumed run appended after a cut compaction).
func contextual(m *conv.Message) bool {
	if m == nil {
		return false
	}
	if m.Role == conv.RoleSystem {
		return true
	}
	if m.Role != conv.RoleUser || len(m.Content) == 0 {
		return false
	}
	for _, b := range m.Content {
		if b.Type != conv.BlockText || !modelctx.IsContextual(b.Text) {
			return false
		}
	}
	return true
}

// summaryPreamble opens the user message that carries a compaction's
// summary in requests; IsSummary recognises it.
const summaryPreamble = "<awl-compaction>\nThe conversation so far was compacted to save context. This summary of it, written by the model, replaces the earlier messages:\n\n"

const summaryClose = "\n</awl-compaction>"

// IsSummary reports whether text is a compaction summary as requests show it.
func IsSummary(text string) bool {
	return strings.HasPrefix(text, summaryPreamble) && strings.HasSuffix(text, summaryClose)
}

func summaryMessage(summary string) conv.Message {
	return conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock(summaryPreamble + summary + summaryClose)}}
}

// PruneMin is the size below which a tool result is never stubbed: a stub
// would save next to nothing.
const PruneMin = 1024

// Project turns the active path of a session into the messages of a
// request. It is a pure function of the entries:
//
//   - Without a compaction, every message in order.
//   - After the latest compaction entry C: the context rebuilt in full
//     after C (the messages up to the turnContext baseline that follows
//     C), then the summary as a user message, then the kept messages from
//     C's firstKeptEntryId up to C, then every message after that baseline.
//   - Tool results at or before the latest prune entry's upToId are shown as
//     stubs (pruneStub), and their images by metadata.
//
// Resume therefore rebuilds the same request the last process would have
// sent, byte for byte.
func Project(path []session.Entry) []conv.Message {
	msgs, _ := ProjectStable(path)
	return msgs
}

// LargeResult reports whether m holds a tool result a prune would stub:
// an output over PruneMin bytes, or images.
func LargeResult(m *conv.Message) bool {
	for _, b := range m.Content {
		if b.Type == conv.BlockToolResult && (len(b.Content) > PruneMin || len(b.Attachments) > 0) {
			return true
		}
	}
	return false
}

// ProjectStable is Project, and how many of the leading messages the
// session's next prune leaves as they are: those before the first message
// that shows a large tool result whole (LargeResult), since a prune stubs
// results from there on. Until the next prune or compaction every request
// begins with them, so they are a stable prefix for a provider's cache
// (Anthropic's cache stores a prefix only where a request marks one).
func ProjectStable(path []session.Entry) ([]conv.Message, int) {
	msgs, p := ProjectPrefixes(path)
	return msgs, p.Stable
}

// Prefixes are the leading messages of a projection that other requests
// of the session begin with too, as counts.
type Prefixes struct {
	// Stable is the prefix the next prune leaves as it is (ProjectStable).
	Stable int
	// Shared is, when the latest prune comes after the latest compaction,
	// the messages before the first result it stubbed that the prune
	// before it had left whole: the stable prefix of every request
	// between the two, which they all began with, and so the longest
	// prefix this request shares with them. 0 otherwise.
	Shared int
}

// ProjectPrefixes is Project, with the prefixes that other requests share
// (Prefixes). Both are functions of path alone, so that a resumed or
// forked run marks them where the run that wrote the session would have.
func ProjectPrefixes(path []session.Entry) ([]conv.Message, Prefixes) {
	ids := locator{path: path}
	// The latest prune boundary and compaction, and the boundary of the
	// prune before the latest one.
	pruneUpTo, prevUpTo, pruneAt, comp, ctxEnd := -1, -1, -1, -1, -1
	var cf session.Compaction
	for i := len(path) - 1; i >= 0; i-- {
		e := &path[i]
		switch e.Type {
		case session.TypePrune:
			var pf session.Prune
			if (pruneUpTo < 0 || prevUpTo < 0) && e.Decode(&pf) == nil {
				if p, ok := ids.find(pf.UpToID); ok && pruneUpTo < 0 {
					pruneUpTo, pruneAt = p, i
				} else if ok {
					prevUpTo = p
				}
			}
		case session.TypeCompaction:
			// One without a summary (hand-edited, cut short) would drop
			// everything before it, and one whose rebuilt context is
			// incomplete (awl killed while writing it) would leave out
			// the system prompt: such an entry is skipped, like one
			// that is not JSON, and an earlier one applies.
			if comp < 0 {
				if f, end, ok := CompactionAt(path, i); ok {
					comp, cf, ctxEnd = i, f, end
				}
			}
		}
	}
	uses := useIndex{path: path[:pruneUpTo+1]}
	stable, shared := -1, -1
	if pruneAt < comp {
		// A compaction since the latest prune: no request before it
		// shares the summary.
		shared = 0
	}
	add := func(out []conv.Message, from, to int) []conv.Message {
		for i := from; i < to; i++ {
			e := &path[i]
			if e.Type != session.TypeMessage || e.Message == nil {
				continue
			}
			m := *e.Message
			if i <= pruneUpTo {
				if shared < 0 && i > prevUpTo && LargeResult(&m) {
					shared = len(out)
				}
				m = pruneWith(m, uses.find)
			} else if stable < 0 && LargeResult(&m) {
				stable = len(out)
			}
			out = append(out, m)
		}
		return out
	}
	done := func(out []conv.Message) ([]conv.Message, Prefixes) {
		if stable < 0 {
			stable = len(out)
		}
		return out, Prefixes{Stable: stable, Shared: max(shared, 0)}
	}
	if comp < 0 {
		return done(add(make([]conv.Message, 0, len(path)), 0, len(path)))
	}
	// The rebuilt context runs from C to its baseline, ctxEnd.
	k, kept := ids.find(cf.FirstKeptEntryID)
	kept = kept && k < comp
	size := (ctxEnd - comp) + 1 + (len(path) - ctxEnd)
	if kept {
		size += comp - k
	}
	out := add(make([]conv.Message, 0, size), comp+1, ctxEnd)
	out = append(out, summaryMessage(cf.Summary))
	if kept {
		out = add(out, k, comp)
	}
	return done(add(out, ctxEnd+1, len(path)))
}

// locator finds entries of a path by id: the last one with the id, as a
// map from id to index would. A lookup or two per projection scan back
// from the end; a miss builds the map, so that no run of misses costs a
// scan each.
type locator struct {
	path []session.Entry
	pos  map[string]int
}

func (l *locator) find(id string) (int, bool) {
	if l.pos == nil {
		for i := len(l.path) - 1; i >= 0; i-- {
			if l.path[i].ID == id {
				return i, true
			}
		}
		l.pos = make(map[string]int, len(l.path))
		for i := range l.path {
			l.pos[l.path[i].ID] = i
		}
		return -1, false
	}
	i, ok := l.pos[id]
	return i, ok
}

// useIndex finds the tool calls of a path by id, as toolUses does (the
// last call with the id wins), but lazily: it indexes the calls from the
// end of the path back only as far as a lookup needs. The results a
// projection stubs sit just after their calls, near the end, so the
// calls before an old compaction are never indexed.
type useIndex struct {
	path []session.Entry
	next int // path[next:] is indexed; 0 until the first lookup
	seen map[string]*conv.Block
}

func (u *useIndex) find(id string) conv.Block {
	if u.seen == nil {
		u.seen = map[string]*conv.Block{}
		u.next = len(u.path)
	}
	if b, ok := u.seen[id]; ok {
		return *b
	}
	for u.next > 0 {
		u.next--
		m := u.path[u.next].Message
		if m == nil || m.Role != conv.RoleAssistant {
			continue
		}
		var hit *conv.Block
		// Within a message too, the last block with the id wins.
		for j := len(m.Content) - 1; j >= 0; j-- {
			b := &m.Content[j]
			if b.Type != conv.BlockToolUse {
				continue
			}
			if _, ok := u.seen[b.ID]; !ok {
				u.seen[b.ID] = b
			}
			if b.ID == id && hit == nil {
				hit = b
			}
		}
		if hit != nil {
			return *hit
		}
	}
	return conv.Block{}
}

// toolUses indexes the tool calls in entries by id.
func toolUses(entries []session.Entry) map[string]conv.Block {
	m := map[string]conv.Block{}
	for _, e := range entries {
		if e.Message == nil || e.Message.Role != conv.RoleAssistant {
			continue
		}
		for _, b := range e.Message.Content {
			if b.Type == conv.BlockToolUse {
				m[b.ID] = b
			}
		}
	}
	return m
}

// pruneWith returns m with its large tool results replaced by stubs, the
// tool calls they answer looked up by use. It never modifies m's blocks in
// place: they belong to the session.
func pruneWith(m conv.Message, use func(id string) conv.Block) conv.Message {
	changed := false
	for _, b := range m.Content {
		if b.Type == conv.BlockToolResult && (len(b.Content) > PruneMin || len(b.Attachments) > 0) {
			changed = true
			break
		}
	}
	if !changed {
		return m
	}
	blocks := make([]conv.Block, len(m.Content))
	copy(blocks, m.Content)
	for i, b := range blocks {
		if b.Type != conv.BlockToolResult || (len(b.Content) <= PruneMin && len(b.Attachments) == 0) {
			continue
		}
		nb := b
		nb.Content = pruneStub(use(b.ToolUseID), b)
		nb.Attachments = nil
		blocks[i] = nb
	}
	m.Content = blocks
	return m
}

// Stub shape: the head and tail lines kept, each cut to stubLine bytes.
const (
	stubHead = 6
	stubTail = 6
	stubLine = 160
)

// pruneStub is what a request shows in place of a pruned tool result:
//
//	[output of `go test ./...`, 48.2 KB, pruned; 12 of 900 lines kept:
//	<first 6 lines>
//	…
//	<last 6 lines>]
func pruneStub(use, res conv.Block) string {
	label := callLabel(use)
	// The text: the label, the figures, each attachment's line and at
	// most 12 lines of stubLine bytes, each with a newline and maybe an
	// ellipsis, and the ellipsis line.
	var sb strings.Builder
	sb.Grow(96 + len(label) + 64*len(res.Attachments) + min(len(res.Content), (stubHead+stubTail)*stubLine) + (stubHead+stubTail+1)*4)
	sb.WriteString("[output of ")
	sb.WriteString(label)
	sb.WriteString(", ")
	sb.WriteString(humanBytes(len(res.Content)))
	if res.IsError {
		sb.WriteString(", an error")
	}
	sb.WriteString(", pruned")
	// The lines are those of the content without its final newlines.
	text := strings.TrimRight(res.Content, "\n")
	lines := 0
	if res.Content != "" {
		lines = strings.Count(text, "\n") + 1
	}
	cut := lines > stubHead+stubTail
	if cut {
		fmt.Fprintf(&sb, "; %d of %d lines kept", stubHead+stubTail, lines)
	}
	for _, a := range res.Attachments {
		fmt.Fprintf(&sb, "; attachment %s, %s", a.MimeType, humanBytes(len(a.Data)*3/4))
	}
	if lines == 0 {
		sb.WriteString("]")
		return sb.String()
	}
	sb.WriteString(":")
	if !cut {
		writeStubLines(&sb, text)
	} else {
		head, tail := text, text
		for range stubHead {
			head = head[strings.IndexByte(head, '\n')+1:]
		}
		for range stubTail {
			tail = tail[:strings.LastIndexByte(tail, '\n')]
		}
		writeStubLines(&sb, text[:len(text)-len(head)-1])
		writeStubLine(&sb, "…")
		writeStubLines(&sb, text[len(tail)+1:])
	}
	sb.WriteString("]")
	return sb.String()
}

// writeStubLines writes each line of text, as writeStubLine does.
func writeStubLines(sb *strings.Builder, text string) {
	for {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			writeStubLine(sb, text)
			return
		}
		writeStubLine(sb, text[:i])
		text = text[i+1:]
	}
}

// writeStubLine writes a newline and l, cut to stubLine bytes.
func writeStubLine(sb *strings.Builder, l string) {
	sb.WriteString("\n")
	if len(l) > stubLine {
		sb.WriteString(strings.ToValidUTF8(l[:stubLine], ""))
		sb.WriteString("…")
		return
	}
	sb.WriteString(l)
}

// labelKeys are the arguments that name a call, in the order tried.
var labelKeys = [...]string{"command", "path", "file_path", "pattern"}

// callLabel names a tool call briefly: bash by its command, file tools by
// their path or pattern, others by name.
func callLabel(use conv.Block) string {
	if use.Name == "" {
		return "a tool call"
	}
	args := labelArgs(use.Input)
	for i, k := range labelKeys {
		if s := args[i]; s != "" {
			if len(s) > 80 {
				s = strings.ToValidUTF8(s[:80], "") + "…"
			}
			s = strings.ReplaceAll(s, "\n", " ")
			if k == "command" {
				return "`" + s + "`"
			}
			return use.Name + " `" + s + "`"
		}
	}
	return use.Name
}

// labelArgs returns the string values of labelKeys in a call's input, ""
// for those absent or not strings: what decoding the input into a
// map[string]any would give. An input without escapes, the usual case, is
// read in place; any other goes through encoding/json.
func labelArgs(input string) (args [len(labelKeys)]string) {
	if strings.IndexByte(input, '\\') < 0 && utf8.ValidString(input) && json.Valid([]byte(input)) {
		v := gjson.Parse(input)
		if !v.IsObject() {
			return args
		}
		// As in a map, the last member with a name wins.
		v.ForEach(func(key, val gjson.Result) bool {
			for i, k := range labelKeys {
				if key.Str == k {
					args[i] = ""
					if val.Type == gjson.String {
						args[i] = val.Str
					}
				}
			}
			return true
		})
		return args
	}
	var m map[string]any
	_ = json.Unmarshal([]byte(input), &m)
	for i, k := range labelKeys {
		args[i], _ = m[k].(string)
	}
	return args
}

func humanBytes(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// BytesPerToken is the ratio awl uses to estimate tokens from bytes when no
// usage figure covers them: about four bytes of English text or code per
// token, rounded so that the estimate errs high.
const BytesPerToken = 3.5

// imageTokens is the estimate for one image: a large image costs about this
// much on Anthropic's and OpenAI's APIs.
const imageTokens = 1600

// Estimate estimates the tokens msgs take in a request.
func Estimate(msgs []conv.Message) int64 {
	var bytes, images int64
	for _, m := range msgs {
		for _, b := range m.Content {
			bytes += int64(len(b.Text) + len(b.Thinking) + len(b.Input) + len(b.Content) + len(b.Name) + 16)
			if b.Type == conv.BlockImage {
				images++
			}
			images += int64(len(b.Attachments))
		}
	}
	return int64(float64(bytes)/BytesPerToken) + images*imageTokens
}

// InForce reports whether path[i] is a compaction that Project applies
// (CompactionAt). One that is not (edited by hand, cut short, its rebuilt
// context incomplete) is no boundary for pruning, keeping or compacting
// again either.
func InForce(path []session.Entry, i int) bool {
	_, _, ok := CompactionAt(path, i)
	return ok
}

// AllPruned projects path as if a prune entry at its end stubbed
// every large tool result: each from the result as the session holds it,
// never a stub of a stub.
func AllPruned(path []session.Entry) []conv.Message {
	last := ""
	for i := len(path) - 1; i >= 0 && last == ""; i-- {
		if path[i].Message != nil {
			last = path[i].ID
		}
	}
	return Project(append(path[:len(path):len(path)], session.Entry{Type: session.TypePrune, Fields: pruneFields(last)}))
}

// pruneFields is the members of a prune entry up to the entry upTo.
func pruneFields(upTo string) []byte {
	b, _ := json.Marshal(session.Prune{UpToID: upTo})
	return b
}

// Reach is the index of the first entry of path that a request can still
// show: with a compaction in force, the first entry it keeps whole, or
// the compaction itself when it keeps none. Everything before it is
// superseded by the summary. It is 0 without a compaction in force, and
// whenever the entries from it on would not project exactly as path does
// (a prune boundary naming an entry before it, say, in a file edited by
// hand), or a tool result from it on does not follow its call there (a
// pruned result's stub names its call): path[Reach(path):] always
// projects as path.
//
// Entries appended later keep that true as long as none of them names an
// entry before Reach and each tool result follows its call: the runner's
// prunes and compactions only ever name entries after the compaction in
// force.
func Reach(path []session.Entry) int {
	ids := locator{path: path}
	for i := len(path) - 1; i >= 0; i-- {
		f, _, ok := CompactionAt(path, i)
		if !ok {
			continue
		}
		at := i
		if k, kept := ids.find(f.FirstKeptEntryID); kept && k < i {
			at = k
		}
		if at == 0 || !callsFirst(path[at:]) || !reflect.DeepEqual(Project(path[at:]), Project(path)) {
			return 0
		}
		return at
	}
	return 0
}

// callsFirst reports whether every tool result in path answers a call
// made before it in path: the stub of such a result, when pruned, names
// the same call whatever came before path.
func callsFirst(path []session.Entry) bool {
	calls := map[string]bool{}
	for i := range path {
		m := path[i].Message
		if m == nil {
			continue
		}
		for _, b := range m.Content {
			switch {
			case b.Type == conv.BlockToolUse && m.Role == conv.RoleAssistant:
				calls[b.ID] = true
			case b.Type == conv.BlockToolResult && !calls[b.ToolUseID]:
				return false
			}
		}
	}
	return true
}
