package tool

import (
	"bytes"
	"context"
	"errors"
	"io"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// searchBufBytes is the fixed buffer a file is searched through: however
// large a file, grep holds no more of it than this at once.
const searchBufBytes = 256 << 10

// errBinary marks a file skipped because its first block is not text.
var errBinary = errors.New("binary file")

// lineMatcher finds the lines a regular expression matches, searching whole
// buffers rather than line by line: a literal that every match contains is
// looked for with bytes.Index, and the regular expression runs only on the
// lines holding it.
type lineMatcher struct {
	re *regexp.Regexp
	// lit finds a literal that every match contains, exactly or without
	// regard to ASCII case; nil when there is none worth looking for.
	lit *litFinder
	// litOnly: the expression is that literal and nothing else, so a line
	// holding it matches without running re.
	litOnly bool
	// dfa finds matching lines when there is no literal worth looking for;
	// each searcher runs a clone of it.
	dfa *dfa
}

// minLiteral is the shortest literal worth a prefilter: shorter ones occur
// on so many lines that the automaton is faster.
const minLiteral = 3

// newLineMatcher compiles expr (RE2 syntax, matched against each line).
func newLineMatcher(expr string) (*lineMatcher, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	m := &lineMatcher{re: re}
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return m, nil
	}
	tree = tree.Simplify()
	best, bestFold := "", ""
	for _, c := range requiredLiterals(tree) {
		switch {
		case !c.fold && len(c.text) > len(best):
			best = c.text
		case c.fold:
			for _, p := range foldPieces(c.text) {
				if len(p) > len(bestFold) {
					bestFold = p
				}
			}
		}
	}
	whole := tree
	for whole.Op == syntax.OpCapture {
		whole = whole.Sub[0]
	}
	litOnly := best != "" && whole.Op == syntax.OpLiteral && whole.Flags&syntax.FoldCase == 0 &&
		litText(whole) == best && !strings.Contains(best, "\n")
	if litOnly || len(best) >= minLiteral {
		m.lit, m.litOnly = newLitFinder(best, false), litOnly
		return m, nil
	}
	if len(bestFold) >= minLiteral {
		m.lit = newLitFinder(bestFold, true)
		return m, nil
	}
	if d, err := newDFA(expr); err == nil {
		m.dfa = d
	}
	return m, nil
}

// litText is the text of a literal node.
func litText(re *syntax.Regexp) string { return string(re.Rune) }

// litCand is a literal that every match contains; fold marks one matched
// without regard to case.
type litCand struct {
	text string
	fold bool
}

// requiredLiterals lists literals that any match of re contains.
func requiredLiterals(re *syntax.Regexp) []litCand {
	switch re.Op {
	case syntax.OpLiteral:
		return []litCand{{litText(re), re.Flags&syntax.FoldCase != 0}}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		// Adjacent literals of the same kind join into a longer one.
		var out []litCand
		var run litCand
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral {
				c := litCand{litText(sub), sub.Flags&syntax.FoldCase != 0}
				if run.text == "" || run.fold == c.fold {
					run.text += c.text
					run.fold = c.fold
					continue
				}
				out = append(out, run)
				run = c
				continue
			}
			if run.text != "" {
				out = append(out, run)
				run = litCand{}
			}
			out = append(out, requiredLiterals(sub)...)
		}
		if run.text != "" {
			out = append(out, run)
		}
		return out
	}
	return nil
}

// foldPieces splits a case-folded literal into the parts that ASCII case
// folding finds exactly: k and s also fold to non-ASCII runes (K, ſ), and
// non-ASCII letters have folds of other lengths, so they split it.
func foldPieces(text string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(text); i++ {
		if i < len(text) {
			b := text[i]
			if b < utf8.RuneSelf && b != 'k' && b != 'K' && b != 's' && b != 'S' {
				continue
			}
		}
		if i > start {
			out = append(out, text[start:i])
		}
		start = i + 1
	}
	return out
}

// litFinder looks for a literal by one of its bytes, the one likely rarest
// in source text, found with IndexByte (in either case when fold is set),
// and compares the literal around it. bytes.Index starts from the first
// byte, which in code is often a common one.
type litFinder struct {
	lit    []byte // in lower case when fold
	fold   bool   // ASCII letters match in either case
	off    int    // index of the byte looked for
	lo, up byte   // that byte, in lower and upper case when fold
}

// byteCommonness orders bytes by how often they occur in source code, most
// common first; bytes not listed (upper-case letters among them) count as
// rarer than all of them.
const byteCommonness = " etaoinsrlcdhu.pm(),fg_y;=bw\"v:/k-x0123456789jqz\t\n"

func newLitFinder(text string, fold bool) *litFinder {
	lit := []byte(text)
	if fold {
		lit = []byte(strings.ToLower(text))
	}
	rank := func(b byte) int {
		if i := strings.IndexByte(byteCommonness, b); i >= 0 {
			return i
		}
		return len(byteCommonness)
	}
	off := 0
	for i, b := range lit {
		if rank(b) > rank(lit[off]) {
			off = i
		}
	}
	f := &litFinder{lit: lit, fold: fold, off: off, lo: lit[off], up: lit[off]}
	if fold && 'a' <= f.lo && f.lo <= 'z' {
		f.up = f.lo - 'a' + 'A'
	}
	return f
}

