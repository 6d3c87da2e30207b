// Package progress turns a run's NDJSON events into lines for people: one
// short line per step on stderr, a live status line on a terminal, and
// GitHub Actions log groups and annotations. It reads only the events (the
// same redacted bytes the NDJSON stream carries) and never the runner's
// state, so what it shows is what a consumer of the stream could show.
//
// A Printer never blocks the run: lines are queued and written by one
// goroutine, and when the destination is slow or blocked the queue drops
// lines (and says how many once it can write again). A write error stops
// the output for good.
package progress

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// Options configures a Printer.
type Options struct {
	// Steps prints one line per step; without it only diagnostics (Diag)
	// and, with GitHub, the final error annotation are written.
	Steps bool
	// GitHub writes workflow commands: a log group per model turn's tool
	// calls, warnings and the final error as annotations, and makes sure
	// no other line can start a workflow command.
	GitHub bool
	// Live redraws a status line under the step lines (a terminal).
	Live bool
	// Width is the terminal's width for the status line (default 80).
	Width int
	// Start is when the run started, for the status line's elapsed time.
	Start time.Time
	// MaxCostUSD and MaxTotalTokens are the run's budgets: a line warns
	// once when the run has used 80% of one.
	MaxCostUSD     float64
	MaxTotalTokens int64
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
	// Tick is how often the status line redraws (default 1s).
	Tick time.Duration
}

// queueLen is how many writes may wait for a slow destination before
// lines are dropped.
const queueLen = 1024

// Printer consumes NDJSON event lines (Write) and diagnostics (Diag) and
// writes human lines to its destination.
type Printer struct {
	o    Options
	mu   sync.Mutex
	st   state
	diag []byte // a diagnostic's partial last line
	q    chan item
	done chan struct{}
	// closed is set by Close: later writes are dropped.
	closed  bool
	dropped int
}

// item is one write for the output goroutine: text (whole lines), and the
// status line to draw after it.
type item struct {
	text   string
	status string
}

// New returns a Printer writing to w. Close it to flush.
func New(w io.Writer, o Options) *Printer {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Start.IsZero() {
		o.Start = o.Now()
	}
	if o.Width <= 0 {
		o.Width = 80
	}
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
	p := &Printer{o: o, q: make(chan item, queueLen), done: make(chan struct{})}
	p.st.calls = map[string]string{}
	go p.output(w)
	return p
}

// Write takes one NDJSON event (the emitter writes each event whole, in
// one call). It never fails and never blocks on the destination.
func (p *Printer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return len(b), nil
	}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if unused(line) {
			p.stamp(line)
			continue
		}
		p.event(gjson.ParseBytes(line))
	}
	return len(b), nil
}

// WriteParts takes one event line in parts, as the emitter writes an entry
// event: its head, the session line, the tail. An entry the printer has no
// use for is read from the head and the line's first bytes, never joined.
func (p *Printer) WriteParts(parts ...[]byte) error {
	if len(parts) == 3 && bytes.HasPrefix(parts[0], entryPrefix) && unusedEntry(parts[1]) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.closed {
			p.stamp(parts[0])
		}
		return nil
	}
	p.Write(bytes.Join(parts, nil))
	return nil
}

// stamp notes the time of an event passed over: a turn lasts from the
// event before it, whatever that was.
func (p *Printer) stamp(head []byte) {
	if ts, err := time.Parse("2006-01-02T15:04:05.000Z", gjson.GetBytes(head, "timestamp").String()); err == nil {
		p.st.last = ts
	}
}

var entryPrefix = []byte(`{"type":"entry"`)

// unused reports whether line is an entry event the printer has no use for:
// any entry but the model's messages and compactions. It reads the few
// bytes at the entry's start that say so, never the whole line: a user
// message may hold a 50 MB prompt, which ParseBytes would copy.
func unused(line []byte) bool {
	if !bytes.HasPrefix(line, entryPrefix) {
		return false
	}
	switch gjson.GetBytes(line, "entry.type").String() {
	case "compaction":
		return false
	case "message":
		return gjson.GetBytes(line, "entry.message.role").String() != "assistant"
	}
	return true
}

