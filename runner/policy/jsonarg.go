package policy

import (
	"encoding/json"
	"unicode/utf8"
)

// stringArg reads the string argument key of a call's input as the tools
// decode it: the object's member of exactly that name (encoding/json's
// struct decoding would also take "Command" for "command"), the last one
// when it is repeated. ok is false when it is absent, not a string, or the
// input is not an object: the tool refuses those itself.
//
// The input is scanned once, validated as encoding/json validates it, and
// the member's string decoded in place; whatever the scan does not settle
// (input it finds invalid, a member that is not a plain string, an escape
// it leaves to encoding/json) is decoded by encoding/json as a whole, so
// the answer is always encoding/json's (FuzzStringArg holds them equal).
func stringArg(input []byte, key string) (string, bool) {
	if raw, ok := scanMember(input, key); ok {
		if s, ok := unquote(raw); ok {
			return s, true
		}
	}
	return decodeStringArg(input, key)
}

// decodeStringArg is stringArg by encoding/json alone.
func decodeStringArg(input []byte, key string) (string, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(input, &obj) != nil {
		return "", false
	}
	raw, ok := obj[key]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// maxJSONDepth is how deeply scanMember follows nested values before it
// leaves the input to encoding/json.
const maxJSONDepth = 1000

// jsonScan validates JSON text as encoding/json does, without decoding it.
type jsonScan struct {
	b []byte
	i int
}

// scanMember returns the raw string value of the last member key of the
// top-level object, when input is valid JSON, an object, and that member
// is a string; ok is false otherwise.
func scanMember(input []byte, key string) (raw []byte, ok bool) {
	s := jsonScan{b: input}
	s.space()
	if !s.eat('{') {
		return nil, false
	}
	s.space()
	if !s.eat('}') {
		for {
			s.space()
			k0 := s.i
			if !s.str() {
				return nil, false
			}
			k := s.b[k0:s.i]
			s.space()
			if !s.eat(':') {
				return nil, false
			}
			s.space()
			v0 := s.i
			if !s.value(0) {
				return nil, false
			}
			if keyIs(k, key) {
				raw = s.b[v0:s.i]
			}
			s.space()
			if s.eat('}') {
				break
			}
			if !s.eat(',') {
				return nil, false
			}
		}
	}
	s.space()
	if s.i != len(s.b) || len(raw) == 0 || raw[0] != '"' {
		return nil, false
	}
	return raw, true
}

// keyIs reports whether the raw JSON string k decodes to key.
func keyIs(k []byte, key string) bool {
	if s, ok := unquote(k); ok {
		return s == key
	}
	var s string
	return json.Unmarshal(k, &s) == nil && s == key
}

func (s *jsonScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScan) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// value skips one JSON value.
func (s *jsonScan) value(depth int) bool {
	if s.i >= len(s.b) || depth > maxJSONDepth {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.str()
	case c == '{' || c == '[':
		return s.composite(c, depth)
	case c == 't':
		return s.word("true")
	case c == 'f':
		return s.word("false")
	case c == 'n':
		return s.word("null")
	default:
		return s.number()
	}
}

// composite skips an object or an array.
func (s *jsonScan) composite(open byte, depth int) bool {
	s.i++
	end := byte('}')
	if open == '[' {
		end = ']'
	}
	s.space()
	if s.eat(end) {
		return true
	}
	for {
		s.space()
		if open == '{' {
			if !s.str() {
				return false
			}
			s.space()
			if !s.eat(':') {
				return false
			}
			s.space()
		}
		if !s.value(depth + 1) {
			return false
		}
		s.space()
		if s.eat(end) {
			return true
		}
		if !s.eat(',') {
			return false
		}
	}
}

func (s *jsonScan) word(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// str skips a string: escapes as JSON has them, no control character
// (invalid UTF-8 is valid: encoding/json replaces it).
func (s *jsonScan) str() bool {
	if !s.eat('"') {
		return false
	}
	for s.i < len(s.b) {
		c := s.b[s.i]
		s.i++
		switch {
		case c == '"':
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if s.i >= len(s.b) {
				return false
			}
			e := s.b[s.i]
			s.i++
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(s.b)-s.i < 4 || hex4(s.b[s.i:s.i+4]) < 0 {
					return false
				}
				s.i += 4
			default:
				return false
			}
		}
	}
	return false
}

// number skips a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScan) number() bool {
	s.eat('-')
	switch {
	case s.eat('0'):
	case s.i < len(s.b) && s.b[s.i] >= '1' && s.b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.eat('.') && !s.digits() {
		return false
	}
	if s.eat('e') || s.eat('E') {
		if !s.eat('+') {
			s.eat('-')
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits skips one or more digits.
func (s *jsonScan) digits() bool {
	i0 := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > i0
}

// hex4 decodes four hex digits, or returns -1.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// unquote decodes a raw JSON string that str accepted, as encoding/json
// does; ok is false for what it leaves to encoding/json: invalid UTF-8 and
// \u escapes of surrogates, both of which encoding/json rewrites.
func unquote(raw []byte) (string, bool) {
	in := raw[1 : len(raw)-1]
	esc := false
	for _, c := range in {
		if c == '\\' || c >= utf8.RuneSelf {
			esc = true
			break
		}
	}
	if !esc {
		return string(in), true
	}
	if !utf8.Valid(in) {
		return "", false
	}
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		switch e := in[i]; e {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(in[i+1:])
			if r < 0 || utf8.RuneLen(r) < 0 {
				return "", false // a surrogate
			}
			out = utf8.AppendRune(out, r)
			i += 4
		default: // " \ /
			out = append(out, e)
		}
	}
	return string(out), true
}
