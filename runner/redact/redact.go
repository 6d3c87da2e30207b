// Package redact replaces known secret values in text, JSON, session
// entries and errors: the one choke point every tool result, event and
// session line passes through before it is stored, printed or sent.
package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/session"
)

// MinSecretLen is the shortest secret value that is redacted: shorter
// values ("1", "true", a short word) occur in ordinary text too often to
// replace.
const MinSecretLen = 8

// Secret is a value that must never be stored, echoed or sent: Name is
// where it came from (an environment variable) and names it in the
// replacement text.
type Secret struct {
	Name, Value string
}

// Redactor replaces every exact occurrence of known secret values with
// [redacted:NAME]. The zero value and nil redact nothing.
//
// Every tool result passes through it, so the scan is one pass over the text
// for all secrets at once that skips ahead several bytes per step
// (Wu-Manber): each secret is found by its last m bytes (m is the shortest
// secret's length, at most maxTail: the random end of a key, not a shared
// prefix like "sk-"), and only a window whose last two bytes end some
// secret's tail is looked at closer.
//
// Secrets may be added while it is in use (Add): an OAuth token an MCP
// server's flow obtains during the run.
type Redactor struct {
	mu      sync.Mutex // held by Add
	secrets []Secret
	sc      atomic.Pointer[scanner]
}

// noScanner is the scanner of a Redactor without secrets.
var noScanner = &scanner{m: maxTail}

// scan is the scanner for the secrets known now.
func (r *Redactor) scan() *scanner {
	if r == nil {
		return noScanner
	}
	if sc := r.sc.Load(); sc != nil {
		return sc
	}
	return noScanner
}

// maxTail caps the tail length m, and so the longest skip.
const maxTail = 32

// scanner finds the patterns: the secrets and their encodings.
type scanner struct {
	pats []pattern
	m    int // tail length: the shortest pattern, at most maxTail
	// shift[h] is how far the window may move when its last two bytes
	// hash to h: m-1 when no pattern's tail holds such a pair.
	shift *[1 << 12]uint8
	// ends[h] lists the patterns whose tail ends with a pair hashing to h.
	ends map[uint16][]int
	// maxLen is the longest pattern's length, 0 without patterns.
	maxLen int
}

// pairHash maps the two bytes a, b to a shift table index. Collisions only
// make a shift shorter than it could be.
func pairHash(a, b byte) uint16 { return (uint16(a)<<4 ^ uint16(b)) & (1<<12 - 1) }

type pattern struct {
	text string
	repl string
}

// New returns a redactor for secrets, ignoring values shorter than
// MinSecretLen. A value known under several names is redacted under the
// first.
func New(secrets []Secret) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add makes r redact secrets too, from now on, as New's.
func (r *Redactor) Add(secrets ...Secret) {
	if r == nil || len(secrets) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = append(r.secrets, secrets...)
	var plain []pattern
	seen := map[string]bool{}
	for _, s := range r.secrets {
		if len(s.Value) < MinSecretLen || seen[s.Value] {
			continue
		}
		seen[s.Value] = true
		repl := conv.Redacted(s.Name)
		for _, form := range encodings(s.Value) {
			if len(form) >= MinSecretLen && !seen[form] || form == s.Value {
				seen[form] = true
				plain = append(plain, pattern{text: form, repl: repl})
			}
		}
	}
	sc := newScanner(plain)
	r.sc.Store(&sc)
}

// encodings are value and the forms of it awl can predict where a tool
// or a program prints it: JSON-escaped (a config file, an API's answer),
// percent-encoded (a URL's query or path, OTEL_EXPORTER_OTLP_HEADERS),
// and base64, standard and URL-safe, as in an HTTP Basic
// Authorization header (base64 of "user:secret"). What base64 makes of
// the secret depends on the bytes before it (their number modulo 3) and
// after it: for each of the three alignments, the characters that only
// the secret's bytes decide are a form, found whatever the user name.
func encodings(value string) []string {
	forms := []string{value}
	// As Go writes JSON (<, > and & escaped), and as most other programs do.
	q, _ := json.Marshal(value)
	var b strings.Builder
	writeJSONString(&b, value)
	for _, esc := range []string{string(q), b.String()} {
		if esc = esc[1 : len(esc)-1]; esc != value {
			forms = append(forms, esc)
		}
	}
	forms = append(forms, url.QueryEscape(value), url.PathEscape(value))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for k := range 3 {
			// Bits [8k, 8k+8n) are the secret's; character i holds bits
			// [6i, 6i+6).
			b := enc.EncodeToString(append(make([]byte, k), value...))
			first, end := (8*k+5)/6, (8*k+8*len(value))/6
			forms = append(forms, b[first:end])
		}
	}
	return forms
}

