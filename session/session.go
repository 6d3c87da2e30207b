// Package session is awl's session log: the v1 JSONL format, where files live,
// the single-writer lock, append with fsync, open with crash recovery, the
// active path, listing and reference resolution. It knows nothing of HTTP,
// providers or tools beyond the strings it stores.
//
// The format is documented for readers in docs/session-format.md.
package session

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/internal/jsonstr"
)

// Version is the format version this package writes and the newest it reads.
const Version = 1

// Header is the first line of a session file.
type Header struct {
	Version   int
	ID        string // UUIDv7
	Timestamp time.Time
	Cwd       string
	Provider  string
	Model     string
	// ForkedFrom and ForkedAt, set in a session made by Fork, are the id
	// of the session it was forked from and the id of that session's leaf
	// entry, the last entry copied: where the fork's own entries begin.
	ForkedFrom string
	ForkedAt   string
}

// Entry is one line after the header.
//
// Entries read from a file share memory with the file's bytes: Line and
// Fields must not be modified.
type Entry struct {
	Type      string // "message", "turnContext", or a type this version does not know
	ID        string // 8 lowercase hex chars
	ParentID  string // "" means null (the first entry)
	Timestamp time.Time
	// Provider and Model are the top-level fields of user message entries.
	Provider string
	Model    string
	// Message is set when Type == "message".
	Message *conv.Message
	// Fields holds, for entries that are not messages, the JSON object of
	// the fields beyond type/id/parentId/timestamp (for writing), and is
	// set on read to the same members.
	Fields []byte
	// Line is the exact stored line, without its newline; set on the
	// entries Append and AppendAll return and, on read, by Load. Open does
	// not keep Line for the entries it read (it is nil): Open is for
	// resuming, and decodes the file's escaped strings in place over the
	// bytes Line would hold. A session's own Entries never hold the lines
	// of the entries appended to it.
	Line []byte
}

// Store locates session files.
type Store struct {
	// Dir is the sessions directory (…/awl/sessions).
	Dir string
	// Now and Rand are injected for tests; nil means time.Now and crypto/rand.
	Now  func() time.Time
	Rand io.Reader
	// IsContext, when set, tells listing which user text is model-visible
	// context (environment, AGENTS.md…) rather than a prompt, so that
	// Info.FirstPrompt skips it.
	IsContext func(text string) bool
	// IsLimit, when set, tells listing which run exit codes mean a limit
	// stopped the run (Info.Status "limit" rather than "failed"): the
	// exit codes are the runner's, not the session's.
	IsLimit func(exitCode int) bool
	// Fsync makes a session file durable; nil means (*os.File).Sync. It
	// is for tests of a failed fsync.
	Fsync func(*os.File) error
}

// DefaultDir returns the sessions directory from AWL_SESSION_DIR, else
// $XDG_DATA_HOME/awl/sessions, else ~/.local/share/awl/sessions. With
// none of them set it is a session error (KindAccess, exit 3) that says
// which variables were looked at and how to name a directory.
func DefaultDir(getenv func(string) string) (string, error) {
	if d := getenv("AWL_SESSION_DIR"); d != "" {
		return d, nil
	}
	// The XDG spec says relative paths are invalid and to be ignored.
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "awl", "sessions"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", &Error{Kind: KindAccess, Msg: "no session directory: none of AWL_SESSION_DIR, XDG_DATA_HOME (an absolute path) or HOME is set; set AWL_SESSION_DIR or pass --session-dir DIR"}
	}
	return filepath.Join(home, ".local", "share", "awl", "sessions"), nil
}