// unusedEntry is unused for a session line on its own.
func unusedEntry(line []byte) bool {
	switch gjson.GetBytes(line, "type").String() {
	case "compaction":
		return false
	case "message":
		return gjson.GetBytes(line, "message.role").String() != "assistant"
	}
	return true
}

// Diag returns a writer for diagnostics (awl's "awl: …" lines on stderr):
// they go out in order with the step lines, through the same queue, so a
// blocked stderr stalls neither. Under GitHub, a line that would start a
// workflow command is prefixed, and "awl: warning: …" becomes a warning
// annotation.
func (p *Printer) Diag() io.Writer { return diagWriter{p} }

type diagWriter struct{ p *Printer }

func (d diagWriter) Write(b []byte) (int, error) {
	p := d.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return len(b), nil
	}
	p.diag = append(p.diag, b...)
	i := bytes.LastIndexByte(p.diag, '\n')
	if i < 0 {
		return len(b), nil
	}
	text := string(p.diag[:i+1])
	p.diag = append(p.diag[:0], p.diag[i+1:]...)
	p.diagLines(text)
	return len(b), nil
}

// diagLines queues whole diagnostic lines.
func (p *Printer) diagLines(text string) {
	var b strings.Builder
	for line := range strings.SplitSeq(strings.TrimSuffix(text, "\n"), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if p.o.GitHub {
			if rest, ok := strings.CutPrefix(line, "awl: warning: "); ok {
				b.WriteString(command("warning", "awl", rest))
				continue
			}
			line = defuse(line)
		}
		b.WriteString(line + "\n")
	}
	p.send(b.String())
}

// send queues text with the current status line; a full queue drops it.
func (p *Printer) send(text string) {
	it := item{text: text}
	if p.o.Live {
		it.status = p.st.status()
	}
	if p.dropped > 0 {
		select {
		case p.q <- item{text: fmt.Sprintf("awl: progress: %d writes dropped (stderr was not keeping up)\n", p.dropped), status: it.status}:
			p.dropped = 0
		default:
			p.dropped++
			return
		}
	}
	select {
	case p.q <- it:
	default:
		p.dropped++
	}
}

// Close flushes what is queued, waiting at most wait for a slow
// destination, and clears the status line. It is safe to call twice.
func (p *Printer) Close(wait time.Duration) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	var text string
	if len(p.diag) > 0 {
		// A diagnostic without its newline still goes out.
		p.diag = append(p.diag, '\n')
		p.diagLinesLocked()
	}
	if p.st.group {
		text = "::endgroup::\n"
		p.st.group = false
	}
	if text != "" {
		p.send(text)
	}
	p.closed = true
	close(p.q)
	p.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
	}
}

func (p *Printer) diagLinesLocked() {
	text := string(p.diag)
	p.diag = p.diag[:0]
	p.diagLines(text)
}

// output is the one goroutine that writes: queued lines, and on a
// terminal the status line, redrawn every tick.
func (p *Printer) output(w io.Writer) {
	defer close(p.done)
	var tick <-chan time.Time
	if p.o.Live {
		t := time.NewTicker(p.o.Tick)
		defer t.Stop()
		tick = t.C
	}
	failed := false
	status := ""
	write := func(s string) {
		if failed || s == "" {
			return
		}
		if _, err := io.WriteString(w, s); err != nil {
			failed = true
		}
	}
	for {
		select {
		case it, ok := <-p.q:
			if !ok {
				if p.o.Live && status != "" {
					write("\r\x1b[K")
				}
				return
			}
			if !p.o.Live {
				write(it.text)
				continue
			}
			status = it.status
			write("\r\x1b[K" + it.text + p.statusLine(status))
		case <-tick:
			if status != "" {
				write("\r\x1b[K" + p.statusLine(status))
			}
		}
	}
}

// statusLine is the live line: elapsed time first, cut to the width.
func (p *Printer) statusLine(status string) string {
	if status == "" {
		return ""
	}
	d := p.o.Now().Sub(p.o.Start)
	el := strconv.Itoa(int(d.Seconds())) + "s"
	if d >= time.Minute {
		el = duration(d)
	}
	s := "awl: " + el + " · " + status
	return cut(s, p.o.Width-1)
}
