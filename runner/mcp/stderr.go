package mcp

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
)

// lockedWriter serialises writes from several servers, so that lines from
// two of them never interleave inside a line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	if l.w == nil {
		return len(p), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(p)
	return len(p), nil
}

// maxLine is the longest server stderr line passed on whole; longer lines
// are passed on in pieces of this size, each prefixed.
const maxLine = 8 << 10

// lineWriter prefixes each line of a server's stderr. A partial last line
// is held until its newline, Flush, or maxLine bytes.
type lineWriter struct {
	mu     sync.Mutex
	prefix string
	w      io.Writer
	buf    []byte
	// last are the last few lines passed on, sanitized and cut, for the
	// error of a server that exits at start.
	last []string
}

// keepLines and keepLineBytes bound lineWriter.last.
const (
	keepLines     = 3
	keepLineBytes = 300
)

// tail is the last lines passed on, joined with " | ".
func (l *lineWriter) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.last, " | ")
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 && len(l.buf) < maxLine {
			break
		}
		if i < 0 || i >= maxLine {
			i = maxLine - 1
		}
		l.emit(l.buf[:i+1])
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) == 0 {
		l.buf = nil
	}
	return len(p), nil
}

// Flush passes on a partial last line.
func (l *lineWriter) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		l.emit(l.buf)
		l.buf = nil
	}
}

func (l *lineWriter) emit(line []byte) {
	text := sanitize(string(bytes.TrimRight(line, "\r\n")))
	out := make([]byte, 0, len(l.prefix)+len(text)+1)
	out = append(out, l.prefix...)
	out = append(out, text...)
	out = append(out, '\n')
	l.w.Write(out)
	if t := strings.TrimSpace(text); t != "" {
		if len(l.last) == keepLines {
			l.last = append(l.last[:0], l.last[1:]...)
		}
		l.last = append(l.last, cutBytes(t, keepLineBytes))
	}
}

// sanitize makes a server's text safe for a terminal: control bytes (an
// escape sequence, a carriage return that would overwrite the line) become
// \xNN, tabs stay, and invalid UTF-8 becomes U+FFFD.
func sanitize(t string) string {
	clean := true
	for i := 0; i < len(t); i++ {
		if c := t[i]; (c < 0x20 && c != '\t') || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return t
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(t, "\uFFFD") {
		switch {
		case r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
