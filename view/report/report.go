// Package report renders a session as one self-contained HTML page for a
// person: the prompts and answers, each tool call with its input and its
// output collapsed, images inline, prunes, compactions, check feedback and
// the end of each run marked, a per-turn chart of tokens and cost, and the
// totals at the top.
//
// The page loads nothing: its style is inline, it has no script, and
// images are data: URLs. Everything that comes from the session (the
// model's text, tool inputs and outputs, paths) is HTML-escaped.
package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/runner/modelctx"
	"github.com/awlrun/awl/session"
)

// Cuts: a long text shows its first lines, and the whole of it under a
// "show all" that the browser does not lay out until it is opened.
const (
	cutLines = 40
	cutBytes = 4096
)

// The entry types of docs/session-format.md besides messages.
const (
	typeRun         = "run"
	typePrune       = "prune"
	typeCompaction  = "compaction"
	typeTurnContext = "turnContext"
)

// Write renders the session s as HTML to w. It reads the session a line
// at a time, twice: once for the totals and the chart at the top, once to
// render each entry; a tool call's result is read from its own line when
// the call is rendered. What it holds is two entries and a few dozen bytes
// per entry, whatever the session's size.
func Write(w io.Writer, s *session.Walk) error {
	bw := newWriter(w)
	r := &renderer{w: bw, s: s, results: map[string]int{}, shown: map[string]bool{}}
	if err := r.page(); err != nil {
		return err
	}
	return bw.Flush()
}

func newWriter(w io.Writer) *bufio.Writer { return bufio.NewWriterSize(w, 256<<10) }

type renderer struct {
	w       *bufio.Writer
	s       *session.Walk
	results map[string]int // tool-use id → the entry that holds its result
	turns   []turn
	totals  totals
	shown   map[string]bool // tool results already shown with their call
	err     error           // the first error reading a result
}

// turn is one model response, for the chart.
type turn struct {
	u    conv.Usage
	cost *float64
}

type totals struct {
	u                 conv.Usage
	cost              float64
	unpriced          bool
	turns, calls      int
	errors            int
	runs, prunes      int
	compactions, chks int
}

func (r *renderer) page() error {
	if err := r.s.EntriesAt(r.scan); err != nil {
		return err
	}
	h := &r.s.Header
	r.w.WriteString("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<link rel=\"icon\" href=\"data:,\">\n<title>awl session ")
	r.esc(h.ID)
	r.w.WriteString("</title>\n<style>")
	r.w.WriteString(style)
	r.w.WriteString("</style>\n</head>\n<body>\n<header>\n<h1>awl session <code>")
	r.esc(h.ID)
	r.w.WriteString("</code></h1>\n<dl class=\"meta\">")
	r.meta("model", h.Provider+" / "+h.Model)
	if p, m := r.s.Provider, r.s.Model; p != h.Provider || m != h.Model {
		r.meta("now", p+" / "+m)
	}
	r.meta("cwd", h.Cwd)
	r.meta("created", h.Timestamp.UTC().Format("2006-01-02 15:04:05 UTC"))
	r.meta("file", r.s.Path)
	r.w.WriteString("</dl>\n")
	r.totalsTable()
	r.chart()
	r.w.WriteString("</header>\n<main>\n")
	n := 0
	err := r.s.Entries(func(e *session.Entry) error {
		r.entry(e, &n)
		return r.err
	})
	if err != nil {
		return err
	}
	r.w.WriteString("</main>\n<footer>Made by <code>awl sessions report</code>. Secrets were redacted when the session was written.</footer>\n</body>\n</html>\n")
	return nil
}