func newScanner(pats []pattern) scanner {
	sc := scanner{pats: pats, m: maxTail}
	if len(pats) == 0 {
		return sc
	}
	for _, p := range pats {
		sc.m = min(sc.m, len(p.text))
		sc.maxLen = max(sc.maxLen, len(p.text))
	}
	sc.shift = new([1 << 12]uint8)
	for i := range sc.shift {
		sc.shift[i] = uint8(sc.m - 1)
	}
	sc.ends = map[uint16][]int{}
	for i, p := range pats {
		tail := p.text[len(p.text)-sc.m:]
		for j := 1; j < sc.m; j++ {
			h := pairHash(tail[j-1], tail[j])
			sc.shift[h] = min(sc.shift[h], uint8(sc.m-1-j))
		}
		h := pairHash(tail[sc.m-2], tail[sc.m-1])
		sc.ends[h] = append(sc.ends[h], i)
	}
	return sc
}

// span is one occurrence to replace: text[start:end], named by pattern pat.
type span struct{ start, end, pat int }

// find returns the occurrences of the patterns in s, ordered by start, with
// overlapping ones merged into the first (so no byte of any secret is
// left), or nil.
func (sc *scanner) find(s string) []span {
	if len(sc.pats) == 0 {
		return nil
	}
	var found []span
	for pos := sc.m - 1; pos < len(s); {
		h := pairHash(s[pos-1], s[pos])
		if sh := sc.shift[h]; sh > 0 {
			pos += int(sh)
			continue
		}
		for _, i := range sc.ends[h] {
			t := sc.pats[i].text
			if start := pos + 1 - len(t); start >= 0 && s[start:pos+1] == t {
				found = append(found, span{start, pos + 1, i})
			}
		}
		pos++
	}
	if len(found) < 2 {
		return found
	}
	// sort.Slice, not slices.SortFunc: the generic sort is compiled anew
	// for every struct shape sorted by value (tens of KB of binary each).
	sort.Slice(found, func(i, j int) bool {
		a, b := found[i], found[j]
		return a.start < b.start || a.start == b.start && a.end > b.end
	})
	merged := found[:1]
	for _, f := range found[1:] {
		last := &merged[len(merged)-1]
		if f.start < last.end {
			last.end = max(last.end, f.end)
			continue
		}
		merged = append(merged, f)
	}
	return merged
}

// replace returns s with the spans sc found replaced.
func (sc *scanner) replace(s string) string {
	spans := sc.find(s)
	if spans == nil {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	at := 0
	for _, sp := range spans {
		b.WriteString(s[at:sp.start])
		b.WriteString(sc.pats[sp.pat].repl)
		at = sp.end
	}
	b.WriteString(s[at:])
	return b.String()
}

// String returns s with every secret replaced. When s holds none, it is
// returned as is, without allocating.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	return r.scan().replace(s)
}

// JSON is String for JSON text, where a secret may also occur escaped
// inside a string: as json.Marshal escapes it, or written with any other
// escapes ("\u0073k-…"), which decode to the secret. The replacement
// needs no escaping, so the result stays valid JSON.
func (r *Redactor) JSON(s string) string {
	if r == nil {
		return s
	}
	if len(r.scan().pats) > 0 && strings.IndexByte(s, '\\') >= 0 {
		s = r.escapedStrings(s)
	}
	return r.scan().replace(s)
}

// escapedStrings redacts the decoded value of each string literal of the
// JSON text s that holds an escape: a model may write a secret as
// "\u0073k-ant-…", which no scan of the bytes finds and a tool would run
// decoded. A literal whose value holds a secret is written anew with the
// secret replaced; every other byte is left as it was. Text that is not
// JSON is left to the byte scan.
func (r *Redactor) escapedStrings(s string) string {
	var b strings.Builder
	at := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '"' {
			continue
		}
		end, escaped := i+1, false
		for end < len(s) && s[end] != '"' {
			if s[end] == '\\' {
				escaped = true
				end++
			}
			end++
		}
		if end >= len(s) {
			break // unterminated
		}
		if escaped {
			var v string
			if json.Unmarshal([]byte(s[i:end+1]), &v) == nil {
				if red := r.scan().replace(v); red != v {
					b.WriteString(s[at:i])
					writeJSONString(&b, red)
					at = end + 1
				}
			}
		}
		i = end
	}
	if at == 0 {
		return s
	}
	b.WriteString(s[at:])
	return b.String()
}

