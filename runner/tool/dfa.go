package tool

import (
	"bytes"
	"encoding/binary"
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// dfa answers one question fast: which lines of a buffer does a regular
// expression match somewhere in? It is a lazily built deterministic
// automaton over the expression's compiled program: each state is the set
// of program positions live after the bytes read so far on the line, plus
// what the assertions (^ $ \b \B) need to know of the previous byte. A
// transition is worked out the first time it is taken and cached, so a
// search costs one table look-up per byte. Go's regexp package, which has
// no such automaton, runs tens of times slower on patterns without a
// literal to look for.
//
// A dfa is not safe for concurrent use: each search goroutine has its own,
// sharing the read-only program.
type dfa struct {
	prog   *syntax.Prog
	states map[string]*dfaState
	start  *dfaState
	// matched is the state a line is in once it is known to match.
	matched *dfaState

	resets int // times the cache started over

	// scratch for closures
	stack []uint32
	on    []bool
	core  []uint32
	key   []byte
}

// dfaMaxStates bounds the cache; past it the cache starts over. A state
// caches at most dfaMaxOther transitions on non-ASCII runes.
const (
	dfaMaxStates = 4096
	dfaMaxOther  = 256
)

// dfaState flags.
const (
	dfaPrevWord  = 1 << iota // the byte before was a word byte
	dfaLineStart             // nothing read yet on this line
)

type dfaState struct {
	core  []uint32 // program positions waiting for the next rune
	flags uint8
	// next caches the transitions on ASCII bytes other than '\n'; nil is
	// not worked out yet.
	next [utf8.RuneSelf]*dfaState
	// other caches transitions on non-ASCII runes.
	other map[rune]*dfaState
	// eol is 1 when the line matches if it ends here, -1 when not, 0 when
	// not worked out.
	eol int8
}

// newDFA compiles expr; it fails only where regexp.Compile would.
func newDFA(expr string) (*dfa, error) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, err
	}
	return newDFAProg(prog), nil
}

func newDFAProg(prog *syntax.Prog) *dfa {
	d := &dfa{prog: prog, on: make([]bool, len(prog.Inst)), matched: &dfaState{}}
	d.reset()
	return d
}

// clone returns a dfa for another goroutine, with its own cache.
func (d *dfa) clone() *dfa {
	return newDFAProg(d.prog)
}

func (d *dfa) reset() {
	d.states = make(map[string]*dfaState)
	d.start = d.lookup(nil, dfaLineStart)
}

// lookup returns the state for core and flags, making it if new.
func (d *dfa) lookup(core []uint32, flags uint8) *dfaState {
	d.key = append(d.key[:0], flags)
	for _, pc := range core {
		d.key = binary.LittleEndian.AppendUint32(d.key, pc)
	}
	if s, ok := d.states[string(d.key)]; ok {
		return s
	}
	s := &dfaState{core: slices.Clone(core), flags: flags}
	d.states[string(d.key)] = s
	return s
}

func isWordByte(r rune) bool {
	return r < utf8.RuneSelf && syntax.IsWordChar(r)
}

// step works out the state after s reads rune r; eol instead asks whether
// the line matches if it ends after s. It returns d.matched when the
// expression has matched.
func (d *dfa) step(s *dfaState, r rune, eol bool) *dfaState {
	prevWord := s.flags&dfaPrevWord != 0
	nextWord := !eol && isWordByte(r)
	var ctx syntax.EmptyOp
	if s.flags&dfaLineStart != 0 {
		ctx |= syntax.EmptyBeginLine | syntax.EmptyBeginText
	}
	if eol {
		ctx |= syntax.EmptyEndLine | syntax.EmptyEndText
	}
	if prevWord != nextWord {
		ctx |= syntax.EmptyWordBoundary
	} else {
		ctx |= syntax.EmptyNoWordBoundary
	}
	d.stack = append(d.stack[:0], uint32(d.prog.Start))
	d.stack = append(d.stack, s.core...)
	d.core = d.core[:0]
	clear(d.on)
	matched := false
	for len(d.stack) > 0 && !matched {
		pc := d.stack[len(d.stack)-1]
		d.stack = d.stack[:len(d.stack)-1]
		if d.on[pc] {
			continue
		}
		d.on[pc] = true
		inst := &d.prog.Inst[pc]
		switch inst.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			d.stack = append(d.stack, inst.Arg, inst.Out)
		case syntax.InstCapture, syntax.InstNop:
			d.stack = append(d.stack, inst.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(inst.Arg)&^ctx == 0 {
				d.stack = append(d.stack, inst.Out)
			}
		case syntax.InstMatch:
			matched = true
		case syntax.InstRune, syntax.InstRune1:
			if !eol && inst.MatchRune(r) {
				d.core = append(d.core, inst.Out)
			}
		case syntax.InstRuneAny:
			if !eol {
				d.core = append(d.core, inst.Out)
			}
		case syntax.InstRuneAnyNotNL:
			if !eol && r != '\n' {
				d.core = append(d.core, inst.Out)
			}
		}
	}
	if matched {
		return d.matched
	}
	if eol {
		return nil
	}
	slices.Sort(d.core)
	d.core = slices.Compact(d.core)
	var flags uint8
	if nextWord {
		flags |= dfaPrevWord
	}
	if len(d.states) >= dfaMaxStates {
		// Start over; s stays valid for this step, its successors are
		// rebuilt as they are needed.
		d.reset()
		d.resets++
	}
	return d.lookup(d.core, flags)
}

// matchesAtEOL reports whether a line that ends in state s matches.
func (d *dfa) matchesAtEOL(s *dfaState) bool {
	if s.eol == 0 {
		s.eol = -1
		if d.step(s, 0, true) == d.matched {
			s.eol = 1
		}
	}
	return s.eol > 0
}

// scan calls visit with the start and end (newline excluded) of each line
// of data that matches, in order. data holds whole lines; the last may lack
// its newline.
func (d *dfa) scan(data []byte, visit func(ls, le int)) {
	ls := 0
	s := d.start
	i := 0
	for i < len(data) {
		// The hot loop: one cached transition per byte.
		for i < len(data) {
			c := data[i]
			if c >= utf8.RuneSelf {
				break
			}
			ns := s.next[c]
			if ns == nil {
				break
			}
			s = ns
			i++
		}
		if s == d.matched {
			le := len(data)
			if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
				le = i + j
			}
			visit(ls, le)
			i, ls, s = le+1, le+1, d.start
			continue
		}
		if i == len(data) {
			break
		}
		c := data[i]
		switch {
		case c == '\n':
			if d.matchesAtEOL(s) {
				visit(ls, i)
			}
			i++
			ls, s = i, d.start
		case c < utf8.RuneSelf:
			ns := d.step(s, rune(c), false)
			s.next[c] = ns
			s = ns
			i++
		default:
			r, w := utf8.DecodeRune(data[i:])
			ns, ok := s.other[r]
			if !ok {
				ns = d.step(s, r, false)
				if s.other == nil {
					s.other = make(map[rune]*dfaState)
				}
				if len(s.other) < dfaMaxOther {
					s.other[r] = ns
				}
			}
			s = ns
			i += w
		}
	}
	if ls < len(data) && (s == d.matched || d.matchesAtEOL(s)) {
		visit(ls, len(data))
	}
}
