package session

import (
	"bytes"
	"errors"
	"os"
	"unicode/utf8"
)

// Verification is what Verify found in one session file.
type Verification struct {
	Path string
	// ID is the session id its header gives; empty when the header is
	// unreadable.
	ID string
	// Problems lists what is wrong, in file order: each a *Error whose
	// message is "path:line: reason" when a line is at fault.
	Problems []*Error
	// Torn reports a last line whose write never completed. It is no
	// problem: a resume drops it, as after a crash mid-write.
	Torn bool
	// Session is the file as read, when it has no problems: its entries
	// without their Line (strings were decoded in place), nil otherwise.
	Session *Session
}

// Verify parses the whole file at path as a resume would, without locking
// or changing it, and reports every problem instead of the first: each line
// that is not a valid entry, and then, when every line is, anything else a
// resume would refuse (Load's checks).
//
// A sound file is read once and parsed once, as Open parses it; only a
// file that fails that is read again, line by line, to name each bad line.
func Verify(path string) Verification {
	f, err := os.Open(path)
	if err == nil {
		sess, err := read(path, f, false, inPlace)
		f.Close()
		if err == nil {
			return Verification{Path: path, ID: sess.Header.ID, Torn: sess.Recovered, Session: sess}
		}
	}
	return verifyLines(path)
}

// verifyLines is Verify of a file that does not read as a session: every
// line checked on its own, so that each bad one is reported.
func verifyLines(path string) Verification {
	v := Verification{Path: path}
	data, err := os.ReadFile(path)
	if err != nil {
		v.Problems = append(v.Problems, toError(openError(path, err)))
		return v
	}
	first := bytes.IndexByte(data, '\n')
	var h Header
	switch {
	case len(data) == 0:
		v.Problems = append(v.Problems, corruptError(path, 1, "empty file: no session header"))
		return v
	case first < 0:
		v.Problems = append(v.Problems, corruptError(path, 1, "incomplete session header (no newline)"))
		return v
	}
	if err := parseHeader(path, data[:first], &h, true); err != nil {
		v.Problems = append(v.Problems, toError(err))
		if isKind(err, KindNewer) {
			return v // lines of a newer format are not this awl's to judge
		}
	} else {
		v.ID = h.ID
	}
	off := first + 1
	for lineNo := 2; off < len(data); lineNo++ {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			v.Torn = true
			break
		}
		end += off
		line := data[off:end]
		if end+1 == len(data) && !validObject(line) {
			v.Torn = true
			break
		}
		var e Entry
		if err := entryLine(line, &e); err != nil {
			v.Problems = append(v.Problems, corruptError(path, lineNo, err.Error()))
		}
		off = end + 1
	}
	if len(v.Problems) == 0 {
		if _, err := Load(path); err != nil {
			v.Problems = append(v.Problems, toError(err))
		}
	}
	return v
}

// toError returns err as a *Error, wrapping one that isn't.
func toError(err error) *Error {
	var se *Error
	if errors.As(err, &se) {
		return se
	}
	return &Error{Kind: KindAccess, Msg: err.Error(), Err: err}
}

// entryLine decodes one line after the header into e, copying strings.
func entryLine(line []byte, e *Entry) error {
	if !utf8.Valid(line) {
		return errors.New("invalid UTF-8")
	}
	d := decoder{data: line, copyStrings: true}
	kind, err := d.line(nil, e)
	if err == nil && kind == parsedHeader {
		err = errors.New("a second session header")
	}
	return err
}
