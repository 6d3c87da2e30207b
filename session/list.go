package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/internal/oneline"
)

// Info describes one session for listing.
type Info struct {
	ID       string
	Path     string
	Cwd      string
	Created  time.Time
	Modified time.Time
	// Messages counts the message entries in the file.
	Messages int
	// Provider and Model are the active ones: the last user message's,
	// else the header's.
	Provider string
	Model    string
	// ForkedFrom and ForkedAt are the header's: the session this one was
	// forked from and the entry it was forked at ("" when not a fork).
	ForkedFrom, ForkedAt string
	// FirstPrompt is the first user text that is a prompt (not a tool
	// result, not context as told by Store.IsContext), on one line and cut
	// to about 200 characters.
	FirstPrompt string
	// LastStopReason is the stop reason of the last assistant message, or
	// "" when a user message (a prompt, tool results) follows it, unanswered
	// (or when there is none).
	LastStopReason string
	// LastText is the final answer: the text of the last assistant message
	// when it ended its turn (no message follows it, and it called no
	// tool), cut to LastTextMax bytes; "" otherwise.
	LastText string
	// LastRun is the last run entry, nil when there is none.
	LastRun *RunInfo
	// Status is how the session's last run ended: "ok", "limit" (a turn,
	// output, budget or time limit, as told by Store.IsLimit), "failed", or "killed" when messages
	// follow the last run entry, or there is none (a run killed with
	// SIGKILL, or one still going); "" for a session without messages.
	Status string
	// TotalCostUSD is the sum of the assistant messages' costs; nil when
	// not known (a run entry says its cost was unknown, or no message
	// carries a cost).
	TotalCostUSD *float64
	// CacheReadShare is the share of the input of the session's runs (as
	// their run entries count it) read from the prompt cache; nil without
	// run entries or input.
	CacheReadShare *float64
	Err            error // set when the file could not be read or a line is not an entry
	// IsSession reports that the file's first line is a session header (of
	// this awl or a newer one): the file is a session, even if Err is set.
	// Only such files may be removed.
	IsSession bool
}

// RunInfo is what listing reports of a run entry.
type RunInfo struct {
	ExitCode int
	Reason   string
	CostUSD  *float64 // nil when the run's cost was not known
	// CacheReadShare is the share of the run's input read from the prompt
	// cache, from its usage; nil without input.
	CacheReadShare *float64
	Ended          time.Time
}

// List returns the sessions of cwd ("" for all), oldest first, each with
// Verify's verdict: a file Verify finds a problem in is listed with that
// problem, Verify's first, as Err.
//
// Listing reads each file once without decoding its transcript: the header,
// a count of the message lines, and a few lines at either end. A file that
// cannot be read is listed with Err set. The verdict is Verify's on the
// file as it is, or, for a file in the state (device, inode, size,
// modification and change time) in which an earlier listing verified it,
// the verdict that listing kept in the directory's VerifiedName file.
//
// The header's cwd is checked before anything else: directories that encode
// alike (/a-b and /a/b) share a sessions directory, so a file whose header
// names another directory is not listed for cwd, whatever follows. A file
// of cwd's sessions directory whose header cannot be read (torn, empty, not
// a session) names no directory: it is listed with its error for each
// directory of that encoding, so that `awl sessions` and `awl sessions
// verify` show it; IsSession is false, so nothing removes it.
func (s *Store) List(cwd string) ([]Info, error) {
	return s.list(cwd, true)
}

// Scan is List without the verdicts: each file's shape is checked (its
// header, the shape of each line, UTF-8), never a line's contents. It is
// for callers that want the files and verify them themselves, or not at
// all.
func (s *Store) Scan(cwd string) ([]Info, error) {
	return s.list(cwd, false)
}

// scopeDirs is the sessions directory of cwd, or every one when cwd is "".
func (s *Store) scopeDirs(cwd string) ([]string, error) {
	if cwd != "" {
		return []string{filepath.Join(s.Dir, EncodeCwd(filepath.Clean(cwd)))}, nil
	}
	return subdirs(s.Dir)
}

