package tool

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"unicode/utf8"
)

// sniffBytes is how much of a file is looked at to tell text from binary.
const sniffBytes = 8 << 10

// looksBinary reports whether head, the start of a file, is not text: it
// holds a NUL byte or is not valid UTF-8. A character cut at the end of head
// does not count.
func looksBinary(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if utf8.Valid(head) {
		return false
	}
	// Allow up to utf8.UTFMax-1 bytes of a character cut by the sniff.
	for cut := 1; cut < utf8.UTFMax && cut <= len(head); cut++ {
		if utf8.Valid(head[:len(head)-cut]) && !utf8.FullRune(head[len(head)-cut:]) {
			return false
		}
	}
	return true
}

// lineReader reads lines of any length while keeping at most max bytes of
// each.
type lineReader struct {
	r   *bufio.Reader
	max int
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its newline, whether it was cut to max
// bytes, and io.EOF after the last line. A final line without a newline is
// still a line. A cut line does not end in a partial UTF-8 character.
func (l *lineReader) next() (line []byte, cut bool, err error) {
	var buf []byte
	n := 0 // content bytes of the line, newline excluded
	sawAny := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		sawAny = sawAny || len(chunk) > 0
		content := chunk
		if err == nil {
			content = chunk[:len(chunk)-1]
		}
		if room := l.max - len(buf); room > 0 {
			buf = append(buf, content[:min(room, len(content))]...)
		}
		n += len(content)
		switch {
		case err == nil:
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if !sawAny {
				return nil, false, io.EOF
			}
		default:
			return nil, false, err
		}
		if n > l.max {
			return trimPartialRune(buf), true, nil
		}
		return buf, false, nil
	}
}

// trimPartialRune drops an incomplete UTF-8 character from the end of b.
func trimPartialRune(b []byte) []byte {
	for k := 1; k < utf8.UTFMax && k <= len(b); k++ {
		if utf8.RuneStart(b[len(b)-k]) {
			if !utf8.FullRune(b[len(b)-k:]) {
				return b[:len(b)-k]
			}
			break
		}
	}
	return b
}
