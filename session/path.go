package session

import (
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
)

// EncodeCwd returns the directory name that groups cwd's sessions: the
// leading separator dropped, '/', '\' and ':' replaced by '-', wrapped in
// "--" ("/Users/travis/Code/awl" → "--Users-travis-Code-awl--"). Different
// directories can share a name ("/a-b" and "/a/b"), so a selection by cwd
// also checks each header's cwd.
func EncodeCwd(cwd string) string {
	cwd = filepath.Clean(cwd)
	cwd = strings.TrimLeft(cwd, `/\`)
	return "--" + strings.Map(func(r rune) rune {
		switch r {
		case '/', '\\', ':':
			return '-'
		}
		return r
	}, cwd) + "--"
}

// FileName returns a session's file name: "<timestamp>_<id>.jsonl", the
// timestamp the header's with ':' and '.' replaced by '-'.
func FileName(created time.Time, id string) string {
	var buf [40]byte
	b := make([]byte, 0, 64)
	for _, c := range appendTime(buf[:0], created) {
		switch c {
		case ':', '.':
			b = append(b, '-')
		case '"':
		default:
			b = append(b, c)
		}
	}
	return string(append(append(append(b, '_'), id...), ".jsonl"...))
}

// SessionIDFromPath returns the session id in a session file's name, or ""
// when the name is not "<timestamp>_<id>.jsonl".
func SessionIDFromPath(path string) string {
	base := filepath.Base(path)
	name, ok := strings.CutSuffix(base, ".jsonl")
	if !ok {
		return ""
	}
	_, id, ok := strings.Cut(name, "_")
	if !ok || len(id) != 36 {
		return ""
	}
	return id
}

// newSessionID returns a UUIDv7 whose time is created's, so the id, the
// header and the file name agree (and tests can pin all three).
func newSessionID(created time.Time, rnd io.Reader) (string, error) {
	var u uuid.UUID
	var err error
	if rnd == nil {
		u, err = uuid.NewV7()
	} else {
		u, err = uuid.NewV7FromReader(rnd)
	}
	if err != nil {
		return "", err
	}
	ms := uint64(created.UnixMilli())
	for i := 5; i >= 0; i-- {
		u[i] = byte(ms)
		ms >>= 8
	}
	return u.String(), nil
}