// StaleTemps lists, in the sessions directory of cwd ("" every one), the
// temporary files of creations (`.<name>.jsonl.tmp`) last modified before
// cutoff: what a creation killed before its rename leaves. RemoveOlder
// removes one unless a creation still holds it.
func (s *Store) StaleTemps(cwd string, cutoff time.Time) ([]string, error) {
	dirs, err := s.scopeDirs(cwd)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, dir := range dirs {
		ps, err := dirEntries(dir, func(de fs.DirEntry) bool {
			if !de.Type().IsRegular() || !isTempName(de.Name()) {
				return false
			}
			fi, err := de.Info()
			return err == nil && fi.ModTime().Before(cutoff)
		})
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

// isTempName reports whether name is that of a creation's temporary file.
func isTempName(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".jsonl.tmp")
}

func (s *Store) list(cwd string, verify bool) ([]Info, error) {
	dirs, err := s.scopeDirs(cwd)
	if err != nil {
		return nil, err
	}
	var paths []string
	verified := map[string]*verifiedDir{}
	for _, dir := range dirs {
		ps, err := sessionFiles(dir)
		if err != nil {
			return nil, err
		}
		paths = append(paths, ps...)
		if verify {
			verified[dir] = readVerified(dir, ps)
		}
	}
	now := time.Now()
	infos := make([]Info, len(paths))
	workers := min(runtime.GOMAXPROCS(0), len(paths))
	var next sync.Mutex
	k := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := newInfoScanner(s)
			for {
				next.Lock()
				i := k
				k++
				next.Unlock()
				if i >= len(paths) {
					return
				}
				infos[i] = sc.scan(paths[i], cwd, verified[filepath.Dir(paths[i])], now)
			}
		}()
	}
	wg.Wait()
	for _, vd := range verified {
		vd.write()
	}
	out := infos[:0]
	for _, in := range infos {
		if cwd != "" && in.Cwd != "" && filepath.Clean(in.Cwd) != cwd {
			continue // another directory with the same encoding
		}
		out = append(out, in)
	}
	// sort.SliceStable, not slices.SortStableFunc: the generic sort is
	// compiled anew for every struct shape sorted by value (13 KB of
	// binary for an Info), and sort.SliceStable is linked already.
	sort.SliceStable(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if c := a.Created.Compare(b.Created); c != 0 {
			return c < 0
		}
		return a.Path < b.Path
	})
	return out, nil
}

// subdirs returns the per-cwd directories of the sessions directory.
func subdirs(dir string) ([]string, error) {
	return dirEntries(dir, func(de fs.DirEntry) bool {
		return de.IsDir() && !strings.HasPrefix(de.Name(), ".")
	})
}

// sessionFiles returns the session files of one directory, sorted by name
// (so by creation time).
func sessionFiles(dir string) ([]string, error) {
	return dirEntries(dir, func(de fs.DirEntry) bool {
		name := de.Name()
		return !de.IsDir() && strings.HasSuffix(name, ".jsonl") && !strings.HasPrefix(name, ".")
	})
}

// dirEntries returns the paths of dir's entries that keep takes, sorted by
// name; none when dir does not exist.
func dirEntries(dir string, keep func(fs.DirEntry) bool) ([]string, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []string
	for _, de := range des {
		if keep(de) {
			out = append(out, filepath.Join(dir, de.Name()))
		}
	}
	return out, nil
}

const (
	scanChunk = 256 << 10
	// keepLines is how many message lines listing remembers at each end of
	// a file to find the first prompt and the last stop reason and model.
	keepLines  = 64
	promptCut  = 200
	prefixSize = 32
)

type linePos struct{ off, n int64 }

// infoScanner reads files for listing, reusing its buffers.
type infoScanner struct {
	isContext func(string) bool
	isLimit   func(exitCode int) bool
	chunk     []byte
	line      []byte
	head      []linePos
	tail      [keepLines]linePos
	tailN     int
}

func newInfoScanner(s *Store) *infoScanner {
	return &infoScanner{isContext: s.IsContext, isLimit: s.IsLimit, chunk: make([]byte, scanChunk)}
}

var (
	messagePrefix = []byte(`{"type":"message"`)
	// entryPrefix is how awl's encoder starts every entry line.
	entryPrefix = messagePrefix[:9]
)

// scan lists the file at path. Besides the header it checks every entry
// line's shape cheaply: a line awl wrote starts with {"type":" and ends
// with }. Any other line is decoded, and one that does not decode as an
// entry sets Err to "path:line: reason", as Open would say; a torn last
// line, which Open would trim, is not an error.
//
// With scope set, a file whose header does not name scope is left at its
// header: in.Cwd says which directory it belongs to ("" when the header
// cannot be read), and List drops it.
//
// With vd, the file is then judged as Verify judges it (judged).
func (sc *infoScanner) scan(path, scope string, vd *verifiedDir, now time.Time) Info {
	fl := fileScan{sc: sc, path: path, scope: scope}
	fl.in = Info{Path: path, ID: SessionIDFromPath(path)}
	f, err := os.Open(path)
	if err != nil {
		fl.in.Err = openError(path, err) // as Verify says it
		return fl.in
	}
	defer f.Close()
	fl.f = f
	fi, err := f.Stat()
	if err != nil {
		fl.in.Err = openError(path, err)
		return fl.in
	}
	fl.in.Modified = fi.ModTime()
	if in, ok := warm(path, scope, vd, fi); ok {
		return in
	}
	if testHookScan != nil {
		testHookScan(path)
	}
	if fl.in.Created, err = timeFromName(path); err != nil {
		fl.in.Created = fl.in.Modified
	}
	sc.head = sc.head[:0]
	sc.tailN = 0
	var in Info
	if err := fl.lines(); err != nil {
		in = fl.fail(err)
	} else {
		in = fl.finish()
	}
	if vd == nil || errors.Is(in.Err, errOtherDir) || isKind(in.Err, KindAccess) || isKind(in.Err, KindNotFound) {
		return in
	}
	return fl.judged(in, vd, fi, now)
}