// scan takes in entry i of the active path: where the tool results are
// by call, the turns and the totals.
func (r *renderer) scan(i int, e *session.Entry) error {
	t := &r.totals
	switch e.Type {
	case session.TypeMessage:
	case typeRun:
		t.runs++
		return nil
	case typePrune:
		t.prunes++
		return nil
	case typeCompaction:
		t.compactions++
		if u := gjson.GetBytes(e.Fields, "usage"); u.Exists() {
			t.u = t.u.Add(usageOf(u))
			r.addCost(gjson.GetBytes(e.Fields, "costUsd"))
		}
		return nil
	default:
		return nil
	}
	m := e.Message
	if m == nil {
		return nil
	}
	{
		if modelctx.IsGateFeedback(*m) {
			t.chks++
		}
		for k := range m.Content {
			b := &m.Content[k]
			switch b.Type {
			case conv.BlockToolUse:
				t.calls++
			case conv.BlockToolResult:
				r.results[strings.Clone(b.ToolUseID)] = i // e is valid during this call only
				if b.IsError {
					t.errors++
				}
			}
		}
		if m.Role == conv.RoleAssistant {
			t.turns++
			var u conv.Usage
			if m.Usage != nil {
				u = *m.Usage
			}
			t.u = t.u.Add(u)
			var cost *float64
			if m.CostUSD != nil {
				t.cost += *m.CostUSD
				c := *m.CostUSD
				cost = &c
			} else if m.Usage != nil {
				t.unpriced = true
			}
			r.turns = append(r.turns, turn{u: u, cost: cost})
		}
	}
	return nil
}

func (r *renderer) addCost(c gjson.Result) {
	if c.Type == gjson.Number {
		r.totals.cost += c.Float()
		return
	}
	r.totals.unpriced = true
}

func usageOf(u gjson.Result) conv.Usage {
	return conv.Usage{Input: u.Get("input").Int(), Output: u.Get("output").Int(), CacheRead: u.Get("cacheRead").Int(), CacheWrite: u.Get("cacheWrite").Int()}
}

func (r *renderer) meta(k, v string) {
	r.w.WriteString("<dt>" + k + "</dt><dd>")
	r.esc(v)
	r.w.WriteString("</dd>")
}

func (r *renderer) totalsTable() {
	t := &r.totals
	cost := "unknown"
	if !t.unpriced {
		cost = dollars(t.cost)
	}
	r.w.WriteString("<table class=\"totals\"><tr>")
	share := "–"
	if v, ok := t.u.CacheReadShare(); ok {
		share = strconv.FormatFloat(100*v, 'f', 1, 64) + " %"
	}
	for _, h := range []string{"turns", "input", "output", "cache read", "cache write", "cost", "read from cache", "tool calls", "tool errors", "runs", "prunes", "compactions", "check feedback"} {
		r.w.WriteString("<th>" + h + "</th>")
	}
	r.w.WriteString("</tr><tr>")
	for _, v := range []string{itoa(t.turns), i64(t.u.Input), i64(t.u.Output), i64(t.u.CacheRead), i64(t.u.CacheWrite), cost, share, itoa(t.calls), itoa(t.errors), itoa(t.runs), itoa(t.prunes), itoa(t.compactions), itoa(t.chks)} {
		r.w.WriteString("<td>" + v + "</td>")
	}
	r.w.WriteString("</tr></table>\n")
}

// entry renders one entry of the active path; n counts the model turns.
func (r *renderer) entry(e *session.Entry, n *int) {
	switch e.Type {
	case session.TypeMessage:
		if e.Message != nil {
			r.message(e, n)
		}
	case typeRun:
		r.run(e)
	case typePrune:
		f := gjson.ParseBytes(e.Fields)
		r.w.WriteString("<div class=\"mark prune\"><b>prune</b> · older tool results shown to the model as stubs, up to entry <code>")
		r.esc(f.Get("upToId").String())
		fmt.Fprintf(r.w, "</code> · %d → %d tokens%s</div>\n", f.Get("tokensBefore").Int(), f.Get("tokensAfter").Int(), r.when(e))
	case typeCompaction:
		f := gjson.ParseBytes(e.Fields)
		r.w.WriteString("<div class=\"mark compaction\"><b>compaction</b> (")
		r.esc(f.Get("reason").String())
		fmt.Fprintf(r.w, ") · %d → %d tokens%s<details><summary>the summary the model works from now on</summary>", f.Get("tokensBefore").Int(), f.Get("tokensAfter").Int(), r.when(e))
		r.pre(f.Get("summary").String(), "")
		r.w.WriteString("</details></div>\n")
	case typeTurnContext:
		// A digest of what the model was shown: nothing to read here.
	default:
		r.w.WriteString("<div class=\"mark\"><b>")
		r.esc(e.Type)
		r.w.WriteString("</b> entry</div>\n")
	}
}

