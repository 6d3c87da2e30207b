package progress

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// state is what the Printer has learnt from the events so far.
type state struct {
	turns                int
	in, out, cacheR, cW  int64
	cost                 float64
	unpriced             bool // a request had no cost: the total is not known
	priced               bool // a request had a cost: before, no total is known
	last                 time.Time
	calls                map[string]string // call_id → the tool line's head
	denials              map[string]string // call_id → why the policy refused it (tool_denied)
	running              []string          // tools and checks running now
	group                bool              // a ::group:: is open
	costWarned, tokWarnd bool
}

// maxSummary is the most runes a tool input's summary takes.
const maxSummary = 80

// event handles one event.
func (p *Printer) event(ev gjson.Result) {
	st := &p.st
	ts := eventTime(ev)
	prev := st.last
	if !ts.IsZero() {
		st.last = ts
	}
	switch ev.Get("type").String() {
	case "session":
		if p.o.Steps {
			what := "new session"
			if ev.Get("resumed").Bool() {
				what = "resumed session"
			}
			p.send(fmt.Sprintf("awl: start: %s %s, %s %s, %d tools\n",
				oneLine(ev.Get("provider").String()), oneLine(ev.Get("model").String()), what,
				ev.Get("session_id").String(), len(ev.Get("tools").Array())))
		}
	case "entry":
		p.entry(ev.Get("entry"), prev, ts)
	case "tool_start":
		head := "awl: tool " + oneLine(ev.Get("name").String()) + ": " + summary(ev.Get("name").String(), ev.Get("input"))
		st.calls[ev.Get("call_id").String()] = head
		st.running = append(st.running, oneLine(ev.Get("name").String()))
		if p.o.Live {
			p.send("")
		}
	case "tool_denied":
		why := ev.Get("reason").String()
		if r := ev.Get("rule").String(); r != "" {
			why = "rule " + r + ": " + why
		}
		if st.denials == nil {
			st.denials = map[string]string{}
		}
		st.denials[ev.Get("call_id").String()] = oneLine(why)
	case "tool_end":
		p.toolEnd(ev)
	case "check_start":
		st.running = append(st.running, "check")
		if p.o.Live {
			p.send("")
		}
	case "check_end":
		p.stopRunning("check")
		if p.o.Steps {
			p.closeGroup()
			p.send(fmt.Sprintf("awl: check: %s -> %s, %s (attempt %d)\n",
				cut(oneLine(ev.Get("cmd").String()), maxSummary), exitWord(ev.Get("exit_code").Int()),
				duration(time.Duration(ev.Get("duration_ms").Int())*time.Millisecond), ev.Get("attempt").Int()))
		}
	case "prune":
		if p.o.Steps {
			p.closeGroup()
			p.send(fmt.Sprintf("awl: prune: old tool results shown as stubs, %d -> %d tokens\n",
				ev.Get("tokens_before").Int(), ev.Get("tokens_after").Int()))
		}
	case "compaction":
		if p.o.Steps {
			p.closeGroup()
			p.send(fmt.Sprintf("awl: compaction (%s): %d -> %d tokens, %s\n", oneLine(ev.Get("reason").String()),
				ev.Get("tokens_before").Int(), ev.Get("tokens_after").Int(),
				duration(time.Duration(ev.Get("duration_ms").Int())*time.Millisecond)))
		}
	case "result":
		p.closeGroup()
		if p.o.GitHub && ev.Get("exit_code").Int() != 0 {
			msg := ev.Get("error").String()
			if msg == "" {
				msg = ev.Get("reason").String()
			}
			p.send(command("error", fmt.Sprintf("awl exited %d (%s)", ev.Get("exit_code").Int(), ev.Get("reason").String()), msg))
		}
	}
	// retry and notice events are already said on stderr by the runner's
	// own diagnostic lines (Diag), which keep their order with these.
}