// warm is the listing of the file at path, in the state fi says, that vd
// kept with a sound verdict on it in that state: nothing of the file is
// read. ok is false when vd keeps none.
func warm(path, scope string, vd *verifiedDir, fi fs.FileInfo) (in Info, ok bool) {
	if vd == nil {
		return Info{}, false
	}
	st, known := stateOf(fi)
	v, hit := vd.lookup(filepath.Base(path), st)
	if !known || !hit || v.kind != 0 || v.sum == nil {
		return Info{}, false
	}
	in = v.sum.info(path, fi.ModTime())
	if scope != "" && filepath.Clean(in.Cwd) != scope {
		in.Err = errOtherDir // List drops it
	}
	return in, true
}

// testHookScan, when set by a test, runs each time a listing reads a file
// (it had no sound verdict with a summary kept for it in its state).
var testHookScan func(path string)

// judged is in, the file's listing, with Verify's verdict on the file: the
// one kept for it in vd when its state is the one kept, else found now
// (and kept when it may be). A problem Verify finds is the listing's
// error, as Verify words it.
func (fl *fileScan) judged(in Info, vd *verifiedDir, fi fs.FileInfo, now time.Time) Info {
	name := filepath.Base(fl.path)
	st, ok := stateOf(fi)
	var problem error
	if v, hit := vd.lookup(name, st); ok && hit {
		problem = v.err(fl.path)
		if problem == nil && in.Err == nil && v.sum == nil && cacheableName(name) {
			// A verdict kept without what the listing shows: keep that too.
			v.sum = summaryOf(&in)
			vd.keep(name, v)
		}
	} else {
		var v verdict
		var keep bool
		v, keep, problem = judge(fl.path, fl.f, st, now)
		if problem == nil && in.Err == nil {
			v.sum = summaryOf(&in)
		}
		if ok && keep && cacheableName(name) {
			vd.keep(name, v)
		}
	}
	if problem == nil || in.Err != nil && in.Err.Error() == problem.Error() {
		// Sound, or the listing found the same problem. (A shape the
		// listing refuses and Verify does not would keep the listing's
		// error: TestListAndVerifyAgree holds that none exists.)
		return in
	}
	return fl.fail(problem)
}

// fileScan is the state of one file's scan.
type fileScan struct {
	sc    *infoScanner
	f     *os.File
	path  string
	scope string
	in    Info

	off       int64 // file offset of the chunk read last
	lineStart int64
	lineNo    int
	pre       [prefixSize]byte
	preN      int
	prevLast  byte    // the last byte of the previous chunk
	text      utf8Run // the UTF-8 check of the line being read
	header    Header
	headerOK  bool
	// bad is the first line that is not an entry; an error unless it
	// turns out to be a torn last line.
	bad     *Error
	badLine linePos
	// Run entries, whether a message follows the last one, and the sum of
	// the messages' costs.
	runs        []linePos
	msgAfterRun bool
	costSum     float64
	costSeen    bool
}

// lines reads the file chunk by chunk and hands each complete line to
// line, with its first bytes, its last byte and, when they are in the
// chunk, its last suffixSize bytes.
func (fl *fileScan) lines() error {
	sc := fl.sc
	for {
		n, rerr := fl.f.Read(sc.chunk)
		chunk := sc.chunk[:n]
		for i := 0; i < n; {
			j := bytes.IndexByte(chunk[i:], '\n')
			if j < 0 {
				fl.preN += copy(fl.pre[fl.preN:], chunk[i:])
				fl.text.feed(chunk[i:], false)
				break
			}
			fl.text.feed(chunk[i:i+j], true)
			utf8OK := !fl.text.bad
			fl.text = utf8Run{}
			var prefix []byte
			if fl.lineStart >= fl.off && fl.preN == 0 {
				prefix = chunk[i : i+min(j, prefixSize)]
			} else {
				fl.preN += copy(fl.pre[fl.preN:], chunk[i:i+j])
				prefix = fl.pre[:fl.preN]
			}
			var last byte // 0 for an empty line
			if j > 0 {
				last = chunk[i+j-1]
			} else if fl.lineStart < fl.off+int64(i) {
				last = fl.prevLast
			}
			end := fl.off + int64(i+j)
			var suffix []byte // the line's last bytes, when in this chunk
			if from := max(fl.lineStart, end-suffixSize); from >= fl.off {
				suffix = chunk[from-fl.off : i+j]
			}
			if err := fl.line(fl.lineStart, end, prefix, last, suffix, utf8OK); err != nil {
				return err
			}
			fl.lineStart = fl.off + int64(i+j+1)
			fl.preN = 0
			i += j + 1
		}
		if n > 0 {
			fl.prevLast = chunk[n-1]
		}
		fl.off += int64(n)
		if rerr == io.EOF || n == 0 && rerr == nil {
			return nil
		}
		if rerr != nil {
			return openError(fl.path, rerr)
		}
	}
}

