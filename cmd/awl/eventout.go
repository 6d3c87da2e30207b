package main

import (
	"bytes"
	"io"

	"github.com/awlrun/awl/runner/event"
)

// The event writers take an entry event in parts (event.PartsWriter): its
// head, the session line itself and the tail. A 50 MB prompt's entry event
// is then written from the session line, never copied into an event of its
// own, and --output json drops it on its head alone.

// joinBelow is the event size under which a line is written in one Write,
// as before parts existed: one write of a pipe's size is atomic, and a
// small line costs one system call, not three.
const joinBelow = 64 << 10

// lines writes every event to w (--output ndjson).
type lines struct{ w io.Writer }

func (l lines) Write(p []byte) (int, error) { return l.w.Write(p) }

func (l lines) WriteParts(parts ...[]byte) error {
	if size(parts) < joinBelow {
		_, err := l.w.Write(event.Join(parts...))
		return err
	}
	for _, p := range parts {
		if _, err := l.w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

var resultPrefix = []byte(`{"type":"result"`)

// resultOnly passes through only the result event (for --output json). It
// looks at the line's first bytes without copying it: an entry event may
// hold a 50 MB prompt.
type resultOnly struct{ w io.Writer }

func (r resultOnly) Write(p []byte) (int, error) {
	if bytes.HasPrefix(p, resultPrefix) {
		return r.w.Write(p)
	}
	return len(p), nil
}

func (r resultOnly) WriteParts(parts ...[]byte) error {
	if len(parts) > 0 && bytes.HasPrefix(parts[0], resultPrefix) {
		_, err := r.w.Write(event.Join(parts...))
		return err
	}
	return nil
}

func size(parts [][]byte) int {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	return n
}
