package session

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/internal/oneline"
)

// promptHead is how much of a message line longer than itself the
// listing reads to find a first prompt: the entry's fields, the message's
// role and the start of its text, which is all that a listing shows (200
// characters). A 50 MB prompt costs a listing this, not 50 MB twice.
const promptHead = 64 << 10

// contextTail is how much of a cut text's end the listing decodes to tell
// a context block (which ends with its marker) from a prompt.
const contextTail = 4 << 10

// linePrompt is what the message line at p gives the listing: the first
// prompt it shows, "" when the line holds none (not a user message, only
// context or tool results). decided is false when the line cannot be read
// so (another writer's key order, a cut that is not inside a text): the
// caller decodes it whole.
func (sc *infoScanner) linePrompt(f *os.File, p linePos) (prompt string, decided bool, err error) {
	head, err := sc.readLine(f, p.off, p.off+min(p.n, promptHead))
	if err != nil {
		return "", false, err
	}
	closed, cut, ok := closeJSON(head)
	if !ok {
		return "", false, nil
	}
	var e Entry
	d := decoder{data: closed, copyStrings: true}
	if _, err := d.line(nil, &e); err != nil || e.Message == nil {
		return "", false, nil
	}
	switch e.Message.Role {
	case conv.RoleUser:
	case "":
		return "", false, nil // the role comes after the cut
	default:
		return "", true, nil
	}
	blocks := e.Message.Content
	for i, b := range blocks {
		// The text of the last block goes on past what was read.
		textCut := cut && i == len(blocks)-1 && cutKey(head) == "text"
		if b.Type != conv.BlockText || strings.TrimSpace(b.Text) == "" && !textCut {
			continue
		}
		text := b.Text
		if textCut {
			s := oneline.Cut(text, promptCut)
			if s == "" {
				return "", false, nil // what was read is blank
			}
			// Its end says whether it is a context block.
			tail, last, err := sc.stringTail(f, p.off+int64(len(head)), p.off+p.n, endsEscaped(head))
			if err != nil {
				return "", false, err
			}
			if sc.isContext != nil && sc.isContext(text+"\n"+tail) {
				// Blocks after it were not read: only the last one
				// leaves no prompt unseen.
				return "", last, nil
			}
			if !strings.HasSuffix(s, "…") {
				s += "…"
			}
			return s, true, nil
		}
		if sc.isContext != nil && sc.isContext(text) {
			continue
		}
		return oneline.Cut(text, promptCut), true, nil
	}
	return "", !cut, nil
}

// closeJSON makes head, the start of a JSON object cut inside a string
// value, a whole object: the string cut where it still decodes (no half
// escape, no half rune) and closed, then every open object and array.
// cut reports that head was cut (not whole); ok is false when head was
// cut anywhere but inside a string value.
func closeJSON(head []byte) (closed []byte, cut, ok bool) {
	var stack []byte
	inStr, esc, isKey := false, false, false
	strStart := 0
	wantKey := false // in an object, before a key
	for i, c := range head {
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr, isKey, strStart = true, wantKey, i
		case '{':
			stack = append(stack, '}')
			wantKey = true
		case '[':
			stack = append(stack, ']')
			wantKey = false
		case '}', ']':
			if len(stack) == 0 {
				return nil, false, false
			}
			stack = stack[:len(stack)-1]
			wantKey = false
		case ',':
			wantKey = len(stack) > 0 && stack[len(stack)-1] == '}'
		case ':':
			wantKey = false
		}
	}
	if len(stack) == 0 && !inStr {
		return head, false, true
	}
	if !inStr || isKey {
		return nil, true, false
	}
	s := trimPartialEscape(head[strStart+1:])
	closed = make([]byte, 0, strStart+1+len(s)+1+len(stack))
	closed = append(append(append(closed, head[:strStart+1]...), s...), '"')
	for i := len(stack) - 1; i >= 0; i-- {
		closed = append(closed, stack[i])
	}
	return closed, true, true
}

