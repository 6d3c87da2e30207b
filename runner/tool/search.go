package tool

import (
	"bytes"
	"context"
	"errors"
	"io"
	"regexp"
	"regexp/syntax"
	"strings"
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
	// lit is a literal every match contains, or empty.
	lit []byte
	// litOnly: the expression is lit and nothing else, so a line holding
	// lit matches without running re.
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
	best := ""
	for _, lit := range requiredLiterals(tree) {
		if len(lit) > len(best) {
			best = lit
		}
	}
	whole := tree
	for whole.Op == syntax.OpCapture {
		whole = whole.Sub[0]
	}
	litOnly := best != "" && whole.Op == syntax.OpLiteral && whole.Flags&syntax.FoldCase == 0 &&
		litText(whole) == best && !strings.Contains(best, "\n")
	if litOnly || len(best) >= minLiteral {
		m.lit, m.litOnly = []byte(best), litOnly
		return m, nil
	}
	if d, err := newDFA(expr); err == nil {
		m.dfa = d
	}
	return m, nil
}

// litText is the text of a literal node.
func litText(re *syntax.Regexp) string { return string(re.Rune) }

// requiredLiterals lists literals that any match of re contains. Literals
// matched without regard to case are left out: the automaton handles those.
func requiredLiterals(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			return []string{litText(re)}
		}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		// Adjacent literals join into a longer one.
		var out []string
		run := ""
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase == 0 {
				run += litText(sub)
				continue
			}
			if run != "" {
				out = append(out, run)
				run = ""
			}
			out = append(out, requiredLiterals(sub)...)
		}
		if run != "" {
			out = append(out, run)
		}
		return out
	}
	return nil
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
	counted := 0
	pos := 0
	for pos < len(data) {
		var i int
		switch {
		case m.lit != nil:
			i = bytes.Index(data[pos:], m.lit)
		default:
			i = 0
		}
		if i < 0 {
			break
		}
		i += pos
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
