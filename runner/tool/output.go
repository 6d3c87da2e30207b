package tool

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
)

// Output limits for bash: what a call keeps of a long output.
const (
	// OutputHeadBytes is how much of the start of a command's output is kept.
	OutputHeadBytes = 25 << 10
	// OutputTailBytes is how much of the end of a command's output is kept.
	OutputTailBytes = 25 << 10
)

// capture is an io.Writer that keeps the first head bytes and the last tail
// bytes written to it, and counts the rest, so a command's output costs
// bounded memory however much it prints. It is safe for concurrent use.
type capture struct {
	mu    sync.Mutex
	head  []byte
	tail  []byte // ring buffer of the last bytes; pos is where the next byte goes
	pos   int
	full  bool // the ring has wrapped
	total int64
	lines int64 // newlines written in total
	hcap  int
	tcap  int
}

func newCapture(head, tail int) *capture {
	return &capture{hcap: head, tcap: tail, head: make([]byte, 0, head), tail: make([]byte, tail)}
}

// Write keeps p's bytes as the head while it has room and rings the rest
// through the tail.
func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	c.total += int64(n)
	c.lines += int64(bytes.Count(p, []byte{'\n'}))
	if room := c.hcap - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if c.tcap == 0 {
		return n, nil
	}
	if len(p) >= c.tcap {
		copy(c.tail, p[len(p)-c.tcap:])
		c.pos, c.full = 0, true
		return n, nil
	}
	for len(p) > 0 {
		k := copy(c.tail[c.pos:], p)
		p = p[k:]
		c.pos += k
		if c.pos == c.tcap {
			c.pos, c.full = 0, true
		}
	}
	return n, nil
}

// String returns the kept output: all of it when it fit, else the head, a
// line saying how many bytes and lines were cut, and the tail. It is valid
// UTF-8 even when the cuts split a character.
func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var tail []byte
	if c.full {
		tail = append(append(tail, c.tail[c.pos:]...), c.tail[:c.pos]...)
	} else {
		tail = c.tail[:c.pos]
	}
	cut := c.total - int64(len(c.head)) - int64(len(tail))
	if cut == 0 {
		return strings.ToValidUTF8(string(c.head)+string(tail), "\uFFFD")
	}
	cutLines := c.lines - int64(bytes.Count(c.head, []byte{'\n'})) - int64(bytes.Count(tail, []byte{'\n'}))
	var b strings.Builder
	b.WriteString(strings.ToValidUTF8(string(c.head), "\uFFFD"))
	if len(c.head) > 0 && c.head[len(c.head)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[… %d bytes (%d lines) cut from the middle of %d bytes of output …]\n", cut, cutLines, c.total)
	b.WriteString(strings.ToValidUTF8(string(tail), "\uFFFD"))
	return b.String()
}