// trimPartialEscape cuts the end of a JSON string's raw bytes, cut
// anywhere, back to where they decode: before a lone backslash, a \u
// escape missing digits (or a high surrogate missing its low half) or a
// rune missing bytes.
func trimPartialEscape(s []byte) []byte {
	for {
		n := len(s)
		// A run of backslashes at the end: an odd one starts an escape.
		k := 0
		for k < n && s[n-1-k] == '\\' {
			k++
		}
		if k%2 == 1 {
			s = s[:n-1]
			continue
		}
		// A \u escape with fewer than four digits, or a high surrogate
		// whose low half is cut.
		if i := bytes.LastIndex(s, []byte(`\u`)); i >= 0 && i >= n-11 && escapedAt(s, i) {
			if n-i < 6 {
				s = s[:i]
				continue
			}
			if v, err := strconv.ParseUint(string(s[i+2:i+6]), 16, 16); err == nil && utf16.IsSurrogate(rune(v)) && v < 0xdc00 && n-i < 12 {
				s = s[:i]
				continue
			}
		}
		// A rune cut short.
		j := n - 1
		for j >= 0 && j > n-utf8.UTFMax && !utf8.RuneStart(s[j]) {
			j--
		}
		if j >= 0 && !utf8.FullRune(s[j:]) {
			s = s[:j]
			continue
		}
		return s
	}
}

// escapedAt reports whether the backslash at s[i] starts an escape (an
// even number of backslashes before it).
func escapedAt(s []byte, i int) bool {
	k := 0
	for i-1-k >= 0 && s[i-1-k] == '\\' {
		k++
	}
	return k%2 == 0
}

// cutKey is the key whose string value head was cut in.
func cutKey(head []byte) string {
	i := bytes.LastIndex(head, []byte(`":"`))
	if i < 0 {
		return ""
	}
	j := bytes.LastIndexByte(head[:i], '"')
	if j < 0 {
		return ""
	}
	return string(head[j+1 : i])
}

// endsEscaped reports whether head, cut inside a string, ends in the
// middle of an escape's backslash: the next byte is escaped.
func endsEscaped(head []byte) bool {
	k := 0
	for k < len(head) && head[len(head)-1-k] == '\\' {
		k++
	}
	return k%2 == 1
}

// stringTail reads on from off, inside a JSON string (esc: its next byte
// is escaped), to the string's closing quote, before end, a chunk at a
// time, and returns the decoded text of its last contextTail bytes ("" if
// the line ends first), and whether the string is the text of a message's
// last block (awl's encoder closes it with "}]}). The start of those
// bytes may fall inside an escape; only their end matters to the caller.
func (sc *infoScanner) stringTail(f *os.File, off, end int64, esc bool) (string, bool, error) {
	backslashes := 0 // the run of backslashes that ended the last chunk
	if esc {
		backslashes = 1
	}
	for off < end {
		chunk := sc.chunk[:min(int64(len(sc.chunk)), end-off)]
		if _, err := f.ReadAt(chunk, off); err != nil {
			return "", false, err
		}
		for from := 0; ; {
			q := bytes.IndexByte(chunk[from:], '"')
			if q < 0 {
				break
			}
			q += from
			k := 0
			for q-1-k >= 0 && chunk[q-1-k] == '\\' {
				k++
			}
			if q-k == 0 {
				k += backslashes
			}
			if k%2 == 0 {
				q := off + int64(q)
				var after [4]byte
				n, _ := f.ReadAt(after[:], q)
				text, err := sc.tailText(f, max(q-contextTail, 0), q)
				return text, string(after[:n]) == `"}]}`, err
			}
			from = q + 1
		}
		k := 0
		for k < len(chunk) && chunk[len(chunk)-1-k] == '\\' {
			k++
		}
		if k == len(chunk) {
			backslashes += k
		} else {
			backslashes = k
		}
		off += int64(len(chunk))
	}
	return "", false, nil
}

// tailText decodes the raw string bytes [start, end) leniently: an escape
// it cannot read is dropped.
func (sc *infoScanner) tailText(f *os.File, start, end int64) (string, error) {
	raw := make([]byte, end-start)
	if _, err := f.ReadAt(raw, start); err != nil {
		return "", err
	}
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			b.WriteByte(c)
			continue
		}
		i++
		switch raw[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b', 'f':
		case 'u':
			if i+4 < len(raw) {
				if v, err := strconv.ParseUint(string(raw[i+1:i+5]), 16, 16); err == nil {
					b.WriteRune(rune(v))
				}
				i += 4
			}
		default:
			b.WriteByte(raw[i])
		}
	}
	return b.String(), nil
}