// Session is an open session file. A Session from Create or Open holds the
// writer lock until Close; one from Load is read-only. A Session is not safe
// for concurrent use.
type Session struct {
	Path   string
	Header Header
	// Entries are the entries in file order: all of them, unless Forget
	// dropped the first ones.
	Entries []Entry
	// Recovered is set when Open removed a torn trailing line (and when
	// Load ignored one).
	Recovered bool

	// Now and Rand give Append its timestamps and entry ids; nil means
	// time.Now and crypto/rand.
	Now  func() time.Time
	Rand io.Reader
	// Memo, when set, is given the JSON form of each long string of a
	// message that Append writes (its bytes in the line), so that a
	// request body can take them instead of escaping the string again.
	Memo *jsonstr.Memo

	f      *os.File // nil when read-only or closed
	shared *os.File // the file read under a shared lock (OpenShared)
	spans  []span   // with shared: where each of Entries lies in it
	size   int64    // bytes known to be in the file
	broken error    // set when a failed write could not be undone
	closed bool
	fsync  func(*os.File) error
	// pending, for a creation whose fsyncs run in the background
	// (CreateOptions.DeferSync), is closed once they are done, and
	// pendingErr is then why the session could not be made; nil otherwise.
	pending    chan struct{}
	pendingErr error
	ids        map[string]struct{}
	byID       map[string]int
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Create makes a new session file for cwd, writes its header (fsync'd) and
// holds its lock.
//
// The header is written to a hidden temporary file that is renamed into
// place, so a session file never exists without its complete header.
func (s *Store) Create(cwd, provider, model string) (*Session, error) {
	return s.CreateWith(CreateOptions{Cwd: cwd, Provider: provider, Model: model})
}

// CreateOptions says what session CreateWith makes.
type CreateOptions struct {
	Cwd, Provider, Model string
	// ID, when set, is the new session's id (a UUID, lower case), chosen
	// by the caller; Create fails with KindExists when a session of the
	// store already has it. "" makes a new UUIDv7.
	ID string
	// Fork, when set, is a session read with OpenShared: the new session
	// starts with a copy of its active path, byte for byte, and its header
	// records where it came from (ForkedFrom, ForkedAt). Fork is only
	// read; the caller closes it.
	Fork *Session
	// Memo is the new session's Memo, set before the entries of
	// CreateAppending are written.
	Memo *jsonstr.Memo
	// DeferSync makes CreateAppending return once the header and the
	// entries are written, before they are durable: the file's fsync, its
	// rename into place and the directory's fsync run in the background,
	// so that a first request can be built and sent meanwhile. Nothing
	// may claim the entries are stored (echo them, act on an answer to
	// them) before Durable has returned nil; every later write, and
	// Close, waits for it. Until then the session has no file at Path.
	DeferSync bool
}

// CreateWith makes a new session as o says, writes its header and, for a
// fork, the copied history, copied from the fork's file (fsync'd once,
// renamed into place: the file never exists without all of it), and holds
// its lock.
func (s *Store) CreateWith(o CreateOptions) (*Session, error) {
	sess, _, err := s.CreateAppending(o, nil)
	return sess, err
}

// CreateAppending is CreateWith that also appends es, as AppendAll does,
// before the file is renamed into place: the header and es are made
// durable by one fsync, and the file never exists without them. It
// returns es as stored. With no es it is CreateWith.
func (s *Store) CreateAppending(o CreateOptions, es []Entry) (*Session, []Entry, error) {
	if s.Dir == "" {
		return nil, nil, errors.New("create session: no session directory")
	}
	cwd := filepath.Clean(o.Cwd)
	ts := s.now().UTC().Truncate(time.Millisecond)
	// unlock releases the creation lock a chosen id takes; a deferred
	// creation hands it to its background fsyncs, which hold it until the
	// file is in place and others can see the id taken.
	id, unlock, err := s.createID(o.ID, ts)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if unlock != nil {
			unlock()
		}
	}()
	h := Header{Version: Version, ID: id, Timestamp: ts, Cwd: cwd, Provider: o.Provider, Model: o.Model}
	line, copied, spans, err := headerLines(&h, o.Fork)
	if err != nil {
		return nil, nil, err
	}
	dir := filepath.Join(s.Dir, EncodeCwd(cwd))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, accessError(dir, "cannot create a session in", err)
	}
	name := FileName(ts, id)
	path := filepath.Join(dir, name)
	tmp := filepath.Join(dir, "."+name+".tmp")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, nil, accessError(dir, "cannot create a session in", err)
	}
	fail := func(err error) (*Session, []Entry, error) {
		f.Close()
		os.Remove(tmp)
		return nil, nil, createError(path, id, err)
	}
	if err := lockFile(f); err != nil {
		return fail(err)
	}
	if _, err := f.Write(line); err != nil {
		return fail(err)
	}
	size := int64(len(line))
	if len(spans) > 0 {
		n, err := copySpans(f, o.Fork.shared, spans, size)
		if err != nil {
			return fail(err)
		}
		size += n
	}
	sess := &Session{Path: path, Header: h, Now: s.Now, Rand: s.Rand, Memo: o.Memo, f: f, size: size, fsync: s.Fsync, Entries: copied}
	var stored []Entry
	switch {
	case len(es) > 0 && o.DeferSync:
		if stored, err = sess.writeDeferred(es, tmp, dir, unlock); err != nil {
			return fail(err)
		}
		unlock = nil // the background fsyncs hold it now
		return sess, stored, nil
	case len(es) > 0:
		// AppendAll's fsync makes the header durable with es.
		if stored, err = sess.AppendAll(es); err != nil {
			return fail(err)
		}
	default:
		if err := sess.sync(); err != nil {
			return fail(err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	if err := syncDir(dir); err != nil {
		f.Close()
		return nil, nil, createError(path, id, err)
	}
	return sess, stored, nil
}

// createID is a new session's id: chosen (checked under the store's
// creation lock, whose release it returns) or drawn (no lock, nil).
func (s *Store) createID(chosen string, ts time.Time) (string, func(), error) {
	if chosen == "" {
		id, err := newSessionID(ts, s.Rand)
		if err != nil {
			return "", nil, fmt.Errorf("create session: %w", err)
		}
		return id, nil, nil
	}
	// Of two processes given the same id at the same instant, the second
	// sees the first's file (KindExists).
	if err := checkIDForm(chosen); err != nil {
		return "", nil, err
	}
	unlock, err := s.lockCreate()
	if err != nil {
		return "", nil, err
	}
	if err := s.CheckNewID(chosen); err != nil {
		unlock()
		return "", nil, err
	}
	return chosen, unlock, nil
}

// writeDeferred writes es after the header, unsynced, and starts the
// background fsyncs (place) that DeferSync describes; they call unlock,
// when it is not nil, once the file is in place.
func (s *Session) writeDeferred(es []Entry, tmp, dir string, unlock func()) ([]Entry, error) {
	b, err := s.encodeAll(es)
	if err != nil {
		return nil, err
	}
	if _, err := s.f.Write(b.buf); err != nil {
		s.takeBack(b)
		return nil, fmt.Errorf("append to session %s: %w", s.Path, err)
	}
	stored := s.commit(b)
	s.pending = make(chan struct{})
	go func() {
		defer close(s.pending)
		s.pendingErr = s.place(tmp, dir)
		if unlock != nil {
			unlock()
		}
	}()
	return stored, nil
}

// place makes a new session's written file durable and puts it at Path,
// for DeferSync: the file's fsync, the rename and the directory's fsync,
// in that order. The temporary file is removed when it fails before the
// rename, as CreateAppending does.
func (s *Session) place(tmp, dir string) error {
	fail := func(err error) error {
		return createError(s.Path, s.Header.ID, err)
	}
	if err := s.sync(); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	if err := os.Rename(tmp, s.Path); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	if err := syncDir(dir); err != nil {
		return fail(err)
	}
	return nil
}

// Durable waits for a creation with DeferSync to be durable and in place,
// and returns why it could not be; for any other session it returns nil
// at once. It is safe to call more than once, and from any goroutine.
func (s *Session) Durable() error {
	if s.pending == nil {
		return nil
	}
	<-s.pending
	return s.pendingErr
}

// sync is the file's fsync (Store.Fsync, for tests).
func (s *Session) sync() error {
	if s.fsync != nil {
		return s.fsync(s.f)
	}
	return s.f.Sync()
}

// span is where an entry's line lies in a file: [off, end), its newline
// included.
type span struct{ off, end int64 }

// headerLines is the new session's header line, with its newline, and, for
// a fork, the entries it copies and where their lines lie in the fork's
// file, adjacent lines joined into one span. It sets h's fork fields.
func headerLines(h *Header, fork *Session) ([]byte, []Entry, []span, error) {
	if fork == nil {
		return append(appendHeader(nil, h), '\n'), nil, nil, nil
	}
	if fork.shared == nil || len(fork.spans) != len(fork.Entries) {
		return nil, nil, nil, errors.New("create session: the session to fork was not read with OpenShared")
	}
	idx := fork.path()
	copied := make([]Entry, len(idx))
	var spans []span
	for k, i := range idx {
		copied[k] = fork.Entries[i]
		sp := fork.spans[i]
		if n := len(spans); n > 0 && spans[n-1].end == sp.off {
			spans[n-1].end = sp.end
		} else {
			spans = append(spans, sp)
		}
	}
	h.ForkedFrom = fork.Header.ID
	if len(copied) > 0 {
		h.ForkedAt = copied[len(copied)-1].ID
	}
	return append(appendHeader(nil, h), '\n'), copied, spans, nil
}

// copySpans appends the bytes of spans of src to dst, which holds at
// bytes, and returns how many it wrote: in the kernel (copy_file_range)
// where it can, else through a buffer of at most 1 MiB. src is held under
// a shared lock: no writer changes it meanwhile. A clone of the source's
// blocks (FICLONERANGE) cannot serve: the new header shifts the copy off
// the source's block boundaries.
func copySpans(dst, src *os.File, spans []span, at int64) (int64, error) {
	var n int64
	for i, sp := range spans {
		done, err := copyRangeInKernel(dst, src, sp.off, at+n, sp.end-sp.off)
		if err != nil {
			return n, fmt.Errorf("copy the session to fork: %w", err)
		}
		if !done {
			if i > 0 {
				return n, errors.New("copy the session to fork: copy_file_range failed part way")
			}
			return copySpansBuffered(dst, src, spans)
		}
		n += sp.end - sp.off
	}
	return n, nil
}

// copySpansBuffered is copySpans through a buffer of at most 1 MiB.
func copySpansBuffered(dst, src *os.File, spans []span) (int64, error) {
	var total int64
	for _, sp := range spans {
		total += sp.end - sp.off
	}
	buf := make([]byte, min(total, 1<<20))
	var n int64
	for _, sp := range spans {
		for off := sp.off; off < sp.end; {
			chunk := buf[:min(int64(len(buf)), sp.end-off)]
			if _, err := src.ReadAt(chunk, off); err != nil {
				return n, fmt.Errorf("read the session to fork: %w", err)
			}
			w, err := dst.Write(chunk)
			n += int64(w)
			if err != nil {
				return n, err
			}
			off += int64(len(chunk))
		}
	}
	return n, nil
}

// createLockName is the file in the sessions directory whose lock is held
// while a session with a chosen id is checked and created. It is not a
// session (its name starts with "."), and is never removed.
const createLockName = ".create.lock"

// lockCreate takes the store's creation lock, waiting for it, and returns
// its release. Where flock does not exist it does nothing.
func (s *Store) lockCreate() (func(), error) {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, accessError(s.Dir, "cannot create a session in", err)
	}
	p := filepath.Join(s.Dir, createLockName)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, accessError(s.Dir, "cannot create a session in", err)
	}
	if err := lockWait(f); err != nil {
		f.Close()
		return nil, &Error{Kind: KindAccess, Path: p, Msg: fmt.Sprintf("create session: lock %s: %v", p, err), Err: err}
	}
	return func() { f.Close() }, nil
}