// writeJSONString writes v as a JSON string, escaping only what JSON
// requires (no HTML escapes).
func writeJSONString(b *strings.Builder, v string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	b.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))) // Encode ends it with a newline
}

// Entry returns e with secrets replaced in every string it holds: text,
// thinking, tool inputs and results, tool names and call ids (a tool
// name is the model's to choose, and a call's id pairs it with its
// result, redacted alike), the provider, model and stop reason, and the
// fields of entries that are not messages. Only opaque provider data is
// left alone: thinking signatures, redacted thinking, image bytes, which
// the provider needs back byte for byte and no reader reads. e itself is
// not changed.
func (r *Redactor) Entry(e session.Entry) session.Entry {
	if r == nil || len(r.scan().pats) == 0 {
		return e
	}
	if len(e.Fields) > 0 {
		if f := r.JSON(string(e.Fields)); f != string(e.Fields) {
			e.Fields = []byte(f)
		}
	}
	e.Type, e.ID, e.ParentID = r.String(e.Type), r.String(e.ID), r.String(e.ParentID)
	e.Provider, e.Model = r.String(e.Provider), r.String(e.Model)
	if e.Message == nil {
		return e
	}
	m := *e.Message
	m.Provider, m.Model = r.String(m.Provider), r.String(m.Model)
	m.StopReason = conv.StopReason(r.String(string(m.StopReason)))
	m.Content = slices.Clone(m.Content)
	for i := range m.Content {
		b := &m.Content[i]
		b.Type = conv.BlockType(r.String(string(b.Type)))
		b.Text = r.String(b.Text)
		b.Thinking = r.String(b.Thinking)
		b.ItemID = r.String(b.ItemID)
		b.ID = r.String(b.ID)
		b.Name = r.String(b.Name)
		b.Input = r.JSON(b.Input)
		b.ToolUseID = r.String(b.ToolUseID)
		b.Content = r.String(b.Content)
		b.MimeType = r.String(b.MimeType)
		if h := b.Hook; h != nil {
			b.Hook = &conv.HookRecord{Decision: r.String(h.Decision), Hook: r.String(h.Hook), Reason: r.String(h.Reason), Input: r.JSON(h.Input)}
		}
	}
	e.Message = &m
	return e
}

// redactedError is an error whose text had secrets replaced; it still
// unwraps to the original, so it is classified the same.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Error returns err with secrets replaced in its text.
func (r *Redactor) Error(err error) error {
	if r == nil || err == nil {
		return err
	}
	if msg := r.String(err.Error()); msg != err.Error() {
		return &redactedError{msg: msg, err: err}
	}
	return err
}

// Stream redacts text that arrives in pieces (streamed deltas), where
// a secret may be split across two of them. It holds back the end of each
// piece that could still begin a secret, and lets it out, redacted, with
// the next piece or at Flush.
type Stream struct {
	r       *Redactor
	pending map[deltaKey]string
}

type deltaKey struct {
	kind  string
	index int
}

// NewStream returns a Stream for r's secrets.
func NewStream(r *Redactor) *Stream {
	return &Stream{r: r, pending: map[deltaKey]string{}}
}

// Text returns what of the stream kind/index may be shown once text has
// arrived: everything up to the last bytes that could begin a secret,
// redacted. It may be "".
func (d *Stream) Text(kind string, index int, text string) string {
	sc := d.r.scan()
	if sc.maxLen == 0 {
		return text
	}
	k := deltaKey{kind, index}
	buf := d.pending[k] + text
	// A secret not yet complete starts within the last maxLen-1 bytes:
	// all before them is final, except a secret found across the cut.
	cut := max(len(buf)-(sc.maxLen-1), 0)
	spans := sc.find(buf)
	for _, sp := range spans {
		if sp.start < cut && sp.end > cut {
			cut = sp.end
		}
	}
	for cut > 0 && cut < len(buf) && !utf8.RuneStart(buf[cut]) {
		cut--
	}
	d.pending[k] = buf[cut:]
	return sc.replace(buf[:cut])
}

// Drop forgets what is held back: the stream it belongs to was voided (a
// retried request streams its answer from the start).
func (d *Stream) Drop() { clear(d.pending) }

// Flush returns, redacted, what is held back of every stream, keyed as
// Text was called, and forgets it.
func (d *Stream) Flush(emit func(kind string, index int, text string)) {
	keys := make([]deltaKey, 0, len(d.pending))
	for k, v := range d.pending {
		if v != "" {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return a.index < b.index || a.index == b.index && a.kind < b.kind
	})
	for _, k := range keys {
		emit(k.kind, k.index, d.r.scan().replace(d.pending[k]))
	}
	clear(d.pending)
}
