package jsonrpc

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/awlrun/awl/runner/tool"
)

// MaxMessage is the longest line from a stdio server that is passed on to
// the MCP client whole: the SDK's own limit for one message, past which it
// drops the connection as if the server had stopped. A longer line is read
// through bigMessage instead, in bounded memory, and replaced by a short
// message in its stead: a tool result cut like any other, the server kept.
const MaxMessage = 16 << 20

// Of a big result's text, bigMessage keeps the first headKeep and the last
// tailKeep bytes (as the server escaped them): with the note between them
// the text stays within what a tool result keeps (runner/tool's head and
// tail), so the manager cuts it no further.
const (
	headKeep = tool.OutputHeadBytes - 1024
	tailKeep = tool.OutputTailBytes - 1024
)

// bigMessage scans one JSON-RPC message too long to hold, byte by byte,
// and keeps what a replacement needs: the top-level id and whether there
// is a method (a request or notification from the server) or an error; of
// a result, its isError and the head and tail of the text of its content
// items; of an error, its code and the head of its message.
type bigMessage struct {
	size int64

	// The scanner: the open containers, and the string being read.
	stack      []frame
	inString   bool
	escape     bool
	isKey      bool
	key        []byte // the key being read, up to maxKey bytes
	scalar     []byte // a number or literal being read at a kept path
	scalarPath int

	id, isError, errCode []byte
	method, hasError     bool
	errMessage           []byte

	// text is the content items' text: its first headKeep bytes, and a
	// ring of its last tailKeep.
	texts      int
	items      int
	textBytes  int64
	head       []byte
	tail       []byte
	tailStart  int // where the ring's oldest byte is, once full
	inText     bool
	inErrorMsg bool
}

// frame is an open object or array; key is an object's current key.
type frame struct {
	array bool
	key   string
}

const maxKey = 32

// Kept paths of scalars.
const (
	pathNone = iota
	pathID
	pathIsError
	pathErrCode
)

func (m *bigMessage) Write(p []byte) (int, error) {
	m.size += int64(len(p))
	for _, b := range p {
		m.byte(b)
	}
	return len(p), nil
}

func (m *bigMessage) byte(b byte) {
	if m.inString {
		switch {
		case m.escape:
			m.escape = false
		case b == '\\':
			m.escape = true
		case b == '"':
			m.inString = false
			m.endString()
			return
		}
		switch {
		case m.isKey:
			if len(m.key) <= maxKey {
				m.key = append(m.key, b)
			}
		case m.inText:
			m.keepText(b)
		case m.inErrorMsg:
			if len(m.errMessage) < 1024 {
				m.errMessage = append(m.errMessage, b)
			}
		case m.scalarPath == pathID:
			if len(m.scalar) < 256 {
				m.scalar = append(m.scalar, b)
			}
		}
		return
	}
	if m.scalar != nil || m.scalarPath != pathNone {
		if isScalarByte(b) {
			if len(m.scalar) < 256 {
				m.scalar = append(m.scalar, b)
			}
			return
		}
		m.endScalar()
	}
	switch b {
	case ' ', '\t', '\r', '\n':
	case '{':
		m.startValue()
		m.stack = append(m.stack, frame{})
		m.isKey = true
	case '[':
		m.startValue()
		m.stack = append(m.stack, frame{array: true})
	case '}', ']':
		if len(m.stack) > 0 {
			m.stack = m.stack[:len(m.stack)-1]
		}
		m.isKey = false
	case ',':
		if n := len(m.stack); n > 0 && !m.stack[n-1].array {
			m.isKey = true
		}
	case ':':
		m.isKey = false
	case '"':
		m.inString = true
		if m.isKey {
			m.key = m.key[:0]
			return
		}
		m.startValue()
		switch m.path() {
		case "id":
			m.scalarPath = pathID
			m.scalar = append(m.scalar[:0], '"')
		case "result.content.*.text":
			if m.texts > 0 {
				m.keepText('\\')
				m.keepText('n')
			}
			m.texts++
			m.inText = true
		case "error.message":
			m.inErrorMsg = true
		}
	default:
		m.startValue()
		switch m.path() {
		case "id":
			m.scalarPath = pathID
		case "result.isError":
			m.scalarPath = pathIsError
		case "error.code":
			m.scalarPath = pathErrCode
		}
		m.scalar = append(m.scalar[:0], b)
	}
}