// CheckNewID checks that id can name a new session: a UUID in its
// canonical lower-case form that no session of the store has (KindExists).
func (s *Store) CheckNewID(id string) error {
	if err := checkIDForm(id); err != nil {
		return err
	}
	dirs, err := subdirs(s.Dir)
	if err != nil {
		return err
	}
	for _, dir := range dirs {
		paths, err := sessionFiles(dir)
		if err != nil {
			return err
		}
		for _, p := range paths {
			if SessionIDFromPath(p) == id {
				return &Error{Kind: KindExists, Path: p, Msg: "session " + id + " already exists: " + p}
			}
		}
	}
	return nil
}

// checkIDForm checks that id is a UUID in its canonical lower-case form.
func checkIDForm(id string) error {
	if u, err := uuid.Parse(id); err != nil || u.String() != id {
		return fmt.Errorf("session id %q is not a UUID in lower case (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)", id)
	}
	return nil
}

// OpenShared reads the session file at path for Fork under a shared lock,
// held until Close: any number of readers may hold it at once, a writer
// (a run continuing the session) none while they do. The file is opened
// read-only and never changed: a torn last line is ignored, as by Load.
// It reads as Open does, strings decoded in place in the file's bytes,
// and notes where each entry's line lies, so that a fork copies the lines
// from the file rather than keeping them all twice in memory.
func OpenShared(path string) (*Session, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	if pid, err := takeLock(f, lockShared); err != nil {
		if errors.Is(err, errLocked) {
			f.Close()
			return nil, lockedError(path, pid)
		}
		f.Close()
		return nil, fmt.Errorf("lock session %s: %w", path, err)
	}
	sess, err := read(path, f, false, withSpans)
	if err != nil {
		f.Close()
		return nil, err
	}
	sess.shared = f
	return sess, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Open locks the session file at path, trims a torn trailing line, and
// loads it. Unlike Load, it does not keep the Line of the entries it read;
// the file's bytes stay in memory once, shared by the decoded strings.
func Open(path string) (*Session, error) {
	return (&Store{}).Open(path)
}

// Open is the package-level Open with the store's clock and randomness.
func (s *Store) Open(path string) (*Session, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, openError(path, err)
	}
	if testHookOpened != nil {
		testHookOpened(path)
	}
	if pid, err := takeLock(f, lockFile); err != nil {
		if errors.Is(err, errLocked) {
			f.Close()
			return nil, lockedError(path, pid)
		}
		f.Close()
		return nil, fmt.Errorf("lock session %s: %w", path, err)
	}
	if err := stillNamed(path, f); err != nil {
		f.Close()
		return nil, err
	}
	sess, err := read(path, f, true, inPlace)
	if err != nil {
		f.Close()
		return nil, err
	}
	sess.Now, sess.Rand = s.Now, s.Rand
	sess.f = f
	return sess, nil
}