// entry handles an appended session line: assistant messages are model
// turns; a compaction entry's summary request costs too.
func (p *Printer) entry(e gjson.Result, prev, ts time.Time) {
	st := &p.st
	switch e.Get("type").String() {
	case "compaction":
		p.addUsage(e.Get("usage"), e.Get("costUsd"))
		return
	case "message":
	default:
		return
	}
	msg := e.Get("message")
	if msg.Get("role").String() != "assistant" {
		return
	}
	st.turns++
	p.addUsage(msg.Get("usage"), msg.Get("costUsd"))
	if !p.o.Steps {
		return
	}
	defer p.budget()
	u := msg.Get("usage")
	var b strings.Builder
	fmt.Fprintf(&b, "awl: turn %d: %d in, %d out", st.turns, u.Get("input").Int(), u.Get("output").Int())
	if n := u.Get("cacheRead").Int(); n > 0 {
		fmt.Fprintf(&b, ", %d cache read", n)
	}
	if n := u.Get("cacheWrite").Int(); n > 0 {
		fmt.Fprintf(&b, ", %d cache write", n)
	}
	if st.costKnown() {
		fmt.Fprintf(&b, ", %s so far", dollars(st.cost))
	}
	if share, ok := st.cacheShare(); ok {
		fmt.Fprintf(&b, ", %s cached", share)
	}
	// Stamps have millisecond resolution: a response appended within the
	// millisecond of the event before it took "0ms", which is said as
	// any other duration. Only a clock that went back leaves it out.
	if !prev.IsZero() && !ts.IsZero() && !ts.Before(prev) {
		fmt.Fprintf(&b, ", %s", duration(ts.Sub(prev)))
	}
	calls := 0
	for _, blk := range msg.Get("content").Array() {
		if blk.Get("type").String() == "toolUse" {
			calls++
		}
	}
	switch {
	case calls == 1:
		b.WriteString(", 1 tool call")
	case calls > 1:
		fmt.Fprintf(&b, ", %d tool calls", calls)
	}
	if r := msg.Get("stopReason").String(); r == "length" {
		b.WriteString(", cut at the output token cap")
	}
	p.closeGroup()
	if p.o.GitHub && calls > 0 {
		p.send(command("group", "", b.String()))
		st.group = true
		return
	}
	p.send(b.String() + "\n")
}

// addUsage adds an entry's usage and cost to the run's totals.
func (p *Printer) addUsage(u, cost gjson.Result) {
	st := &p.st
	st.in += u.Get("input").Int()
	st.out += u.Get("output").Int()
	st.cacheR += u.Get("cacheRead").Int()
	st.cW += u.Get("cacheWrite").Int()
	p.addCost(cost)
}

func (p *Printer) addCost(cost gjson.Result) {
	st := &p.st
	if cost.Type == gjson.Number {
		st.cost += cost.Float()
		st.priced = true
		return
	}
	st.unpriced = true
}

// budget warns once per budget when the run has used 80% of it.
func (p *Printer) budget() {
	st := &p.st
	if p.o.MaxCostUSD > 0 && !st.unpriced && !st.costWarned && st.cost >= 0.8*p.o.MaxCostUSD {
		st.costWarned = true
		p.send(fmt.Sprintf("awl: budget: %s of --max-cost-usd %s used (%.0f%%)\n", dollars(st.cost), dollars(p.o.MaxCostUSD), 100*st.cost/p.o.MaxCostUSD))
	}
	total := st.in + st.out + st.cacheR + st.cW
	if p.o.MaxTotalTokens > 0 && !st.tokWarnd && float64(total) >= 0.8*float64(p.o.MaxTotalTokens) {
		st.tokWarnd = true
		p.send(fmt.Sprintf("awl: budget: %d of --max-total-tokens %d used (%.0f%%)\n", total, p.o.MaxTotalTokens, 100*float64(total)/float64(p.o.MaxTotalTokens)))
	}
}

func (p *Printer) toolEnd(ev gjson.Result) {
	st := &p.st
	name := oneLine(ev.Get("name").String())
	p.stopRunning(name)
	id := ev.Get("call_id").String()
	head, ok := st.calls[id]
	if !ok {
		head = "awl: tool " + name + ":"
	}
	delete(st.calls, id)
	why := st.denials[id]
	delete(st.denials, id)
	if !p.o.Steps {
		return
	}
	var outcome string
	switch {
	case ev.Get("denied").Bool() && why != "":
		outcome = "denied by " + cut(why, 2*maxSummary)
	case ev.Get("denied").Bool():
		outcome = "denied"
	case ev.Get("exit_code").Exists():
		outcome = exitWord(ev.Get("exit_code").Int())
	case ev.Get("is_error").Bool():
		outcome = "error"
	default:
		outcome = "ok"
	}
	line := fmt.Sprintf("%s -> %s, %s, %s\n", head, outcome,
		duration(time.Duration(ev.Get("duration_ms").Int())*time.Millisecond), size(ev.Get("output_bytes").Int()))
	if p.o.GitHub && ev.Get("denied").Bool() {
		msg := "the tool policy refused a call to " + name
		if why != "" {
			msg += " by " + why
		}
		line += command("warning", "awl: tool denied", msg)
	}
	p.send(line)
}

func (p *Printer) stopRunning(name string) {
	st := &p.st
	for i, r := range st.running {
		if r == name {
			st.running = append(st.running[:i], st.running[i+1:]...)
			return
		}
	}
}