func (r *renderer) when(e *session.Entry) string {
	if e.Timestamp.IsZero() {
		return ""
	}
	return " · " + e.Timestamp.UTC().Format("15:04:05")
}

// run marks the end of a run: a step boundary.
func (r *renderer) run(e *session.Entry) {
	f := gjson.ParseBytes(e.Fields)
	code := f.Get("exitCode").Int()
	class := "ok"
	if code != 0 {
		class = "fail"
	}
	fmt.Fprintf(r.w, "<div class=\"mark run %s\"><b>end of run</b> · exit %d ", class, code)
	r.esc(f.Get("reason").String())
	fmt.Fprintf(r.w, " · %d turns", f.Get("turns").Int())
	if c := f.Get("costUsd"); c.Type == gjson.Number {
		r.w.WriteString(" · " + dollars(c.Float()))
	}
	if d := f.Get("durationMs"); d.Exists() {
		r.w.WriteString(" · " + (time.Duration(d.Int()) * time.Millisecond).Round(100*time.Millisecond).String())
	}
	r.w.WriteString(r.when(e))
	if msg := f.Get("error").String(); msg != "" {
		r.w.WriteString("<div class=\"err\">")
		r.esc(msg)
		r.w.WriteString("</div>")
	}
	r.w.WriteString("</div>\n")
}

func (r *renderer) message(e *session.Entry, n *int) {
	m := e.Message
	switch {
	case m.Role == conv.RoleSystem:
		r.w.WriteString("<details class=\"msg system\"><summary>system prompt</summary>")
		r.blocks(m)
		r.w.WriteString("</details>\n")
	case m.Role == conv.RoleUser && modelctx.IsContextualMessage(*m):
		r.w.WriteString("<details class=\"msg context\"><summary>context shown to the model</summary>")
		r.blocks(m)
		r.w.WriteString("</details>\n")
	case m.Role == conv.RoleUser && modelctx.IsGateFeedback(*m):
		r.w.WriteString("<section class=\"msg check\"><h3>check feedback</h3>")
		r.blocks(m)
		r.w.WriteString("</section>\n")
	case m.Role == conv.RoleUser:
		if !r.hasUnshown(m) {
			return // only results, each shown with its call
		}
		r.w.WriteString("<section class=\"msg user\"><h3>prompt")
		if e.Model != "" {
			r.w.WriteString(" · ")
			r.esc(e.Provider + " / " + e.Model)
		}
		r.w.WriteString(r.when(e) + "</h3>")
		r.blocks(m)
		r.w.WriteString("</section>\n")
	case m.Role == conv.RoleAssistant:
		*n++
		fmt.Fprintf(r.w, "<section class=\"msg assistant\" id=\"turn-%d\"><h3>turn %d", *n, *n)
		if m.Model != "" {
			r.w.WriteString(" · ")
			r.esc(m.Model)
		}
		if u := m.Usage; u != nil {
			fmt.Fprintf(r.w, " · %d in · %d out", u.Input, u.Output)
			if u.CacheRead > 0 || u.CacheWrite > 0 {
				fmt.Fprintf(r.w, " · cache %d read, %d written", u.CacheRead, u.CacheWrite)
			}
		}
		if m.CostUSD != nil {
			r.w.WriteString(" · " + dollars(*m.CostUSD))
		}
		if m.StopReason != "" && m.StopReason != conv.StopToolUse && m.StopReason != conv.StopEnd {
			r.w.WriteString(" · stop: ")
			r.esc(string(m.StopReason))
		}
		r.w.WriteString(r.when(e) + "</h3>")
		r.blocks(m)
		r.w.WriteString("</section>\n")
	default:
		r.w.WriteString("<section class=\"msg\"><h3>")
		r.esc(string(m.Role))
		r.w.WriteString("</h3>")
		r.blocks(m)
		r.w.WriteString("</section>\n")
	}
}