// testHookOpened, when set by a test, runs between opening a session file
// and locking it: the window in which another process may remove it.
var testHookOpened func(path string)

// stillNamed checks, with f locked, that path still names f: `awl sessions
// rm` may have unlinked it (and a new file may have taken its name) between
// the open and the lock. Appending to an unlinked file would lose a turn
// while saying the session can be resumed.
func stillNamed(path string, f *os.File) error {
	held, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat session %s: %w", path, err)
	}
	named, err := os.Stat(path)
	if err == nil && os.SameFile(held, named) && linkCount(held) != 0 {
		return nil
	}
	return &Error{Kind: KindNotFound, Path: path, Msg: "session file " + path + " was removed while it was being opened", Err: err}
}

// Load reads a session file without locking or modifying it. A torn last
// line (a writer may be appending it right now) is ignored.
func Load(path string) (*Session, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	defer f.Close()
	return read(path, f, false, withLines)
}

func openError(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &Error{Kind: KindNotFound, Path: path, Msg: "no session file " + path, Err: err}
	}
	return accessError(path, "cannot open session file", err)
}

// createError is a new session, id at path, that could not be written,
// synced or put in place: as a directory it cannot write to, a session
// error (exit 3), whatever the step that failed.
func createError(path, id string, err error) *Error {
	return &Error{Kind: KindAccess, Path: path, Msg: fmt.Sprintf("create session %s: %v", id, err), Err: err}
}