func (p *Printer) closeGroup() {
	if p.st.group {
		p.st.group = false
		p.send("::endgroup::\n")
	}
}

// costKnown reports whether the run's cost so far is known: every
// request had a cost, and there was one. Before the first response no
// cost is shown, not $0.0000: the model may have no price.
func (st *state) costKnown() bool { return st.priced && !st.unpriced }

// cacheShare is the run's share of input read from the prompt cache so
// far, as a whole percentage, once a request has read from it.
func (st *state) cacheShare() (string, bool) {
	all := st.in + st.cacheR + st.cW
	if st.cacheR <= 0 || all <= 0 {
		return "", false
	}
	return fmt.Sprintf("%d%%", int(math.Round(100*float64(st.cacheR)/float64(all)))), true
}

// status is the live line after the elapsed time.
func (st *state) status() string {
	var b strings.Builder
	fmt.Fprintf(&b, "turn %d · %d in / %d out", st.turns, st.in+st.cacheR+st.cW, st.out)
	if st.costKnown() {
		b.WriteString(" · " + dollars(st.cost))
	}
	if len(st.running) > 0 {
		b.WriteString(" · " + strings.Join(st.running, ", ") + " running")
	}
	if share, ok := st.cacheShare(); ok {
		b.WriteString(" · " + share + " cached")
	}
	return b.String()
}

// summary is a tool input on one line: the field that says what the call
// does (bash's command, a path, a pattern), else the compact JSON.
func summary(name string, in gjson.Result) string {
	var s string
	switch {
	case in.Type == gjson.String:
		s = in.String()
	case in.IsObject():
		for _, k := range []string{"command", "pattern", "path", "file_path", "url", "query"} {
			if v := in.Get(gjson.Escape(k)); v.Type == gjson.String {
				s = v.String()
				if k == "pattern" {
					if dir := in.Get("path"); dir.Type == gjson.String && dir.String() != "" {
						s += " in " + dir.String()
					}
				}
				break
			}
		}
		if s == "" {
			s = in.Raw
			if name == "ls" && strings.TrimSpace(s) == "{}" {
				s = "."
			}
		}
	default:
		s = in.Raw
	}
	return cut(oneLine(s), maxSummary)
}

// oneLine makes s one line of printable text: line breaks become ⏎, other
// control characters (an escape sequence from a tool) a space.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return '⏎'
		case r == '\r':
			return -1
		case unicode.IsControl(r), r == utf8.RuneError:
			return ' '
		}
		return r
	}, s)
}

// cut shortens s to n runes, ending it with … when cut.
func cut(s string, n int) string {
	if n < 1 || utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func exitWord(code int64) string {
	if code < 0 {
		return "killed"
	}
	return "exit " + strconv.FormatInt(code, 10)
}

// duration is d for a person: 850ms, 1.8s, 2m05s.
func duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

func size(n int64) string {
	switch {
	case n < 1024:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1<<20:
		return strconv.FormatFloat(float64(n)/1024, 'f', 1, 64) + " KiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}

func dollars(x float64) string {
	return "$" + strconv.FormatFloat(x, 'f', 4, 64)
}

func eventTime(ev gjson.Result) time.Time {
	t, err := time.Parse("2006-01-02T15:04:05.000Z", ev.Get("timestamp").String())
	if err != nil {
		return time.Time{}
	}
	return t
}

// command is a GitHub workflow command line, its value and title escaped
// by the workflow-command rules.
func command(name, title, value string) string {
	props := ""
	if title != "" {
		props = " title=" + escapeProperty(title)
	}
	return "::" + name + props + "::" + escapeData(value) + "\n"
}

func escapeData(s string) string { return percentEscape(s, "%\r\n") }

func escapeProperty(s string) string { return percentEscape(s, "%\r\n:,") }

// percentEscape writes each byte of s that is in set as %XX (upper-case
// hex). A loop, not a strings.Replacer, which builds its tables anew for
// each line.
func percentEscape(s, set string) string {
	if !strings.ContainsAny(s, set) {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); i++ {
		if c := s[i]; strings.IndexByte(set, c) >= 0 {
			b = append(b, '%', hex[c>>4], hex[c&15])
		} else {
			b = append(b, c)
		}
	}
	return string(b)
}

// defuse makes sure a line cannot be read as a workflow command: the
// runner takes a line whose first non-blank characters are "::" for one.
func defuse(line string) string {
	if strings.HasPrefix(strings.TrimLeft(line, " \t"), "::") {
		return "awl: " + line
	}
	return line
}