// line takes one line: the header, or an entry.
func (fl *fileScan) line(start, end int64, prefix []byte, last byte, suffix []byte, utf8OK bool) error {
	fl.lineNo++
	if fl.lineNo == 1 {
		return fl.headerLine(start, end)
	}
	if fl.bad != nil {
		return fl.bad // a line follows it: it is not a torn last line
	}
	if !utf8OK {
		// As entryLine says it, for Verify and resume.
		fl.bad, fl.badLine = corruptError(fl.path, fl.lineNo, "invalid UTF-8"), linePos{start, end - start}
		return nil
	}
	isMsg := bytes.HasPrefix(prefix, messagePrefix)
	isRun := bytes.HasPrefix(prefix, runPrefix)
	isCompaction := bytes.HasPrefix(prefix, compactionPrefix)
	costed := false // the line's cost, if any, is counted
	if last != '}' || !bytes.HasPrefix(prefix, entryPrefix) || bytes.HasPrefix(prefix, headerPrefix) {
		// Not the shape awl's encoder writes: look properly.
		typ, ok, err := fl.decodeLine(start, end)
		if err != nil || !ok {
			return err
		}
		isMsg, isRun, isCompaction = typ == TypeMessage, typ == TypeRun, typ == TypeCompaction
		costed = true
	}
	if isRun {
		fl.runs = append(fl.runs, linePos{start, end - start})
		fl.msgAfterRun = false
	}
	fl.msgAfterRun = fl.msgAfterRun || isMsg
	if !costed {
		if err := fl.fastCost(start, end, suffix, isMsg, isCompaction); err != nil {
			return err
		}
	}
	if isMsg {
		fl.message(start, end)
	}
	return nil
}

// headerLine reads the first line, and stops the scan (errOtherDir) of a
// file that belongs to another directory than scope.
func (fl *fileScan) headerLine(start, end int64) error {
	line, err := fl.sc.readLine(fl.f, start, end)
	if err != nil {
		return err
	}
	err = parseHeader(fl.path, line, &fl.header, true)
	fl.headerOK = err == nil
	fl.in.IsSession = fl.headerOK || isKind(err, KindNewer)
	switch {
	case fl.headerOK:
		fl.in.Cwd = fl.header.Cwd
		fl.in.ForkedFrom, fl.in.ForkedAt = fl.header.ForkedFrom, fl.header.ForkedAt
	case fl.in.IsSession:
		fl.in.Cwd = gjson.GetBytes(line, "cwd").String()
	}
	if fl.scope != "" && fl.in.Cwd != "" && filepath.Clean(fl.in.Cwd) != fl.scope {
		return errOtherDir
	}
	return err
}

// decodeLine decodes a line in a shape other than awl's encoder writes,
// and counts its cost, wherever in the line it stands (a session
// re-serialised with sorted keys has it anywhere). A line that is not an
// entry is remembered as bad (ok false).
func (fl *fileScan) decodeLine(start, end int64) (typ string, ok bool, err error) {
	line, err := fl.sc.readLine(fl.f, start, end)
	if err != nil {
		return "", false, err
	}
	var e Entry
	if err := entryLine(line, &e); err != nil {
		fl.bad, fl.badLine = corruptError(fl.path, fl.lineNo, err.Error()), linePos{start, end - start}
		return "", false, nil
	}
	if c, ok := entryCost(&e); ok {
		fl.addCost(c)
	}
	return e.Type, true, nil
}

// fastCost counts the cost of a line in the shape awl writes: an
// assistant message's costUsd is in its last bytes; a compaction's is not
// last (contextMessages follows it), and compactions are rare, so its line
// is read.
func (fl *fileScan) fastCost(start, end int64, suffix []byte, isMsg, isCompaction bool) error {
	switch {
	case isMsg:
		if suffix == nil {
			var err error
			if suffix, err = fl.sc.readLine(fl.f, max(start, end-suffixSize), end); err != nil {
				return err
			}
		}
		if c, ok := costOf(suffix); ok {
			fl.addCost(c)
		}
	case isCompaction:
		line, err := fl.sc.readLine(fl.f, start, end)
		if err != nil {
			return err
		}
		if c := gjson.GetBytes(line, "costUsd"); c.Type == gjson.Number && c.Float() >= 0 {
			fl.addCost(c.Float())
		}
	}
	return nil
}