// accessError is a session file or directory at path that awl cannot read or
// write (permission denied, a read-only file system, a directory where a
// file should be…), failing to do what.
func accessError(path, what string, err error) *Error {
	reason := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		reason = pe.Err
	}
	return &Error{Kind: KindAccess, Path: path, Msg: fmt.Sprintf("%s %s: %v", what, path, reason), Err: err}
}

// readMode says what read keeps besides the decoded entries.
type readMode int

const (
	// inPlace unescapes strings in place in the buffer, which then no
	// longer holds the file's bytes; Line is nil.
	inPlace readMode = iota
	// withLines keeps each entry's Line, its exact stored bytes (strings
	// are copied out of the buffer).
	withLines
	// withSpans is inPlace that also records where each entry's line lies
	// in the file (Session.spans), for a fork to copy from the file.
	withSpans
)

// read reads and parses the whole file; with trim it truncates a torn
// last line. mode says whether entries keep their lines or their spans.
func read(path string, f *os.File, trim bool, mode readMode) (*Session, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, accessError(path, "cannot read session file", err)
	}
	if fi.IsDir() {
		return nil, accessError(path, "cannot read session file", errors.New("is a directory"))
	}
	data := make([]byte, fi.Size())
	n, err := f.ReadAt(data, 0)
	if err != nil && err != io.EOF {
		return nil, accessError(path, "cannot read session file", err)
	}
	data = data[:n]
	sess := &Session{Path: path}
	var spans *[]span
	if mode == withSpans {
		spans = &sess.spans
	}
	torn, err := parseFile(path, data, &sess.Header, &sess.Entries, mode == withLines, spans)
	if err != nil {
		return nil, err
	}
	sess.size = int64(len(data))
	// Resuming a broken chain would silently drop what lies before the
	// break (the system prompt, the first prompt): it is corruption,
	// refused before anything in the file is touched.
	if err := checkChain(path, sess.Entries); err != nil {
		return nil, err
	}
	if torn >= 0 {
		sess.Recovered = true
		sess.size = int64(torn)
		if trim {
			if err := f.Truncate(int64(torn)); err != nil {
				return nil, fmt.Errorf("recover session %s: %w", path, err)
			}
			if err := f.Sync(); err != nil {
				return nil, fmt.Errorf("recover session %s: %w", path, err)
			}
		}
	}
	return sess, nil
}

// checkChain checks that entry ids are unique and that every parentId names
// an entry before it. Entry i is on line i+2 (the header is line 1).
func checkChain(path string, entries []Entry) error {
	seen := make(map[string]int, len(entries))
	for i := range entries {
		e := &entries[i]
		line := i + 2
		if e.ParentID != "" {
			if _, ok := seen[e.ParentID]; !ok {
				return corruptError(path, line, fmt.Sprintf("parentId %q names no earlier entry", e.ParentID))
			}
		}
		if e.ID == "" {
			continue
		}
		if first, dup := seen[e.ID]; dup {
			return corruptError(path, line, fmt.Sprintf("duplicate entry id %q (first on line %d)", e.ID, first))
		}
		seen[e.ID] = line
	}
	return nil
}

// parseFile parses a whole session file. It returns the offset of a torn
// last line to drop, or -1. Without keepLines it decodes strings in place,
// changing data (only ever inside the line being decoded, after the torn
// check has looked at it); the header line is never changed. With spans,
// it appends each entry's line's place in data.
func parseFile(path string, data []byte, h *Header, entries *[]Entry, keepLines bool, spans *[]span) (torn int, err error) {
	torn = -1
	if len(data) == 0 {
		return -1, corruptError(path, 1, "empty file: no session header")
	}
	first := bytes.IndexByte(data, '\n')
	if first < 0 {
		return -1, corruptError(path, 1, "incomplete session header (no newline)")
	}
	if err := parseHeader(path, data[:first], h, false); err != nil {
		return -1, err
	}
	rest := data[first+1:]
	es := make([]Entry, 0, bytes.Count(rest, []byte{'\n'})+1)
	a := &arena{}
	d := decoder{a: a, inPlace: !keepLines}
	off := first + 1
	for lineNo := 2; off < len(data); lineNo++ {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			// No newline: the write of this line never completed.
			torn = off
			break
		}
		end += off
		line := data[off:end:end]
		last := end+1 == len(data)
		if last && !validObject(line) {
			torn = off
			break
		}
		if !utf8.Valid(line) {
			return -1, corruptError(path, lineNo, "invalid UTF-8")
		}
		es = append(es, Entry{})
		e := &es[len(es)-1]
		d.reset(line)
		a.remain = len(data) - off
		kind, err := d.line(nil, e)
		if err == nil && kind == parsedHeader {
			err = errors.New("a second session header")
		}
		if err != nil {
			return -1, corruptError(path, lineNo, err.Error())
		}
		if keepLines {
			e.Line = line
		}
		if spans != nil {
			*spans = append(*spans, span{int64(off), int64(end) + 1})
		}
		off = end + 1
	}
	*entries = es
	return torn, nil
}