// startValue notes a value beginning at the current path.
func (m *bigMessage) startValue() {
	switch m.path() {
	case "method":
		m.method = true
	case "error":
		m.hasError = true
	case "result.content.*":
		m.items++
	}
}

func (m *bigMessage) endString() {
	if m.isKey {
		if n := len(m.stack); n > 0 {
			m.stack[n-1].key = string(m.key)
		}
		return
	}
	if m.scalarPath == pathID {
		m.scalar = append(m.scalar, '"')
		m.endScalar()
	}
	m.inText = false
	m.inErrorMsg = false
}

func (m *bigMessage) endScalar() {
	v := append([]byte(nil), m.scalar...)
	switch m.scalarPath {
	case pathID:
		m.id = v
	case pathIsError:
		m.isError = v
	case pathErrCode:
		m.errCode = v
	}
	m.scalar = nil
	m.scalarPath = pathNone
}

func isScalarByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b == '-' || b == '+' || b == '.' || b == 'E'
}

// path is where the scanner is: the keys of the open objects joined by
// dots, an array's elements as *.
func (m *bigMessage) path() string {
	s := ""
	for i, f := range m.stack {
		if i > 0 {
			s += "."
		}
		if f.array {
			s += "*"
		} else {
			s += f.key
		}
	}
	return s
}

func (m *bigMessage) keepText(b byte) {
	m.textBytes++
	if len(m.head) < headKeep {
		m.head = append(m.head, b)
		return
	}
	if len(m.tail) < tailKeep {
		m.tail = append(m.tail, b)
		return
	}
	m.tail[m.tailStart] = b
	m.tailStart = (m.tailStart + 1) % tailKeep
}

// replacement is the message passed on in the big one's stead, and what
// awl says on stderr about it; nil when the message is not a response
// (a request or notification from the server, or no id): it is dropped.
func (m *bigMessage) replacement() ([]byte, string) {
	size := fmt.Sprintf("%.1f MiB", float64(m.size)/(1<<20))
	if m.method || len(m.id) == 0 || !json.Valid(m.id) {
		return nil, fmt.Sprintf("a %s message that is not a response dropped (over the %d MiB a stdio message may hold)", size, MaxMessage>>20)
	}
	if m.hasError {
		code := json.RawMessage(m.errCode)
		if !json.Valid(code) {
			code = json.RawMessage("-32603")
		}
		msg := decodeEscaped(m.errMessage, false) + fmt.Sprintf(" [a %s error response, cut]", size)
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(m.id), "error": map[string]any{"code": code, "message": msg}})
		return b, fmt.Sprintf("a %s error response cut", size)
	}
	tail := append(append([]byte(nil), m.tail[m.tailStart:]...), m.tail[:m.tailStart]...)
	head, rest := decodeEscaped(m.head, false), decodeEscaped(tail, true)
	cutBytes := m.textBytes - int64(len(m.head)) - int64(len(tail))
	note := fmt.Sprintf("[… a %s result, over the %d MiB a stdio message may hold: cut as it was read; %d bytes of its text (as sent) left out", size, MaxMessage>>20, cutBytes)
	if n := m.items - m.texts; n > 0 {
		note += fmt.Sprintf(", and %d content item(s) that are not text", n)
	}
	note += " …]"
	text := head + "\n" + note
	if rest != "" {
		text += "\n" + rest
	}
	result := map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
	if string(m.isError) == "true" {
		result["isError"] = true
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(m.id), "result": result})
	return b, fmt.Sprintf("a %s result cut to its text's first and last %d KiB", size, (tool.OutputHeadBytes>>10)-1)
}

// decodeEscaped decodes a piece of a JSON string's body cut out of the
// middle: a head may end inside an escape or a character, a tail begin
// inside one; those bytes are left out.
func decodeEscaped(raw []byte, tail bool) string {
	for trim := 0; trim <= 12 && trim <= len(raw); trim++ {
		piece := raw[:len(raw)-trim]
		if tail {
			piece = raw[trim:]
		}
		if !utf8.Valid(piece) {
			continue
		}
		var s string
		if json.Unmarshal(append(append([]byte{'"'}, piece...), '"'), &s) == nil {
			return s
		}
	}
	return ""
}
