package session

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/awlrun/awl/conv"
)

// Walk reads a session file as Load does, without locking it, but a line
// at a time, so that what it holds is the largest line and its decoded
// entry, and a few dozen bytes per entry, whatever the file's size: for
// showing a session of any size (`awl sessions show`). OpenWalk reads the
// file once to check every line and find the active path; Entries reads
// it again and hands over the active path's entries.
type Walk struct {
	Path   string
	Header Header
	// Recovered is set when the last line is torn (a writer may be
	// appending it): it is left out, as Load leaves it out.
	Recovered bool
	// Provider and Model are the active ones, as Session.ActiveModel
	// says.
	Provider, Model string
	// Largest is the length of the longest line: what a Walk holds, twice
	// at most, besides a few dozen bytes per entry.
	Largest int

	f      *os.File
	body   int64   // where the entries begin (after the header line)
	end    int64   // where the last complete entry line ends
	onPath []bool  // by entry, in file order
	starts []int64 // where each entry's line begins
	buf    []byte
	// at is the entry ReadEntry read last (-1: none), decoded from abuf.
	at    int
	atE   Entry
	abuf  []byte
	atErr error
}

// OpenWalk opens the session file at path and reads it through: the
// header, every entry line decoded and checked as Load checks it (the same
// errors, `path:line: reason`), the entry chain, and the active path.
func OpenWalk(path string) (*Walk, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	w := &Walk{Path: path, f: f, at: -1}
	if err := w.index(); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// Close closes the file.
func (w *Walk) Close() error { return w.f.Close() }

// node is what the first pass keeps of an entry.
type node struct {
	id, parent      string
	provider, model string // of a user message that names them
}

// index is the first pass.
func (w *Walk) index() error {
	if fi, err := w.f.Stat(); err != nil || fi.IsDir() {
		if err == nil {
			err = errors.New("is a directory")
		}
		return accessError(w.Path, "cannot read session file", err)
	}
	r := bufio.NewReaderSize(w.f, 256<<10)
	// The longest line first, so that the one buffer lines are read into
	// is made once at its size, rather than grown through every size up
	// to it, each left for the collector.
	longest, err := longestLine(r)
	if err != nil {
		return accessError(w.Path, "cannot read session file", err)
	}
	if _, err := w.f.Seek(0, io.SeekStart); err != nil {
		return accessError(w.Path, "cannot read session file", err)
	}
	r.Reset(w.f)
	w.Largest = longest
	w.buf = make([]byte, 0, longest+1)
	line, complete, err := w.readLine(r)
	if err != nil {
		return err
	}
	switch {
	case len(line) == 0 && !complete:
		return corruptError(w.Path, 1, "empty file: no session header")
	case !complete:
		return corruptError(w.Path, 1, "incomplete session header (no newline)")
	}
	if err := parseHeader(w.Path, line, &w.Header, true); err != nil {
		return err
	}
	w.body = int64(len(line)) + 1
	w.end = w.body
	var nodes []node
	var e Entry
	// Decoded in place: only the ids and the model are kept, as copies.
	d := decoder{inPlace: true}
	for lineNo := 2; ; lineNo++ {
		line, complete, err := w.readLine(r)
		if err != nil {
			return err
		}
		if !complete {
			w.Recovered = len(line) > 0 // no newline: the write never completed
			break
		}
		if _, perr := r.Peek(1); perr == io.EOF && !validObject(line) {
			w.Recovered = true // the last line, torn
			break
		}
		if !utf8.Valid(line) {
			return corruptError(w.Path, lineNo, "invalid UTF-8")
		}
		e = Entry{}
		d.reset(line)
		kind, err := d.line(nil, &e)
		if err == nil && kind == parsedHeader {
			err = errors.New("a second session header")
		}
		if err != nil {
			return corruptError(w.Path, lineNo, err.Error())
		}
		w.starts = append(w.starts, w.end)
		n := node{id: strings.Clone(e.ID), parent: strings.Clone(e.ParentID)}
		if e.Message != nil && e.Message.Role == conv.RoleUser {
			n.provider, n.model = strings.Clone(e.Provider), strings.Clone(e.Model)
		}
		nodes = append(nodes, n)
		w.end += int64(len(line)) + 1
	}
	return w.activePath(nodes)
}

// activePath checks the chain as checkChain does and marks the entries
// from the root to the leaf, as Session.path finds them.
func (w *Walk) activePath(nodes []node) error {
	seen := make(map[string]int, len(nodes))
	for i, n := range nodes {
		line := i + 2
		if n.parent != "" {
			if _, ok := seen[n.parent]; !ok {
				return corruptError(w.Path, line, fmt.Sprintf("parentId %q names no earlier entry", n.parent))
			}
		}
		if n.id == "" {
			continue
		}
		if first, dup := seen[n.id]; dup {
			return corruptError(w.Path, line, fmt.Sprintf("duplicate entry id %q (first on line %d)", n.id, first))
		}
		seen[n.id] = line
	}
	w.onPath = make([]bool, len(nodes))
	w.Provider, w.Model = w.Header.Provider, w.Header.Model
	model := false
	for i := len(nodes) - 1; i >= 0; i-- {
		if nodes[i].id == "" {
			continue
		}
		for i >= 0 {
			w.onPath[i] = true
			if n := nodes[i]; !model && (n.provider != "" || n.model != "") {
				w.Provider, w.Model, model = n.provider, n.model, true
			}
			p := nodes[i].parent
			if p == "" {
				break
			}
			i = seen[p] - 2
		}
		break
	}
	return nil
}

// Entries calls fn with each entry of the active path, in order, read
// again from the file up to where OpenWalk found its last complete line.
// The entry and its strings are valid only during the call (they share the
// line's buffer, unescaped in place), and Line is nil. fn's error stops
// the walk and is returned.
func (w *Walk) Entries(fn func(e *Entry) error) error {
	return w.EntriesAt(func(_ int, e *Entry) error { return fn(e) })
}

// EntriesAt is Entries that also hands over each entry's index in the
// file (0 for the first entry after the header), for ReadEntry.
func (w *Walk) EntriesAt(fn func(i int, e *Entry) error) error {
	var e Entry
	d := decoder{inPlace: true}
	return w.lines(func(i int, line []byte) error {
		e = Entry{}
		d.reset(line)
		if _, err := d.line(nil, &e); err != nil {
			return corruptError(w.Path, i+2, err.Error())
		}
		return fn(i, &e)
	})
}

// ReadEntry reads and decodes the entry at index i (as EntriesAt numbers
// them) into a buffer of its own, so that it may be called while an entry
// of EntriesAt is being handed over: a tool call's result, shown with the
// call. The entry is valid until the next call with another index; the
// same index again returns it without reading.
func (w *Walk) ReadEntry(i int) (*Entry, error) {
	if i == w.at {
		return &w.atE, w.atErr
	}
	if i < 0 || i >= len(w.starts) {
		return nil, fmt.Errorf("session %s: no entry %d", w.Path, i)
	}
	end := w.end
	if i+1 < len(w.starts) {
		end = w.starts[i+1]
	}
	n := int(end-w.starts[i]) - 1 // the newline left out
	if cap(w.abuf) < n {
		w.abuf = make([]byte, n, w.Largest)
	}
	line := w.abuf[:n]
	w.at, w.atE, w.atErr = i, Entry{}, nil
	if _, err := w.f.ReadAt(line, w.starts[i]); err != nil {
		w.atErr = accessError(w.Path, "cannot read session file", err)
		return nil, w.atErr
	}
	d := decoder{data: line, inPlace: true}
	if _, err := d.line(nil, &w.atE); err != nil {
		w.atErr = corruptError(w.Path, i+2, err.Error())
		return nil, w.atErr
	}
	return &w.atE, nil
}

// Lines calls fn with the stored bytes of each entry line of the active
// path, in order, without its newline, valid only during the call.
func (w *Walk) Lines(fn func(line []byte) error) error {
	return w.lines(func(_ int, line []byte) error { return fn(line) })
}

// lines reads the entry lines again and calls fn with those on the
// active path and their index.
func (w *Walk) lines(fn func(i int, line []byte) error) error {
	r := bufio.NewReaderSize(io.NewSectionReader(w.f, w.body, w.end-w.body), 256<<10)
	for i := range w.onPath {
		line, complete, err := w.readLine(r)
		if err != nil {
			return err
		}
		if !complete {
			return fmt.Errorf("session %s changed while it was read", w.Path)
		}
		if !w.onPath[i] {
			continue
		}
		if err := fn(i, line); err != nil {
			return err
		}
	}
	return nil
}

// longestLine reads r to its end and returns the length of its longest
// line, the newline left out.
func longestLine(r *bufio.Reader) (int, error) {
	longest, n := 0, 0
	for {
		frag, err := r.ReadSlice('\n')
		n += len(frag)
		switch {
		case err == nil:
			longest = max(longest, n-1)
			n = 0
		case errors.Is(err, bufio.ErrBufferFull):
		case err == io.EOF:
			return max(longest, n), nil
		default:
			return 0, err
		}
	}
}

// readLine reads the next line into w's buffer, without its newline;
// complete is false at the end of the file (line then holds what follows
// the last newline).
func (w *Walk) readLine(r *bufio.Reader) (line []byte, complete bool, err error) {
	w.buf = w.buf[:0]
	for {
		frag, err := r.ReadSlice('\n')
		w.buf = append(w.buf, frag...)
		switch {
		case err == nil:
			return w.buf[:len(w.buf)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			return w.buf, false, nil
		default:
			return nil, false, accessError(w.Path, "cannot read session file", err)
		}
	}
}