// parseHeader parses the first line of the file at path into h, returning
// a *Error (KindNewer or KindCorrupt) when it is not a header this awl reads.
func parseHeader(path string, line []byte, h *Header, copyStrings bool) error {
	if !utf8.Valid(line) {
		return corruptError(path, 1, "invalid UTF-8")
	}
	d := decoder{data: line, copyStrings: copyStrings}
	kind, err := d.line(h, nil)
	var ne *newerError
	var se *syntaxError
	switch {
	case errors.As(err, &ne):
		return &Error{Kind: KindNewer, Path: path, Msg: path + ": " + ne.Error()}
	case err == nil && kind == parsedHeader:
		return nil
	case kind == parsedHeader || errors.As(err, &se):
		return corruptError(path, 1, err.Error())
	}
	return corruptError(path, 1, "first line is not a session header")
}

// Append sets e's ID, ParentID (the current leaf) and Timestamp (if zero),
// writes it as one line with one write, fsyncs, and returns the stored entry.
//
// An entry with a Message and no Type is a message entry. For other types,
// Fields (a JSON object) holds the members written after the base fields.
func (s *Session) Append(e Entry) (Entry, error) {
	stored, err := s.AppendAll([]Entry{e})
	if err != nil {
		return Entry{}, err
	}
	return stored[0], nil
}

// AppendAll appends entries as Append does, in order, each the parent of
// the next, with one write and one fsync for them all. It is for entries
// that become durable together before anything is done with any of them
// (the context, the prompt and its baseline before a request): one fsync
// instead of one each. Either every entry is stored or, on an error, none
// is counted as stored (a failed write is taken back).
func (s *Session) AppendAll(es []Entry) ([]Entry, error) {
	if err := s.writable(); err != nil {
		return nil, err
	}
	b, err := s.encodeAll(es)
	if err != nil {
		return nil, err
	}
	if err := s.writeDurable(b.buf); err != nil {
		s.takeBack(b)
		return nil, err
	}
	return s.commit(b), nil
}

// writable says why the session cannot be appended to, or nil. It waits
// for a deferred creation (CreateOptions.DeferSync) first.
func (s *Session) writable() error {
	switch {
	case s.closed:
		return errors.New("append to session: closed")
	case s.f == nil:
		return errors.New("append to session: opened read-only")
	}
	if err := s.Durable(); err != nil {
		return err
	}
	if s.broken != nil {
		return fmt.Errorf("append to session: an earlier write failed: %w", s.broken)
	}
	return nil
}

// batch is entries encoded for one write, their ids reserved, not yet
// stored.
type batch struct {
	buf    []byte
	ends   []int // the end of each entry's line in buf, its newline included
	out    []Entry
	newIDs []string
}

// encodeAll gives es their ids, parents and timestamps and encodes them,
// each line with its newline, into one buffer of the size they need.
func (s *Session) encodeAll(es []Entry) (*batch, error) {
	b := &batch{out: make([]Entry, len(es)), ends: make([]int, len(es))}
	size := 0
	for i := range es {
		size += sizeHint(&es[i])
	}
	b.buf = make([]byte, 0, size)
	parent := ""
	if leaf := s.leafIndex(); leaf >= 0 {
		parent = s.Entries[leaf].ID
	}
	for i, e := range es {
		e, err := ownEntry(e)
		if err != nil {
			s.takeBack(b)
			return nil, err
		}
		id, err := s.newID()
		if err != nil {
			s.takeBack(b)
			return nil, fmt.Errorf("append to session: %w", err)
		}
		// Reserved now so that the next entry of the batch cannot draw it.
		s.ids[id] = struct{}{}
		b.newIDs = append(b.newIDs, id)
		e.ID = id
		e.ParentID = parent
		parent = id
		if e.Timestamp.IsZero() {
			e.Timestamp = s.now()
		}
		e.Timestamp = e.Timestamp.UTC().Truncate(time.Millisecond)
		start := len(b.buf)
		b.buf, err = appendEntry(b.buf, &e, s.Memo)
		if err != nil {
			s.takeBack(b)
			return nil, fmt.Errorf("append to session: %w", err)
		}
		if e.Type != TypeMessage {
			e.Fields = fieldsOf(b.buf[start:])
		}
		b.buf = append(b.buf, '\n')
		b.ends[i] = len(b.buf)
		b.out[i] = e
	}
	return b, nil
}