// hasUnshown reports whether m has something not shown elsewhere: a block
// that is not a tool result, or the result of a call not on the path.
func (r *renderer) hasUnshown(m *conv.Message) bool {
	for _, b := range m.Content {
		if b.Type != conv.BlockToolResult || !r.shown[b.ToolUseID] {
			return true
		}
	}
	return false
}

func (r *renderer) blocks(m *conv.Message) {
	for k := range m.Content {
		b := &m.Content[k]
		switch b.Type {
		case conv.BlockText:
			r.text(b.Text)
		case conv.BlockThinking:
			switch {
			case b.Redacted != "":
				r.w.WriteString("<div class=\"note\">thinking: redacted by the provider</div>")
			case strings.TrimSpace(b.Thinking) == "":
			default:
				r.w.WriteString("<details class=\"thinking\"><summary>thinking</summary>")
				r.pre(b.Thinking, "")
				r.w.WriteString("</details>")
			}
		case conv.BlockToolUse:
			r.toolCall(b)
		case conv.BlockToolResult:
			if r.shown[b.ToolUseID] {
				continue
			}
			r.w.WriteString("<div class=\"tool\"><div class=\"call\">result of <code>")
			r.esc(b.ToolUseID)
			r.w.WriteString("</code></div>")
			r.hook(b.Hook)
			r.output(b)
			r.w.WriteString("</div>")
		case conv.BlockImage:
			r.image(b.MimeType, b.Data)
		default:
			r.w.WriteString("<div class=\"note\">")
			r.esc(string(b.Type))
			r.w.WriteString(" block</div>")
		}
	}
}

// toolCall renders a call, its input, and its result when the session has
// one.
func (r *renderer) toolCall(b *conv.Block) {
	res := r.result(b.ID)
	class := "tool"
	if res != nil && res.IsError {
		class += " error"
	}
	r.w.WriteString("<div class=\"" + class + "\"><div class=\"call\"><b>")
	r.esc(b.Name)
	r.w.WriteString("</b> <span class=\"id\">")
	r.esc(b.ID)
	r.w.WriteString("</span></div>")
	in := gjson.Parse(b.Input)
	if cmd := in.Get("command"); in.IsObject() && cmd.Type == gjson.String {
		r.pre(cmd.String(), "input")
	} else {
		r.pre(b.Input, "input")
	}
	if res == nil {
		r.w.WriteString("<div class=\"note\">no result in the session</div></div>")
		return
	}
	r.shown[strings.Clone(b.ID)] = true
	r.hook(res.Hook)
	r.output(res)
	r.w.WriteString("</div>")
}

// hook renders what the pre-tool hooks decided about a call (--tool-hook):
// the hook that decided, allow or deny, why it denied, and the input it
// gave the call in place of the model's. Nothing when no hook ran.
func (r *renderer) hook(h *conv.HookRecord) {
	if h == nil {
		return
	}
	class := "hook"
	if h.Decision != "allow" {
		class += " deny"
	}
	r.w.WriteString("<div class=\"" + class + "\"><b>hook ")
	r.esc(h.Decision)
	r.w.WriteString("</b> · <code>")
	r.esc(h.Hook)
	r.w.WriteString("</code>")
	if h.Reason != "" {
		r.w.WriteString(" · ")
		r.esc(h.Reason)
	}
	r.w.WriteString("</div>")
	if h.Input != "" {
		r.pre(h.Input, "input the hook gave the call")
	}
}

// result is the result of the tool call id, read from the entry that
// holds it; nil when the session has none (or it could not be read: r.err
// says why, and the walk stops).
func (r *renderer) result(id string) *conv.Block {
	i, ok := r.results[id]
	if !ok {
		return nil
	}
	e, err := r.s.ReadEntry(i)
	if err != nil {
		r.err = err
		return nil
	}
	if e.Message == nil {
		return nil
	}
	for k := range e.Message.Content {
		if b := &e.Message.Content[k]; b.Type == conv.BlockToolResult && b.ToolUseID == id {
			return b
		}
	}
	return nil
}

