package mcp

import (
	"bytes"
	"io"
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
	out := make([]byte, 0, len(l.prefix)+len(line)+1)
	out = append(out, l.prefix...)
	out = append(out, bytes.TrimRight(line, "\r\n")...)
	out = append(out, '\n')
	l.w.Write(out)
}