// takeBack releases the ids of a batch that was not stored.
func (s *Session) takeBack(b *batch) {
	for _, id := range b.newIDs {
		delete(s.ids, id)
	}
}

// commit counts a written batch as stored and returns its entries, each
// with its line.
func (s *Session) commit(b *batch) []Entry {
	s.size += int64(len(b.buf))
	start := 0
	for i := range b.out {
		b.out[i].Line = b.buf[start : b.ends[i]-1 : b.ends[i]-1]
		start = b.ends[i]
		// The session keeps the entry without its line, as Open does: a
		// long or large run then holds each entry once (its decoded
		// values), not twice. The caller has the line until it lets go.
		kept := b.out[i]
		kept.Line = nil
		s.Entries = append(s.Entries, kept)
		if s.byID != nil {
			s.byID[b.out[i].ID] = len(s.Entries) - 1
		}
	}
	return b.out
}

// ownEntry checks an entry's type and gives it a message of its own (the
// caller's content and usage are copied), or none when it is not a
// message.
func ownEntry(e Entry) (Entry, error) {
	if e.Type == "" && e.Message != nil {
		e.Type = TypeMessage
	}
	switch e.Type {
	case "":
		return e, errors.New("append to session: entry has no type")
	case TypeSession:
		return e, errors.New("append to session: a session header is not an entry")
	case TypeMessage:
		if e.Message == nil {
			return e, fmt.Errorf("append to session: %w", errNoMessage)
		}
		m := *e.Message
		m.Content = append([]conv.Block(nil), m.Content...)
		if m.Usage != nil {
			u := *m.Usage
			m.Usage = &u
		}
		e.Message = &m
	default:
		e.Message = nil
	}
	return e, nil
}

// Forget drops from memory the entries before the entry id, which must be
// on the active path: those before it in the file, and so its ancestors.
// The active path then starts at id. It is for a long run, whose requests
// no longer show what a compaction summarised: the run holds the entries
// it can still send, not every entry it ever wrote. The file is not
// changed (Open reads every entry again), and no entry appended later
// takes the id of one forgotten.
func (s *Session) Forget(id string) error {
	at := -1
	for _, i := range s.path() {
		if s.Entries[i].ID == id {
			at = int(i)
			break
		}
	}
	if at < 0 {
		return fmt.Errorf("forget entries of session %s: %q is not on the active path", s.Path, id)
	}
	if at == 0 {
		return nil
	}
	s.reserveIDs()
	// A new array: the old one, and what its entries hold, can then be
	// collected.
	s.Entries = append(make([]Entry, 0, len(s.Entries)-at+16), s.Entries[at:]...)
	s.byID = nil
	return nil
}

// now is the time of an entry that has none.
func (s *Session) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// writeDurable writes buf, whole lines, at the end of the file and syncs
// it. A failed write is taken back (truncated) so the next append cannot
// fuse onto a partial line; after a failed fsync, or a failed truncate,
// the session stops writing.
func (s *Session) writeDurable(buf []byte) error {
	if _, err := s.f.Write(buf); err != nil {
		if terr := s.f.Truncate(s.size); terr != nil {
			s.broken = err
		}
		return fmt.Errorf("append to session %s: %w", s.Path, err)
	}
	if err := s.sync(); err != nil {
		// After a failed fsync the page cache cannot be trusted (the
		// kernel may have dropped the dirty pages): stop writing.
		s.broken = err
		return fmt.Errorf("append to session %s: %w", s.Path, err)
	}
	return nil
}

// fieldsOf returns Fields as a reader would see it, from a written line.
func fieldsOf(line []byte) []byte {
	var e Entry
	d := decoder{data: line, copyStrings: true}
	if _, err := d.line(nil, &e); err != nil {
		return nil
	}
	return e.Fields
}

// newID returns an entry id not yet used in this session.
func (s *Session) newID() (string, error) {
	s.reserveIDs()
	r := s.Rand
	if r == nil {
		r = rand.Reader
	}
	var b [4]byte
	for range 1000 {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return "", fmt.Errorf("entry id: %w", err)
		}
		id := hex.EncodeToString(b[:])
		if _, dup := s.ids[id]; !dup {
			return id, nil
		}
	}
	return "", errors.New("entry id: no unused id found")
}

// reserveIDs makes ids hold the id of every entry in memory, once: from
// then on it holds every id the session has used, forgotten ones too.
func (s *Session) reserveIDs() {
	if s.ids == nil {
		s.ids = make(map[string]struct{}, len(s.Entries)+16)
		for i := range s.Entries {
			s.ids[s.Entries[i].ID] = struct{}{}
		}
	}
}