func (fl *fileScan) addCost(c float64) {
	fl.costSum += c
	fl.costSeen = true
}

// message counts a message line and remembers where it is when it is
// among the first or last keepLines.
func (fl *fileScan) message(start, end int64) {
	sc := fl.sc
	fl.in.Messages++
	p := linePos{start, end - start}
	if len(sc.head) < keepLines {
		sc.head = append(sc.head, p)
	}
	sc.tail[sc.tailN%keepLines] = p
	sc.tailN++
}

// fail is the Info of a file whose scan failed: what the header says, no
// messages, and err.
func (fl *fileScan) fail(err error) Info {
	in := fl.in
	in.Err = err
	if fl.headerOK {
		in.ID, in.Cwd, in.Created = fl.header.ID, fl.header.Cwd, fl.header.Timestamp
		in.Provider, in.Model = fl.header.Provider, fl.header.Model
	}
	in.Messages = 0
	return in
}

// finish checks the end of a file whose lines were all read, then reads
// the first prompt, the last state and the runs.
func (fl *fileScan) finish() Info {
	sc, in := fl.sc, fl.in
	if fl.lineNo == 0 {
		if fl.off == 0 {
			in.Err = corruptError(fl.path, 1, "empty file: no session header")
		} else {
			in.Err = corruptError(fl.path, 1, "incomplete session header (no newline)")
		}
		return in
	}
	if fl.bad != nil {
		// The last complete line: Open trims it when it is not a whole JSON
		// object (a torn write), and fails on it otherwise, as it does on
		// any line that a torn line follows.
		line, err := sc.readLine(fl.f, fl.badLine.off, fl.badLine.off+fl.badLine.n)
		if err != nil {
			return fl.fail(err)
		}
		if fl.lineStart < fl.off || validObject(line) {
			return fl.fail(fl.bad)
		}
	}
	in.ID, in.Cwd, in.Created = fl.header.ID, fl.header.Cwd, fl.header.Timestamp
	in.Provider, in.Model = fl.header.Provider, fl.header.Model
	if err := sc.firstPrompt(fl.f, &in); err != nil {
		in.Err = err
		return in
	}
	if err := sc.lastState(fl.f, &in); err != nil {
		in.Err = err
		return in
	}
	unknown, err := sc.runState(fl.f, &in, fl.runs, fl.msgAfterRun)
	if err != nil {
		in.Err = err
		return in
	}
	if fl.costSeen && !unknown {
		total := math.Round(fl.costSum*1e9) / 1e9
		in.TotalCostUSD = &total
	}
	return in
}

// utf8Run checks that a line is valid UTF-8 as the listing reads it, a
// chunk at a time: a rune cut by the end of a chunk is carried over to the
// next one.
type utf8Run struct {
	carry [utf8.UTFMax]byte
	n     int
	bad   bool
}

// feed checks p, the next piece of the line; final says p ends it.
func (u *utf8Run) feed(p []byte, final bool) {
	if u.bad {
		return
	}
	if u.n > 0 {
		// Complete the rune carried over from the last piece.
		k := copy(u.carry[u.n:], p)
		buf := u.carry[:u.n+k]
		if !utf8.FullRune(buf) {
			u.n += k // p was too short to complete it
			u.bad = final
			return
		}
		r, size := utf8.DecodeRune(buf)
		if r == utf8.RuneError && size == 1 {
			u.bad = true
			return
		}
		p = p[size-u.n:]
		u.n = 0
	}
	if !final {
		// Hold back a rune that the next piece completes.
		for i := len(p) - 1; i >= 0 && i > len(p)-utf8.UTFMax; i-- {
			if utf8.RuneStart(p[i]) {
				if !utf8.FullRune(p[i:]) {
					u.n = copy(u.carry[:], p[i:])
					p = p[:i]
				}
				break
			}
		}
	}
	u.bad = !utf8.Valid(p)
}

// runPrefix is how awl starts a run entry line, compactionPrefix a
// compaction entry, which records the cost of its summary request.
var (
	runPrefix        = []byte(`{"type":"run"`)
	compactionPrefix = []byte(`{"type":"compaction"`)
)

// suffixSize is how much of a message line's end listing reads for its
// costUsd, which awl writes last.
const suffixSize = 64

var costKey = []byte(`,"costUsd":`)