// output renders a tool result, collapsed.
func (r *renderer) output(b *conv.Block) {
	status := "output"
	if b.IsError {
		status = "error"
	}
	fmt.Fprintf(r.w, "<details class=\"out\"><summary>%s · %s", status, size(len(b.Content)))
	if k := len(b.Attachments); k > 0 {
		fmt.Fprintf(r.w, " · %d image(s)", k)
	}
	r.w.WriteString("</summary>")
	r.pre(b.Content, "")
	for _, at := range b.Attachments {
		r.image(at.MimeType, at.Data)
	}
	r.w.WriteString("</details>")
}

// image writes an image inline, as a data: URL, when its type is one of the
// image types awl accepts and its data is base64.
func (r *renderer) image(mime, data string) {
	switch mime {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
	default:
		r.w.WriteString("<div class=\"note\">image of type ")
		r.esc(mime)
		r.w.WriteString(" not shown</div>")
		return
	}
	for i := 0; i < len(data); i++ {
		c := data[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			r.w.WriteString("<div class=\"note\">image with invalid data not shown</div>")
			return
		}
	}
	r.w.WriteString("<img alt=\"image\" src=\"data:" + mime + ";base64,")
	r.w.WriteString(data)
	r.w.WriteString("\">")
}

// text writes prose the model or the user wrote, cut when long.
func (r *renderer) text(s string) {
	if strings.TrimSpace(s) == "" {
		return
	}
	r.cut("div", "text", s)
}

// pre writes s preformatted, cut when long; label, when set, names it.
func (r *renderer) pre(s, label string) {
	if label != "" {
		r.w.WriteString("<div class=\"label\">" + label + "</div>")
	}
	r.cut("pre", "", s)
}

// cut writes s in a tag, its first cutLines lines or cutBytes bytes, and
// the whole under "show all" when that is not all of it.
func (r *renderer) cut(tag, class, s string) {
	open := "<" + tag
	if class != "" {
		open += " class=\"" + class + "\""
	}
	open += ">"
	head := headOf(s)
	r.w.WriteString(open)
	r.esc(head)
	if len(head) == len(s) {
		r.w.WriteString("</" + tag + ">")
		return
	}
	rest := s[len(head):]
	more := strings.Count(rest, "\n")
	if !strings.HasSuffix(rest, "\n") {
		more++
	}
	fmt.Fprintf(r.w, "<span class=\"more\">… %d more lines</span></%s><details class=\"all\"><summary>show all (%s)</summary>%s", more, tag, size(len(s)), open)
	r.esc(s)
	r.w.WriteString("</" + tag + "></details>")
}

// headOf is the first cutLines lines of s, at most cutBytes bytes, cut at
// a character boundary.
func headOf(s string) string {
	end := 0
	for k := 0; k < cutLines && end < len(s); k++ {
		i := strings.IndexByte(s[end:], '\n')
		if i < 0 {
			end = len(s)
			break
		}
		end += i + 1
	}
	if end > cutBytes {
		end = cutBytes
		for end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
	}
	return s[:end]
}

// esc writes s HTML-escaped, without control characters other than tab
// and newline.
func (r *renderer) esc(s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		var rep string
		switch {
		case c == '<':
			rep = "&lt;"
		case c == '>':
			rep = "&gt;"
		case c == '&':
			rep = "&amp;"
		case c == '"':
			rep = "&#34;"
		case c == '\'':
			rep = "&#39;"
		case c < 0x20 && c != '\n' && c != '\t', c == 0x7f:
			rep = ""
		default:
			continue
		}
		r.w.WriteString(s[last:i])
		r.w.WriteString(rep)
		last = i + 1
	}
	r.w.WriteString(s[last:])
}

func itoa(n int) string  { return strconv.Itoa(n) }
func i64(n int64) string { return strconv.FormatInt(n, 10) }
func dollars(x float64) string {
	return "$" + strconv.FormatFloat(x, 'f', 4, 64)
}

func size(n int) string {
	switch {
	case n < 1024:
		return strconv.Itoa(n) + " B"
	case n < 1<<20:
		return strconv.FormatFloat(float64(n)/1024, 'f', 1, 64) + " KiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}