// leafIndex is the index of the current leaf: the last entry with an id.
func (s *Session) leafIndex() int {
	for i := len(s.Entries) - 1; i >= 0; i-- {
		if s.Entries[i].ID != "" {
			return i
		}
	}
	return -1
}

// parentIndex returns the index of entry i's parent: the latest entry before
// i whose id is p, or -1.
func (s *Session) parentIndex(i int, p string) int {
	if i > 0 && s.Entries[i-1].ID == p {
		return i - 1
	}
	if s.byID == nil {
		s.byID = make(map[string]int, len(s.Entries))
		for j := range s.Entries {
			if s.Entries[j].ID != "" {
				s.byID[s.Entries[j].ID] = j
			}
		}
	}
	if j, ok := s.byID[p]; ok && j < i {
		return j
	} else if !ok {
		return -1
	}
	for j := i - 1; j >= 0; j-- { // a duplicate id after i
		if s.Entries[j].ID == p {
			return j
		}
	}
	return -1
}

// path returns the indices of the active path, root first.
func (s *Session) path() []int32 {
	leaf := s.leafIndex()
	if leaf < 0 {
		return nil
	}
	// Walk twice, counting then filling, so the result is one exact
	// allocation.
	n := 0
	s.walk(leaf, func(int) { n++ })
	idx := make([]int32, n)
	s.walk(leaf, func(i int) { n--; idx[n] = int32(i) })
	return idx
}

// walk calls fn with i and each of its ancestors, leaf first.
func (s *Session) walk(i int, fn func(int)) {
	for {
		fn(i)
		p := s.Entries[i].ParentID
		if p == "" {
			return
		}
		if i = s.parentIndex(i, p); i < 0 {
			return
		}
	}
}

// ActivePath returns the entries from the root to the leaf (from the
// first entry Forget kept, after Forget).
func (s *Session) ActivePath() []Entry {
	idx := s.path()
	out := make([]Entry, len(idx))
	for k, i := range idx {
		out[k] = s.Entries[i]
	}
	return out
}

// Conversation returns the messages on the active path. Entries of other
// types are skipped; assistant messages keep their provider, model, stop
// reason and usage.
func (s *Session) Conversation() []conv.Message {
	idx := s.path()
	out := make([]conv.Message, 0, len(idx))
	for _, i := range idx {
		if e := &s.Entries[i]; e.Type == TypeMessage && e.Message != nil {
			out = append(out, *e.Message)
		}
	}
	return out
}

// ActiveModel returns the provider and model of the last user message on the
// active path, or the header's.
func (s *Session) ActiveModel() (provider, model string) {
	idx := s.path()
	for k := len(idx) - 1; k >= 0; k-- {
		e := &s.Entries[idx[k]]
		if e.Type == TypeMessage && e.Message != nil && e.Message.Role == conv.RoleUser && (e.Provider != "" || e.Model != "") {
			return e.Provider, e.Model
		}
	}
	return s.Header.Provider, s.Header.Model
}

// Close releases the lock. It is safe to call more than once.
func (s *Session) Close() error {
	if s.closed {
		return nil
	}
	s.Durable() // the background fsync is done with the file
	s.closed = true
	if s.shared != nil {
		s.shared.Close()
		s.shared = nil
	}
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// ErrorKind classifies a session failure (all exit 3).
type ErrorKind int

// Error kinds.
const (
	KindNotFound ErrorKind = iota + 1
	KindAmbiguous
	KindCorrupt
	KindLocked
	KindNewer
	// KindNotSession is a file that is not an awl session file.
	KindNotSession
	// KindAccess is a session file or directory awl cannot read or write.
	KindAccess
	// KindExists is a session id that is already taken (--session-id).
	KindExists
	// KindModified is a session that prune chose by its age and that was
	// modified after the cut-off before it could be removed: it is kept.
	KindModified
)

// Error is a session failure.
type Error struct {
	Kind       ErrorKind
	Path       string
	Line       int
	Msg        string
	Candidates []string
	// Pid is, for KindLocked, the process holding the lock when it can be
	// known (0 otherwise).
	Pid int
	// Err is the underlying error, if any.
	Err error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// ExitCode is awl's exit code for every session failure: 3.
func (e *Error) ExitCode() int { return 3 }

// ExitReason is "session_error".
func (e *Error) ExitReason() string { return "session_error" }

func corruptError(path string, line int, reason string) *Error {
	return &Error{Kind: KindCorrupt, Path: path, Line: line, Msg: fmt.Sprintf("%s:%d: %s", path, line, reason)}
}

func lockedError(path string, pid int) *Error {
	who := "another process"
	if pid > 0 {
		who = fmt.Sprintf("another process (pid %d)", pid)
	}
	name := SessionIDFromPath(path)
	if name == "" {
		name = path
	}
	return &Error{Kind: KindLocked, Path: path, Pid: pid,
		Msg: fmt.Sprintf("session %s is in use by %s: %s", name, who, path)}
}