// costOf reads the costUsd that ends an assistant message line as awl
// writes it: …,"costUsd":0.0123}}. A line that does not end so has no cost
// as far as this fast path knows; a line in another shape (re-serialised,
// keys sorted) is decoded instead, and entryCost reads it.
func costOf(suffix []byte) (float64, bool) {
	end := []byte("}}")
	if !bytes.HasSuffix(suffix, end) {
		return 0, false
	}
	// Walk back over the number, then expect the key: no search.
	numEnd := len(suffix) - len(end)
	k := numEnd
	for k > 0 && strings.IndexByte("0123456789.eE+-", suffix[k-1]) >= 0 {
		k--
	}
	if k == numEnd || !bytes.HasSuffix(suffix[:k], costKey) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(suffix[k:numEnd]), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// entryCost is the cost a decoded entry records: an assistant message's,
// or a compaction's summary request's.
func entryCost(e *Entry) (float64, bool) {
	var c *float64
	switch e.Type {
	case TypeMessage:
		if e.Message != nil {
			c = e.Message.CostUSD
		}
	case TypeCompaction:
		var f Compaction
		if e.Decode(&f) == nil {
			c = f.CostUSD
		}
	}
	if c == nil || *c < 0 || math.IsInf(*c, 0) || math.IsNaN(*c) {
		return 0, false
	}
	return *c, true
}

// runState reads the run entries: the last one becomes LastRun and sets
// Status. unknown reports a run whose cost was not known.
func (sc *infoScanner) runState(f *os.File, in *Info, runs []linePos, msgAfterRun bool) (unknown bool, err error) {
	var all conv.Usage
	for k, p := range runs {
		line, err := sc.readLine(f, p.off, p.off+p.n)
		if err != nil {
			return false, err
		}
		r := gjson.GetManyBytes(line, "costUsd", "exitCode", "reason", "timestamp", "usage.input", "usage.cacheRead", "usage.cacheWrite")
		if r[0].Type != gjson.Number {
			unknown = true
		}
		u := conv.Usage{Input: r[4].Int(), CacheRead: r[5].Int(), CacheWrite: r[6].Int()}
		all = all.Add(u)
		if k == len(runs)-1 {
			ri := &RunInfo{ExitCode: int(r[1].Int()), Reason: r[2].String()}
			if r[0].Type == gjson.Number {
				c := r[0].Float()
				ri.CostUSD = &c
			}
			if share, ok := u.CacheReadShare(); ok {
				ri.CacheReadShare = &share
			}
			ri.Ended, _ = parseTime(r[3].String())
			in.LastRun = ri
		}
	}
	if share, ok := all.CacheReadShare(); ok {
		in.CacheReadShare = &share
	}
	switch {
	case in.LastRun == nil && in.Messages == 0:
	case in.LastRun == nil || msgAfterRun:
		in.Status = "killed"
	case in.LastRun.ExitCode == 0:
		in.Status = "ok"
	case sc.isLimit != nil && sc.isLimit(in.LastRun.ExitCode):
		in.Status = "limit"
	default:
		in.Status = "failed"
	}
	return unknown, nil
}

// errOtherDir stops the scan of a file that belongs to another directory.
var errOtherDir = errors.New("the session of another directory")

// readLine returns the bytes of [start, end), valid until the next call.
func (sc *infoScanner) readLine(f *os.File, start, end int64) ([]byte, error) {
	n := int(end - start)
	if cap(sc.line) < n {
		sc.line = make([]byte, n)
	}
	line := sc.line[:n]
	if _, err := f.ReadAt(line, start); err != nil {
		return nil, err
	}
	return line, nil
}

func (sc *infoScanner) firstPrompt(f *os.File, in *Info) error {
	var e Entry
	for _, p := range sc.head {
		if p.n > promptHead {
			prompt, decided, err := sc.linePrompt(f, p)
			if err != nil {
				return err
			}
			if prompt != "" {
				in.FirstPrompt = prompt
				return nil
			}
			if decided {
				continue
			}
		}
		line, err := sc.readLine(f, p.off, p.off+p.n)
		if err != nil {
			return err
		}
		if !bytes.Contains(line, []byte(`"user"`)) {
			continue
		}
		e = Entry{}
		d := decoder{data: line, copyStrings: true}
		if _, err := d.line(nil, &e); err != nil || e.Message == nil || e.Message.Role != conv.RoleUser {
			continue
		}
		for _, b := range e.Message.Content {
			if b.Type != conv.BlockText || strings.TrimSpace(b.Text) == "" {
				continue
			}
			if sc.isContext != nil && sc.isContext(b.Text) {
				continue
			}
			in.FirstPrompt = oneline.Cut(b.Text, promptCut)
			return nil
		}
	}
	return nil
}

// lineForRole is the line at p, or of a line longer than promptHead its
// first promptHead bytes when they hold what lastState reads of a user
// message (its role, then its provider and model, which awl writes before
// the message's content): a 50 MB prompt is not read to learn the model.
// An assistant message is read whole, for its stop reason and text.
func (sc *infoScanner) lineForRole(f *os.File, p linePos) ([]byte, error) {
	if p.n > promptHead {
		head, err := sc.readLine(f, p.off, p.off+promptHead)
		if err != nil {
			return nil, err
		}
		r := gjson.GetManyBytes(head, "message.role", "provider", "model")
		if r[0].String() == string(conv.RoleUser) && (r[1].Exists() || r[2].Exists()) {
			return head, nil
		}
	}
	return sc.readLine(f, p.off, p.off+p.n)
}

func (sc *infoScanner) lastState(f *os.File, in *Info) error {
	haveModel, haveStop := false, false
	n := min(sc.tailN, keepLines)
	for k := 0; k < n && !(haveModel && haveStop); k++ {
		p := sc.tail[(sc.tailN-1-k)%keepLines]
		line, err := sc.lineForRole(f, p)
		if err != nil {
			return err
		}
		switch gjson.GetBytes(line, "message.role").String() {
		case string(conv.RoleUser):
			// A prompt or tool results after the last assistant message
			// were never answered: there is no last stop reason.
			haveStop = true
			if haveModel {
				continue
			}
			r := gjson.GetManyBytes(line, "provider", "model")
			if r[0].String() != "" || r[1].String() != "" {
				in.Provider, in.Model = r[0].String(), r[1].String()
				haveModel = true
			}
		case string(conv.RoleAssistant):
			if !haveStop {
				in.LastStopReason = gjson.GetBytes(line, "message.stopReason").String()
				if in.LastStopReason != string(conv.StopToolUse) {
					in.LastText = lastText(line)
				}
				haveStop = true
			}
		}
	}
	return nil
}

// lastText is the text of the assistant message on line, its text blocks
// joined as conv.Message.Text joins them, cut to LastTextMax bytes.
func lastText(line []byte) string {
	var b []byte
	gjson.GetBytes(line, "message.content").ForEach(func(_, block gjson.Result) bool {
		if block.Get("type").String() == string(conv.BlockText) {
			b = append(b, block.Get("text").String()...)
		}
		return len(b) < LastTextMax
	})
	return cutText(string(b), LastTextMax)
}

// timeFromName parses the timestamp in "<timestamp>_<id>.jsonl".
func timeFromName(path string) (time.Time, error) {
	ts, _, ok := strings.Cut(filepath.Base(path), "_")
	if !ok || len(ts) != 24 {
		return time.Time{}, errors.New("not a session file name")
	}
	b := []byte(ts)
	b[13], b[16], b[19] = ':', ':', '.'
	t, ok := parseTime(string(b))
	if !ok {
		return time.Time{}, errors.New("not a session file name")
	}
	return t, nil
}

// readHeader reads only the header line of the file at path.
func readHeader(path string) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	h, _, err := readFirstLine(path, f)
	return h, err
}

