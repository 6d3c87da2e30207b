package jsonrpc

import (
	"bufio"
	"bytes"
	"io"
	"sync"

	"github.com/tidwall/gjson"
)

// NewLines reads r, a stdio server's stdout: its JSON-RPC lines are read
// from Lines, the others written to note, and a word about a line too long
// to pass on whole to warn.
func NewLines(r io.ReadCloser, note, warn io.Writer) *Lines {
	return &Lines{r: r, br: bufio.NewReaderSize(r, 64<<10), note: note, warn: warn}
}

// Lines reads a stdio server's stdout and passes on only its JSON-RPC
// messages: lines that are JSON objects with a "jsonrpc" member (or arrays
// of them). Other lines, a banner or a JSON log line such as pino's
// {"level":30,…}, go to note. A line is held whole before it is judged, up
// to MaxMessage bytes; a longer one is scanned as it is read (bigMessage)
// and replaced by a short message, which warn says.
type Lines struct {
	r    io.Closer
	br   *bufio.Reader
	note io.Writer
	warn io.Writer
	mu   sync.Mutex
	// pending is the rest of a line being passed on.
	pending []byte
	line    []byte
	big     *bigMessage
}

func (j *Lines) Read(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for len(j.pending) == 0 {
		chunk, err := j.br.ReadSlice('\n')
		if j.big != nil {
			j.big.Write(chunk)
		} else {
			j.line = append(j.line, chunk...)
			if len(j.line) > MaxMessage {
				j.big = &bigMessage{}
				j.big.Write(j.line)
				j.line = nil
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if j.big != nil {
			msg, say := j.big.replacement()
			j.big = nil
			j.warn.Write([]byte(say + "\n"))
			if msg != nil {
				j.pending = append(append(j.pending[:0], msg...), '\n')
			}
		} else if len(j.line) > 0 {
			if isJSONRPC(j.line) {
				j.pending = append(j.pending[:0], j.line...)
			} else if len(bytes.TrimSpace(j.line)) > 0 {
				j.note.Write(j.line)
				if j.line[len(j.line)-1] != '\n' {
					j.note.Write([]byte("\n"))
				}
			}
			j.line = j.line[:0]
		}
		if err != nil && len(j.pending) == 0 {
			return 0, err
		}
		if err != nil {
			break
		}
	}
	n := copy(p, j.pending)
	j.pending = j.pending[n:]
	return n, nil
}

// isJSONRPC reports whether line is a JSON-RPC message: a JSON object with
// a "jsonrpc" member, or an array whose first element is one.
func isJSONRPC(line []byte) bool {
	t := bytes.TrimSpace(line)
	if len(t) == 0 || !gjson.ValidBytes(t) {
		return false
	}
	switch t[0] {
	case '{':
		return gjson.GetBytes(t, "jsonrpc").Exists()
	case '[':
		return gjson.GetBytes(t, "0.jsonrpc").Exists()
	}
	return false
}

func (j *Lines) Close() error { return j.r.Close() }
