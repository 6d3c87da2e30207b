// Package session is awl's session log: the v1 JSONL format, where files live,
// the single-writer lock, append with fsync, open with crash recovery, the
// active path, listing and reference resolution. It knows nothing of HTTP,
// providers or tools beyond the strings it stores.
//
// API CONTRACT (stub: the session helper replaces these bodies, keeping the
// exported names and signatures; additions are fine).
package session

import (
	"time"

	"github.com/awlrun/awl/conv"
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
}

// Entry is one line after the header.
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
	// Line is the exact stored line, without its newline; set on read and
	// by Append.
	Line []byte
}

// Store locates session files.
type Store struct {
	// Dir is the sessions directory (…/awl/sessions).
	Dir string
	// Now and Rand are injected for tests; nil means time.Now and crypto/rand.
	Now func() time.Time
}

// DefaultDir returns the sessions directory from AWL_SESSION_DIR, else
// $XDG_DATA_HOME/awl/sessions, else ~/.local/share/awl/sessions.
func DefaultDir(getenv func(string) string) (string, error) { panic("unimplemented") }

// Session is an open session file. A Session from Create or Open holds the
// writer lock until Close; one from Load is read-only.
type Session struct {
	Path   string
	Header Header
	// Entries are all entries in file order.
	Entries []Entry
	// Recovered is set when Open removed a torn trailing line.
	Recovered bool
}

// Create makes a new session file for cwd, writes its header (fsync'd) and
// holds its lock.
func (s *Store) Create(cwd, provider, model string) (*Session, error) { panic("unimplemented") }

// Open locks the session file at path, trims a torn trailing line, and
// loads it.
func Open(path string) (*Session, error) { panic("unimplemented") }

// Load reads a session file without locking or modifying it.
func Load(path string) (*Session, error) { panic("unimplemented") }

// Append sets e's ID, ParentID (the current leaf) and Timestamp (if zero),
// writes it as one line with one write, fsyncs, and returns the stored entry.
func (s *Session) Append(e Entry) (Entry, error) { panic("unimplemented") }

// ActivePath returns the entries from the root to the leaf.
func (s *Session) ActivePath() []Entry { panic("unimplemented") }

// Conversation returns the messages on the active path.
func (s *Session) Conversation() []conv.Message { panic("unimplemented") }

// ActiveModel returns the provider and model of the last user message on the
// active path, or the header's.
func (s *Session) ActiveModel() (provider, model string) { panic("unimplemented") }

// Close releases the lock.
func (s *Session) Close() error { panic("unimplemented") }

// Info describes one session for listing.
type Info struct {
	ID       string
	Path     string
	Cwd      string
	Created  time.Time
	Modified time.Time
	Messages int
	Provider string
	Model    string
	Err      error // set when the file could not be read
}

// List returns the sessions of cwd ("" for all), oldest first.
func (s *Store) List(cwd string) ([]Info, error) { panic("unimplemented") }

// Resolve turns a reference (full id, unique prefix, or path to a .jsonl
// file) into a session file path. cwd narrows ambiguous prefixes.
func (s *Store) Resolve(ref, cwd string) (string, error) { panic("unimplemented") }

// Latest returns the path of the most recent session of cwd.
func (s *Store) Latest(cwd string) (string, error) { panic("unimplemented") }

// ErrorKind classifies a session failure (all exit 3).
type ErrorKind int

// Error kinds.
const (
	KindNotFound ErrorKind = iota + 1
	KindAmbiguous
	KindCorrupt
	KindLocked
	KindNewer
)

// Error is a session failure.
type Error struct {
	Kind       ErrorKind
	Path       string
	Line       int
	Msg        string
	Candidates []string
}

func (e *Error) Error() string { return e.Msg }