// maxHeaderLine bounds how much of a file is read looking for the end of its
// header line.
const maxHeaderLine = 16 << 20

// readFirstLine reads the first line of r and parses it as a header. It also
// returns the line (or what there is of it).
func readFirstLine(path string, r io.Reader) (Header, []byte, error) {
	var h Header
	buf := make([]byte, 0, 4096)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf))
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			return h, buf[:i], parseHeader(path, buf[:i], &h, true)
		}
		if err != nil || len(buf) > maxHeaderLine {
			return h, buf, corruptError(path, 1, "incomplete session header")
		}
	}
}

// headerPrefix is how awl starts a header line.
var headerPrefix = []byte(`{"type":"session"`)

// checkSessionFile reads the first line of r, the file at path, and reports
// whether it is an awl session header. It returns nil for a header this awl
// reads; a *Error of KindNewer for one from a newer awl; of KindCorrupt for a
// line that is a session header but a broken one; and of KindNotSession for
// anything else (an empty file, a line that is not a session header), so that
// a file that is not a session is never taken for one.
func checkSessionFile(path string, r io.Reader) error {
	_, line, err := readFirstLine(path, r)
	var se *Error
	if err == nil || !errors.As(err, &se) || se.Kind != KindCorrupt {
		return err
	}
	d := decoder{data: line, copyStrings: true}
	d.ws()
	if d.peek() == '{' {
		if typ, terr := d.typeOf(); terr == nil && typ == TypeSession {
			return err
		}
	}
	if bytes.HasPrefix(line, headerPrefix) {
		return err // a header cut short
	}
	return notSessionError(path, nil)
}

// notSessionError refuses the file at path as not being a session file;
// cause, when set, is what is wrong with its header.
func notSessionError(path string, cause error) *Error {
	e := &Error{Kind: KindNotSession, Path: path, Msg: path + ": not an awl session file", Err: cause}
	var se *Error
	if errors.As(cause, &se) && se.Kind == KindCorrupt {
		e.Msg += " (its header is broken: line " + strings.TrimPrefix(se.Msg, path+":") + ")"
	}
	return e
}