// litScan finds a litFinder's literal in one buffer. It remembers where
// each case of the byte it looks for occurs next, so that no byte is
// scanned twice however the two cases interleave.
type litScan struct {
	f              *litFinder
	data           []byte
	nextLo, nextUp int // next index of f.lo, f.up; -1 for none left
	started        bool
}

func newLitScan(f *litFinder, data []byte) *litScan {
	return &litScan{f: f, data: data}
}

// next returns where the literal first starts at or after from, or -1.
// Successive calls must not go backwards.
func (s *litScan) next(from int) int {
	f := s.f
	for q := from + f.off; q < len(s.data); {
		if !s.started || (s.nextLo >= 0 && s.nextLo < q) {
			s.nextLo = indexFrom(s.data, f.lo, q)
		}
		if f.up == f.lo {
			s.nextUp = s.nextLo
		} else if !s.started || (s.nextUp >= 0 && s.nextUp < q) {
			s.nextUp = indexFrom(s.data, f.up, q)
		}
		s.started = true
		i := s.nextLo
		if i < 0 || (s.nextUp >= 0 && s.nextUp < i) {
			i = s.nextUp
		}
		if i < 0 {
			return -1
		}
		start := i - f.off
		if end := start + len(f.lit); end <= len(s.data) {
			if f.fold && asciiEqualFold(s.data[start:end], f.lit) || !f.fold && bytes.Equal(s.data[start:end], f.lit) {
				return start
			}
		}
		q = i + 1
	}
	return -1
}

// indexFrom is bytes.IndexByte from position from, as an absolute index.
func indexFrom(data []byte, b byte, from int) int {
	if i := bytes.IndexByte(data[from:], b); i >= 0 {
		return from + i
	}
	return -1
}

// asciiEqualFold reports whether b equals lower, which is in lower case,
// with ASCII letters of b compared in lower case.
func asciiEqualFold(b, lower []byte) bool {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// searcher searches files for a lineMatcher through fixed buffers. One
// searcher serves one goroutine.
type searcher struct {
	m   *lineMatcher
	buf []byte
	dfa *dfa
}

func newSearcher(m *lineMatcher) *searcher {
	s := &searcher{m: m, buf: make([]byte, searchBufBytes)}
	if m.dfa != nil {
		s.dfa = m.dfa.clone()
	}
	return s
}

// search calls visit with the number and text of each line of r that
// matches, in order. A line longer than the buffer is searched in its first
// searchBufBytes.
// It returns errBinary, without calling visit, when r's first block is not
// text, and ctx's error when ctx is done.
func (s *searcher) search(ctx context.Context, r io.Reader, visit func(lineNo int, line []byte)) error {
	buf := s.buf
	n, err := readFull(r, buf)
	eof := err != nil
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if looksBinary(buf[:min(n, sniffBytes)]) {
		return errBinary
	}
	lineNo := 1
	start := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		data := buf[start:n]
		end := len(data)
		if !eof {
			end = bytes.LastIndexByte(data, '\n') + 1
		}
		if end == 0 && !eof {
			if start > 0 {
				n = copy(buf, data)
				start = 0
				k, err := readFull(r, buf[n:])
				n += k
				eof = err != nil
				continue
			}
			// One line fills the buffer: search its head, skip the rest.
			s.scan(data, lineNo, visit)
			for {
				k, err := readFull(r, buf)
				if i := bytes.IndexByte(buf[:k], '\n'); i >= 0 {
					n = copy(buf, buf[i+1:k])
					eof = err != nil
					break
				}
				if err != nil {
					return nil // the long line was the last
				}
			}
			lineNo++
			if !eof {
				k, err := readFull(r, buf[n:])
				n += k
				eof = err != nil
			}
			continue
		}
		lineNo = s.scan(data[:end], lineNo, visit)
		start += end
		if eof {
			return nil
		}
		n = copy(buf, buf[start:n])
		start = 0
		k, err := readFull(r, buf[n:])
		n += k
		eof = err != nil
	}
}

// scan visits the matching lines of data, which holds whole lines (the last
// may lack its newline), the first numbered lineNo. It returns the number
// of the line after data.
func (s *searcher) scan(data []byte, lineNo int, visit func(int, []byte)) int {
	m := s.m
	if s.dfa != nil {
		counted := 0
		s.dfa.scan(data, func(ls, le int) {
			lineNo += bytes.Count(data[counted:ls], []byte{'\n'})
			counted = ls
			visit(lineNo, data[ls:le])
		})
		return lineNo + bytes.Count(data[counted:], []byte{'\n'})
	}
	var lits *litScan
	if m.lit != nil {
		lits = newLitScan(m.lit, data)
	}
	counted := 0
	pos := 0
	for pos < len(data) {
		i := pos
		if lits != nil {
			i = lits.next(pos)
		}
		if i < 0 {
			break
		}
		ls := pos + bytes.LastIndexByte(data[pos:i], '\n') + 1
		le := len(data)
		if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
			le = i + j
		}
		line := data[ls:le]
		if m.litOnly || m.re.Match(line) {
			lineNo += bytes.Count(data[counted:ls], []byte{'\n'})
			counted = ls
			visit(lineNo, line)
		}
		pos = le + 1
	}
	return lineNo + bytes.Count(data[counted:], []byte{'\n'})
}

// readFull reads until buf is full or r ends; io.EOF means it ended.
func readFull(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := r.Read(buf[n:])
		n += k
		if err != nil {
			return n, err
		}
		if k == 0 {
			return n, io.ErrNoProgress
		}
	}
	return n, nil
}