// Resolve turns a reference (full id, unique prefix, or path to a .jsonl
// file) into a session file path. cwd narrows ambiguous prefixes: a prefix
// that matches several sessions but exactly one of cwd's resolves to it.
//
// A path whose first line is not a session header is refused with a *Error
// of KindNotSession; one with a broken header, or a broken line further on,
// resolves (Open then says what is wrong where).
func (s *Store) Resolve(ref, cwd string) (string, error) {
	notFound := &Error{Kind: KindNotFound, Msg: "no session matches " + ref}
	if ref == "" {
		notFound.Msg = "no session matches an empty reference"
		return "", notFound
	}
	if strings.HasSuffix(ref, ".jsonl") || strings.ContainsAny(ref, `/\`) {
		fi, err := os.Stat(ref)
		if err != nil || fi.IsDir() {
			notFound.Path, notFound.Err = ref, err
			return "", notFound
		}
		if err := checkPath(ref); err != nil {
			return "", err
		}
		if abs, err := filepath.Abs(ref); err == nil {
			return abs, nil
		}
		return ref, nil
	}
	want := strings.ToLower(ref)
	dirs, err := subdirs(s.Dir)
	if err != nil {
		return "", err
	}
	var exact, prefix []string
	for _, dir := range dirs {
		paths, err := sessionFiles(dir)
		if err != nil {
			return "", err
		}
		for _, p := range paths {
			id := SessionIDFromPath(p)
			if id == "" {
				if h, err := readHeader(p); err == nil {
					id = h.ID
				}
			}
			switch {
			case id == want:
				exact = append(exact, p)
			case strings.HasPrefix(id, want):
				prefix = append(prefix, p)
			}
		}
	}
	matches := exact
	if len(matches) == 0 {
		matches = prefix
	}
	switch len(matches) {
	case 0:
		return "", notFound
	case 1:
		return matches[0], nil
	}
	// Several: prefer the one session of cwd, checking headers (the cwd
	// encoding can collide).
	var cands []string
	var mine []string
	for _, p := range matches {
		h, err := readHeader(p)
		id := SessionIDFromPath(p)
		if err == nil {
			id = h.ID
			if cwd != "" && filepath.Clean(h.Cwd) == filepath.Clean(cwd) {
				mine = append(mine, p)
			}
		}
		cands = append(cands, id+" ("+h.Cwd+")")
	}
	if len(mine) == 1 {
		return mine[0], nil
	}
	slices.Sort(cands)
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i], _, _ = strings.Cut(c, " ")
	}
	listed := strings.Join(cands[:min(len(cands), maxListedCandidates)], ", ")
	if more := len(cands) - maxListedCandidates; more > 0 {
		listed += fmt.Sprintf(" … and %d more", more)
	}
	return "", &Error{Kind: KindAmbiguous, Candidates: ids,
		Msg: fmt.Sprintf("session reference %s is ambiguous: it matches %s", ref, listed)}
}

// maxListedCandidates is how many sessions an ambiguous reference's message
// names (Error.Candidates has them all).
const maxListedCandidates = 10

// checkPath refuses the file at path when its first line is not a session
// header, or when it cannot be read.
func checkPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return openError(path, err)
	}
	defer f.Close()
	if err := checkSessionFile(path, f); isKind(err, KindNotSession) {
		return err
	}
	return nil
}

func isKind(err error, k ErrorKind) bool {
	var se *Error
	return errors.As(err, &se) && se.Kind == k
}

// Latest returns the path of the session of cwd used most recently: the one
// last written to (the latest modification time), ties broken by the later
// creation time (the header's timestamp), then by the greater id. A session
// resumed by id after another was created is thus the one -c continues.
func (s *Store) Latest(cwd string) (string, error) {
	cwd = filepath.Clean(cwd)
	paths, err := sessionFiles(filepath.Join(s.Dir, EncodeCwd(cwd)))
	if err != nil {
		return "", err
	}
	type cand struct {
		path     string
		modified time.Time
		created  time.Time
		id       string
	}
	var cs []cand
	for _, p := range paths {
		h, err := readHeader(p)
		if err != nil || filepath.Clean(h.Cwd) != cwd {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		cs = append(cs, cand{p, fi.ModTime(), h.Timestamp, h.ID})
	}
	if len(cs) == 0 {
		return "", &Error{Kind: KindNotFound, Msg: "no session for " + cwd}
	}
	best := slices.MaxFunc(cs, func(a, b cand) int {
		if c := a.modified.Compare(b.modified); c != 0 {
			return c
		}
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		if c := strings.Compare(a.id, b.id); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	return best.path, nil
}
