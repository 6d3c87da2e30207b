package session

import (
	"encoding/binary"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/awlrun/awl/conv"
)

// This file reads lines: a single-pass JSON reader specialised for the v1
// format. It validates what it skips (an unknown member must still be valid
// JSON), decodes only the fields it knows, and, when reading a whole file,
// returns strings that point into the file's bytes. Load copies the strings
// that needed unescaping, since its entries keep their exact Line; Open
// unescapes them in place, over their own escaped bytes, so that every
// string shares the file buffer and opening a session for resume costs little
// more than the file itself.

// syntaxError is malformed JSON at byte offset Off of the line.
type syntaxError struct {
	Off int
	Msg string
}

func (e *syntaxError) Error() string {
	return "invalid JSON at column " + strconv.Itoa(e.Off+1) + ": " + e.Msg
}

// fieldError is well-formed JSON with a known field of the wrong shape.
type fieldError struct {
	Path string
	Msg  string
}

func (e *fieldError) Error() string { return e.Path + ": " + e.Msg }

// under prefixes a field error's path with p.
func under(p string, err error) error {
	if fe, ok := err.(*fieldError); ok {
		if fe.Path == "" {
			fe.Path = p
		} else if fe.Path[0] == '[' {
			fe.Path = p + fe.Path
		} else {
			fe.Path = p + "." + fe.Path
		}
	}
	return err
}

// underIndex prefixes a field error's path with [i].
func underIndex(i int, err error) error {
	if err == nil {
		return nil
	}
	return under("["+strconv.Itoa(i)+"]", err)
}

// newerError is a header whose version this awl cannot read.
type newerError struct{ Version int64 }

func (e *newerError) Error() string {
	return "written by a newer awl (format version " + strconv.FormatInt(e.Version, 10) + ", this awl reads " + strconv.Itoa(Version) + ")"
}

const maxDepth = 10000

// decoder reads one line. The zero value plus data is ready to use.
type decoder struct {
	data []byte
	pos  int
	// copyStrings makes every returned string its own copy. Without it,
	// strings that need no unescaping alias data, which must then never
	// change (file buffers read by Open and Load).
	copyStrings bool
	// inPlace (only without copyStrings) decodes a string value that needs
	// unescaping over its own escaped bytes in data, and returns it sharing
	// data. It is for a buffer whose lines no one reads again as written
	// (Open's): see strInPlace for why the bytes that other strings share
	// are never touched.
	inPlace bool
	a       *arena
	scratch []byte
	blocks  []conv.Block
}

func (d *decoder) reset(line []byte) {
	d.data = line
	d.pos = 0
}

func (d *decoder) syntax(msg string) error { return &syntaxError{Off: d.pos, Msg: msg} }

func (d *decoder) ws() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\r', '\n':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) peek() byte {
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

// end checks that only whitespace is left.
func (d *decoder) end() error {
	d.ws()
	if d.pos != len(d.data) {
		return d.syntax("unexpected data after the object")
	}
	return nil
}

// members walks the object at d.pos, calling fn with each member name and
// the offset of that name; fn must consume the value.
func (d *decoder) members(fn func(key string, keyStart int) error) error {
	d.ws()
	if d.peek() != '{' {
		return d.syntax("want an object")
	}
	d.pos++
	d.ws()
	if d.peek() == '}' {
		d.pos++
		return nil
	}
	for {
		if d.peek() != '"' {
			return d.syntax("want a member name")
		}
		keyStart := d.pos
		key, err := d.str()
		if err != nil {
			return err
		}
		d.ws()
		if d.peek() != ':' {
			return d.syntax("want ':'")
		}
		d.pos++
		d.ws()
		if err := fn(key, keyStart); err != nil {
			return err
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.pos++
			d.ws()
		case '}':
			d.pos++
			return nil
		default:
			return d.syntax("want ',' or '}'")
		}
	}
}

// elements walks the array at d.pos; fn must consume each element.
func (d *decoder) elements(fn func(i int) error) error {
	d.ws()
	if d.peek() != '[' {
		return d.syntax("want an array")
	}
	d.pos++
	d.ws()
	if d.peek() == ']' {
		d.pos++
		return nil
	}
	for i := 0; ; i++ {
		d.ws()
		if err := fn(i); err != nil {
			return err
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return nil
		default:
			return d.syntax("want ',' or ']'")
		}
	}
}

// skip validates and steps over one value.
func (d *decoder) skip(depth int) error {
	if depth > maxDepth {
		return d.syntax("nested too deeply")
	}
	d.ws()
	switch c := d.peek(); {
	case c == '{':
		return d.members(func(string, int) error { return d.skip(depth + 1) })
	case c == '[':
		return d.elements(func(int) error { return d.skip(depth + 1) })
	case c == '"':
		return d.skipString()
	case c == '-' || c >= '0' && c <= '9':
		_, _, err := d.number()
		return err
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case d.pos >= len(d.data):
		return d.syntax("unexpected end of line")
	default:
		return d.syntax("unexpected " + strconv.QuoteRune(rune(c)))
	}
}

func (d *decoder) literal(lit string) error {
	if len(d.data)-d.pos >= len(lit) && string(d.data[d.pos:d.pos+len(lit)]) == lit {
		d.pos += len(lit)
		return nil
	}
	return d.syntax("invalid literal")
}

// number steps over a JSON number, returning its text and whether it is an
// integer (no fraction or exponent).
func (d *decoder) number() (text []byte, isInt bool, err error) {
	start := d.pos
	p := d.pos
	data := d.data
	if p < len(data) && data[p] == '-' {
		p++
	}
	switch {
	case p < len(data) && data[p] == '0':
		p++
	case p < len(data) && data[p] >= '1' && data[p] <= '9':
		for p < len(data) && data[p] >= '0' && data[p] <= '9' {
			p++
		}
	default:
		d.pos = p
		return nil, false, d.syntax("invalid number")
	}
	isInt = true
	if p < len(data) && data[p] == '.' {
		isInt = false
		p++
		q := p
		for p < len(data) && data[p] >= '0' && data[p] <= '9' {
			p++
		}
		if p == q {
			d.pos = p
			return nil, false, d.syntax("invalid number")
		}
	}
	if p < len(data) && (data[p] == 'e' || data[p] == 'E') {
		isInt = false
		p++
		if p < len(data) && (data[p] == '+' || data[p] == '-') {
			p++
		}
		q := p
		for p < len(data) && data[p] >= '0' && data[p] <= '9' {
			p++
		}
		if p == q {
			d.pos = p
			return nil, false, d.syntax("invalid number")
		}
	}
	d.pos = p
	return data[start:p], isInt, nil
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special reports whether any byte of x is a quote, a backslash or a
// control character (may report false positives above a true one).
func special(x uint64) bool {
	q := x ^ (lsb * '"')
	b := x ^ (lsb * '\\')
	return ((x-lsb*0x20)&^x|(q-lsb)&^q|(b-lsb)&^b)&msb != 0
}

// scanPlain returns the offset of the first quote, backslash or control
// byte at or after i, or len(data).
func scanPlain(data []byte, i int) int {
	for {
		for i+8 <= len(data) && !special(binary.LittleEndian.Uint64(data[i:])) {
			i += 8
		}
		for end := min(i+8, len(data)); i < end; i++ {
			if c := data[i]; c < 0x20 || c == '"' || c == '\\' {
				return i
			}
		}
		if i >= len(data) {
			return i
		}
	}
}

// skipString validates and steps over the string at d.pos.
func (d *decoder) skipString() error {
	i := d.pos + 1
	for {
		i = scanPlain(d.data, i)
		if i >= len(d.data) {
			d.pos = i
			return d.syntax("unterminated string")
		}
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			return nil
		case c == '\\':
			d.pos = i
			n, _, err := d.escape(i)
			if err != nil {
				return err
			}
			i += n
		default:
			d.pos = i
			return d.syntax("control character in string")
		}
	}
}

// escape decodes the escape sequence at data[i] ('\\'), returning its
// length in the line and the rune (or byte) it stands for.
func (d *decoder) escape(i int) (n int, r rune, err error) {
	data := d.data
	if i+1 >= len(data) {
		d.pos = i
		return 0, 0, d.syntax("unterminated string")
	}
	switch data[i+1] {
	case '"', '\\', '/':
		return 2, rune(data[i+1]), nil
	case 'b':
		return 2, '\b', nil
	case 'f':
		return 2, '\f', nil
	case 'n':
		return 2, '\n', nil
	case 'r':
		return 2, '\r', nil
	case 't':
		return 2, '\t', nil
	case 'u':
		r, ok := hex4(data, i+2)
		if !ok {
			d.pos = i
			return 0, 0, d.syntax("invalid \\u escape")
		}
		if utf16.IsSurrogate(r) {
			if i+7 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
				if r2, ok := hex4(data, i+8); ok {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						return 12, dec, nil
					}
				}
			}
			return 6, utf8.RuneError, nil
		}
		return 6, r, nil
	default:
		d.pos = i
		return 0, 0, d.syntax("invalid escape")
	}
}

func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// str decodes the string at d.pos, never in place: member names, and
// anything that will be read again.
func (d *decoder) str() (string, error) { return d.quoted(false) }

// strValue decodes the string value at d.pos, in place when d.inPlace.
func (d *decoder) strValue() (string, error) { return d.quoted(d.inPlace && !d.copyStrings) }

func (d *decoder) quoted(inPlace bool) (string, error) {
	start := d.pos + 1
	i := scanPlain(d.data, start)
	if i < len(d.data) && d.data[i] == '"' {
		d.pos = i + 1
		return d.view(start, i), nil
	}
	if inPlace {
		return d.strInPlace(start, i)
	}
	return d.strEscaped(start, i)
}

func (d *decoder) view(start, end int) string {
	if start == end {
		return ""
	}
	if d.copyStrings {
		return string(d.data[start:end])
	}
	return unsafe.String(&d.data[start], end-start)
}

func (d *decoder) strEscaped(start, i int) (string, error) {
	buf := append(d.scratch[:0], d.data[start:i]...)
	for {
		if i >= len(d.data) {
			d.pos = i
			return "", d.syntax("unterminated string")
		}
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			d.scratch = buf
			return d.a.string(buf), nil
		case c == '\\':
			n, r, err := d.escape(i)
			if err != nil {
				return "", err
			}
			if r < utf8.RuneSelf {
				buf = append(buf, byte(r))
			} else {
				buf = utf8.AppendRune(buf, r)
			}
			i += n
		default:
			d.pos = i
			return "", d.syntax("control character in string")
		}
		j := scanPlain(d.data, i)
		buf = append(buf, d.data[i:j]...)
		i = j
	}
}

// strInPlace unescapes the string whose content starts at start, where
// data[start:i] is plain, writing the decoded bytes over the string's own
// escaped bytes, and returns them as a string sharing data.
//
// Unescaping never lengthens text: every escape decodes to at most its own
// length (`\n` 2 → 1 byte, `\uXXXX` 6 → at most 3, a surrogate pair 12 → 4,
// a lone surrogate 6 → U+FFFD's 3). So the write position w never passes the
// read position i, each escape is read whole before its rune is written, and
// every byte written lies in [start, i) of this string's own span: bytes of
// earlier strings (already shared), of keys and of the rest of the line are
// never touched. The bytes left between w and the closing quote are dead.
// Nothing may scan this string's bytes again afterwards (typeOf, which
// rewinds, therefore decodes without inPlace).
func (d *decoder) strInPlace(start, i int) (string, error) {
	data := d.data
	w := i
	for {
		if i >= len(data) {
			d.pos = i
			return "", d.syntax("unterminated string")
		}
		switch c := data[i]; {
		case c == '"':
			d.pos = i + 1
			return unsafe.String(&data[start], w-start), nil
		case c == '\\':
			n, r, err := d.escape(i)
			if err != nil {
				return "", err
			}
			if r < utf8.RuneSelf {
				data[w] = byte(r)
				w++
			} else {
				w += utf8.EncodeRune(data[w:i+n], r)
			}
			i += n
		default:
			d.pos = i
			return "", d.syntax("control character in string")
		}
		j := scanPlain(data, i)
		w += copy(data[w:], data[i:j])
		i = j
	}
}

// Typed field readers: a value of the wrong JSON type is a fieldError (the
// value is still validated and skipped, so the line's syntax is checked
// first). null reads as the zero value.

func (d *decoder) wrong(want string) error {
	if err := d.skip(0); err != nil {
		return err
	}
	return &fieldError{Msg: "want " + want}
}

func (d *decoder) stringField() (string, error) {
	switch d.peek() {
	case '"':
		return d.strValue()
	case 'n':
		return "", d.literal("null")
	}
	return "", d.wrong("a string")
}

func (d *decoder) intField() (int64, error) {
	switch c := d.peek(); {
	case c == '-' || c >= '0' && c <= '9':
		text, isInt, err := d.number()
		if err != nil {
			return 0, err
		}
		if !isInt {
			return 0, &fieldError{Msg: "want an integer"}
		}
		n, err := strconv.ParseInt(string(text), 10, 64)
		if err != nil {
			return 0, &fieldError{Msg: "integer out of range"}
		}
		return n, nil
	case c == 'n':
		return 0, d.literal("null")
	}
	return 0, d.wrong("a number")
}

// floatField reads a number; ok is false for null.
func (d *decoder) floatField() (v float64, ok bool, err error) {
	switch c := d.peek(); {
	case c == '-' || c >= '0' && c <= '9':
		text, _, err := d.number()
		if err != nil {
			return 0, false, err
		}
		v, err := strconv.ParseFloat(string(text), 64)
		if err != nil {
			return 0, false, &fieldError{Msg: "number out of range"}
		}
		return v, true, nil
	case c == 'n':
		return 0, false, d.literal("null")
	}
	return 0, false, d.wrong("a number")
}

func (d *decoder) boolField() (bool, error) {
	switch d.peek() {
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return false, d.literal("null")
	}
	return false, d.wrong("a boolean")
}

func (d *decoder) timeField() (time.Time, error) {
	s, err := d.stringField()
	if err != nil || s == "" {
		return time.Time{}, err
	}
	t, ok := parseTime(s)
	if !ok {
		return time.Time{}, &fieldError{Msg: "want an RFC 3339 time, got " + strconv.Quote(s)}
	}
	return t, nil
}

// parseTime parses "2006-01-02T15:04:05.000Z" quickly and any RFC 3339 time
// otherwise, returning UTC.
func parseTime(s string) (time.Time, bool) {
	if len(s) == 24 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' && s[19] == '.' && s[23] == 'Z' {
		num := func(i, n int) int {
			v := 0
			for _, c := range []byte(s[i : i+n]) {
				if c < '0' || c > '9' {
					return -1
				}
				v = v*10 + int(c-'0')
			}
			return v
		}
		y, mo, dd, h, mi, sec, ms := num(0, 4), num(5, 2), num(8, 2), num(11, 2), num(14, 2), num(17, 2), num(20, 3)
		if y >= 0 && mo >= 1 && mo <= 12 && dd >= 1 && dd <= 31 && h >= 0 && h < 24 && mi >= 0 && mi < 60 && sec >= 0 && sec < 60 && ms >= 0 {
			t := time.Date(y, time.Month(mo), dd, h, mi, sec, ms*1e6, time.UTC)
			if t.Day() == dd {
				return t, true
			}
		}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// typeOf returns the "type" member of the object at d.pos (which is left
// unchanged): read directly when it is the first member, as awl writes it,
// found by a validating scan otherwise. Missing gives "". The object is
// read again afterwards, so the type is never decoded in place.
func (d *decoder) typeOf() (string, error) {
	start, inPlace := d.pos, d.inPlace
	d.inPlace = false
	defer func() { d.pos, d.inPlace = start, inPlace }()
	d.ws()
	p := d.pos + 1
	for p < len(d.data) && (d.data[p] == ' ' || d.data[p] == '\t') {
		p++
	}
	if len(d.data)-p > 7 && string(d.data[p:p+7]) == `"type":` && d.data[p+7] == '"' {
		d.pos = p + 7
		return d.str()
	}
	var typ string
	err := d.members(func(key string, _ int) error {
		if key != "type" {
			return d.skip(1)
		}
		var err error
		typ, err = d.stringField()
		return under("type", err)
	})
	return typ, err
}

// The entry types this version knows.
const (
	TypeSession = "session"
	TypeMessage = "message"
)

// header decodes a header line at d.pos. A version above Version wins over
// any other problem with the line.
func (d *decoder) header(h *Header) error {
	var first error
	seenVersion := false
	note := func(field string, err error) error {
		if _, ok := err.(*fieldError); ok {
			if first == nil {
				first = under(field, err)
			}
			return nil
		}
		return err
	}
	err := d.members(func(key string, _ int) error {
		var err error
		switch key {
		case "version":
			var v int64
			v, err = d.intField()
			h.Version = int(v)
			if v > Version {
				return &newerError{Version: v}
			}
			seenVersion = err == nil
		case "id":
			h.ID, err = d.stringField()
		case "timestamp":
			h.Timestamp, err = d.timeField()
		case "cwd":
			h.Cwd, err = d.stringField()
		case "provider":
			h.Provider, err = d.stringField()
		case "model":
			h.Model, err = d.stringField()
		case "forkedFrom":
			h.ForkedFrom, err = d.stringField()
		case "forkedAt":
			h.ForkedAt, err = d.stringField()
		default:
			err = d.skip(1)
		}
		return note(key, err)
	})
	if err != nil {
		return err
	}
	if first != nil {
		return first
	}
	if !seenVersion {
		return &fieldError{Path: "version", Msg: "missing"}
	}
	if h.Version < 1 {
		return &fieldError{Path: "version", Msg: "unsupported version " + strconv.Itoa(h.Version)}
	}
	return nil
}

// entry decodes an entry line of type typ at d.pos into e.
func (d *decoder) entry(typ string, e *Entry) error {
	e.Type = typ
	if typ != TypeMessage {
		return d.otherEntry(e)
	}
	var haveID bool
	err := d.members(func(key string, _ int) error {
		var err error
		switch key {
		case "id":
			e.ID, err = d.stringField()
			haveID = e.ID != ""
		case "parentId":
			e.ParentID, err = d.stringField()
		case "timestamp":
			e.Timestamp, err = d.timeField()
		case "provider":
			e.Provider, err = d.stringField()
		case "model":
			e.Model, err = d.stringField()
		case "message":
			if d.peek() != '{' {
				return under("message", d.wrong("an object"))
			}
			m := d.a.message()
			err = d.message(m)
			e.Message = m
		default:
			return d.skip(1)
		}
		return under(key, err)
	})
	if err != nil {
		return err
	}
	if !haveID {
		return &fieldError{Path: "id", Msg: "missing"}
	}
	if e.Message == nil {
		return &fieldError{Path: "message", Msg: "missing"}
	}
	return nil
}

// otherEntry decodes an entry of a type this version does not interpret:
// the base fields, and Fields holding every other member as written. Fields
// is a copy, made from bytes that are only skipped (member names are never
// decoded in place, other members' values are not decoded at all), so it is
// byte-exact even when the base fields are unescaped in place.
func (d *decoder) otherEntry(e *Entry) error {
	var fields []byte
	err := d.members(func(key string, keyStart int) error {
		var err error
		switch key {
		case "type":
			return d.skip(1)
		case "id":
			e.ID, err = d.stringField()
		case "parentId":
			e.ParentID, err = d.stringField()
		case "timestamp":
			e.Timestamp, err = d.timeField()
		default:
			if err := d.skip(1); err != nil {
				return err
			}
			if fields == nil {
				fields = append(make([]byte, 0, 64), '{')
			} else {
				fields = append(fields, ',')
			}
			fields = append(fields, d.data[keyStart:d.pos]...)
			return nil
		}
		return under(key, err)
	})
	if fields == nil {
		fields = []byte("{}")
	} else {
		fields = append(fields, '}')
	}
	e.Fields = fields
	return err
}

// message decodes a message object at d.pos into m.
func (d *decoder) message(m *conv.Message) error {
	return d.members(func(key string, _ int) error {
		var err error
		switch key {
		case "role":
			var r string
			r, err = d.stringField()
			m.Role = conv.Role(r)
		case "content":
			if d.peek() != '[' {
				if d.peek() == 'n' {
					return d.literal("null")
				}
				return under(key, d.wrong("an array"))
			}
			base := len(d.blocks)
			err = d.elements(func(i int) error {
				d.blocks = append(d.blocks, conv.Block{})
				known, err := d.block(&d.blocks[len(d.blocks)-1])
				if !known {
					d.blocks = d.blocks[:len(d.blocks)-1]
				}
				return underIndex(i, err)
			})
			if err == nil {
				m.Content = d.a.takeBlocks(d.blocks[base:])
			}
			d.blocks = d.blocks[:base]
		case "provider":
			m.Provider, err = d.stringField()
		case "model":
			m.Model, err = d.stringField()
		case "stopReason":
			var r string
			r, err = d.stringField()
			m.StopReason = conv.StopReason(r)
		case "serviceTier":
			m.ServiceTier, err = d.stringField()
		case "costUsd":
			var c float64
			var ok bool
			c, ok, err = d.floatField()
			if ok {
				m.CostUSD = &c
			}
		case "usage":
			switch d.peek() {
			case 'n':
				return d.literal("null")
			case '{':
				u := d.a.usage()
				err = d.usage(u)
				m.Usage = u
			default:
				return under(key, d.wrong("an object"))
			}
		default:
			return d.skip(1)
		}
		return under(key, err)
	})
}

func (d *decoder) usage(u *conv.Usage) error {
	return d.members(func(key string, _ int) error {
		var err error
		switch key {
		case "input":
			u.Input, err = d.intField()
		case "output":
			u.Output, err = d.intField()
		case "cacheRead":
			u.CacheRead, err = d.intField()
		case "cacheWrite":
			u.CacheWrite, err = d.intField()
		default:
			return d.skip(1)
		}
		return under(key, err)
	})
}

// block decodes a content block at d.pos into b. known is false for a
// block type this version does not know (the block is validated and
// skipped).
func (d *decoder) block(b *conv.Block) (known bool, err error) {
	if d.peek() != '{' {
		return false, d.wrong("an object")
	}
	typ, err := d.typeOf()
	if err != nil {
		return false, err
	}
	bt := conv.BlockType(typ)
	switch bt {
	case conv.BlockText, conv.BlockThinking, conv.BlockToolUse, conv.BlockToolResult, conv.BlockImage:
	case "":
		if err := d.skip(1); err != nil {
			return false, err
		}
		return false, &fieldError{Path: "type", Msg: "missing"}
	default:
		return false, d.skip(1)
	}
	b.Type = bt
	err = d.members(func(key string, _ int) error {
		var err error
		var dst *string
		switch bt {
		case conv.BlockText:
			if key == "text" {
				dst = &b.Text
			}
		case conv.BlockThinking:
			switch key {
			case "thinking":
				dst = &b.Thinking
			case "signature":
				dst = &b.Signature
			case "redacted":
				dst = &b.Redacted
			case "itemId":
				dst = &b.ItemID
			}
		case conv.BlockToolUse:
			switch key {
			case "id":
				dst = &b.ID
			case "name":
				dst = &b.Name
			case "input":
				dst = &b.Input
			}
		case conv.BlockToolResult:
			switch key {
			case "toolUseId":
				dst = &b.ToolUseID
			case "content":
				dst = &b.Content
			case "isError":
				b.IsError, err = d.boolField()
				return under(key, err)
			case "interrupted":
				b.Interrupted, err = d.boolField()
				return under(key, err)
			case "attachments":
				b.Attachments, err = d.attachments()
				return under(key, err)
			case "hook":
				b.Hook, err = d.hookRecord()
				return under(key, err)
			}
		case conv.BlockImage:
			switch key {
			case "mimeType":
				dst = &b.MimeType
			case "data":
				dst = &b.Data
			}
		}
		if dst == nil {
			return d.skip(1)
		}
		*dst, err = d.stringField()
		return under(key, err)
	})
	return true, err
}

func (d *decoder) attachments() ([]conv.Attachment, error) {
	switch d.peek() {
	case 'n':
		return nil, d.literal("null")
	case '[':
	default:
		return nil, d.wrong("an array")
	}
	var out []conv.Attachment
	err := d.elements(func(i int) error {
		var a conv.Attachment
		if d.peek() != '{' {
			return underIndex(i, d.wrong("an object"))
		}
		err := d.members(func(key string, _ int) error {
			var err error
			switch key {
			case "type":
				a.Type, err = d.stringField()
			case "mimeType":
				a.MimeType, err = d.stringField()
			case "data":
				a.Data, err = d.stringField()
			default:
				return d.skip(1)
			}
			return under(key, err)
		})
		out = append(out, a)
		return underIndex(i, err)
	})
	return out, err
}

// hookRecord decodes a tool result's "hook" object.
func (d *decoder) hookRecord() (*conv.HookRecord, error) {
	switch d.peek() {
	case 'n':
		return nil, d.literal("null")
	case '{':
	default:
		return nil, d.wrong("an object")
	}
	h := &conv.HookRecord{}
	err := d.members(func(key string, _ int) error {
		var err error
		switch key {
		case "decision":
			h.Decision, err = d.stringField()
		case "command":
			h.Hook, err = d.stringField()
		case "reason":
			h.Reason, err = d.stringField()
		case "input":
			h.Input, err = d.stringField()
		default:
			return d.skip(1)
		}
		return under(key, err)
	})
	return h, err
}

// parsed is what one line holds.
type parsed int

const (
	parsedEntry parsed = iota
	parsedHeader
)

// line decodes one line, a header into h or an entry into e.
func (d *decoder) line(h *Header, e *Entry) (parsed, error) {
	if h == nil {
		h = new(Header)
	}
	if e == nil {
		e = new(Entry)
	}
	d.ws()
	if d.peek() != '{' {
		return 0, d.syntax("want an object")
	}
	typ, err := d.typeOf()
	if err != nil {
		return 0, err
	}
	kind := parsedEntry
	switch typ {
	case "":
		err = d.skip(0)
		if err == nil {
			err = &fieldError{Path: "type", Msg: "missing"}
		}
	case TypeSession:
		kind = parsedHeader
		err = d.header(h)
	default:
		err = d.entry(typ, e)
		if err == nil && typ == TypeMessage && e.Message.Role == "" {
			err = &fieldError{Path: "message.role", Msg: "missing"}
		}
	}
	if err != nil {
		return kind, err
	}
	return kind, d.end()
}

// validObject reports whether line is exactly one complete JSON object.
func validObject(line []byte) bool {
	d := decoder{data: line, copyStrings: true}
	d.ws()
	if d.peek() != '{' {
		return false
	}
	return d.skip(0) == nil && d.end() == nil
}

// arena hands out the memory of a file's entries in slabs, so that a
// session of n entries costs a few large allocations rather than many
// small ones, and unescaped strings pack tightly.
type arena struct {
	strs    []byte
	strNext int
	// remain bounds what is left to decode (the rest of the file), so that
	// a slab is never much larger than what can still be needed.
	remain   int
	msgs     []conv.Message
	blocks   []conv.Block
	usages   []conv.Usage
	slabNext int
}

const (
	maxStrChunk = 256 << 10
	maxSlab     = 1024
)

// string returns b as a string that b's later reuse cannot change.
func (a *arena) string(b []byte) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	if a == nil || n > maxStrChunk/4 {
		return string(b)
	}
	if cap(a.strs)-len(a.strs) < n {
		size := max(a.strNext, 4096)
		a.strNext = min(size*2, maxStrChunk)
		if a.remain > 0 && size > a.remain {
			size = a.remain
		}
		size = max(size, n)
		a.strs = make([]byte, 0, size)
	}
	start := len(a.strs)
	a.strs = append(a.strs, b...)
	return unsafe.String(&a.strs[start], n)
}

func (a *arena) slab() int {
	n := max(a.slabNext, 16)
	a.slabNext = min(n*2, maxSlab)
	return n
}

func (a *arena) message() *conv.Message {
	if a == nil {
		return new(conv.Message)
	}
	if len(a.msgs) == cap(a.msgs) {
		a.msgs = make([]conv.Message, 0, a.slab())
	}
	a.msgs = a.msgs[:len(a.msgs)+1]
	return &a.msgs[len(a.msgs)-1]
}

func (a *arena) usage() *conv.Usage {
	if a == nil {
		return new(conv.Usage)
	}
	if len(a.usages) == cap(a.usages) {
		a.usages = make([]conv.Usage, 0, a.slab())
	}
	a.usages = a.usages[:len(a.usages)+1]
	return &a.usages[len(a.usages)-1]
}

// takeBlocks copies bs into a slab and returns the copy (cap == len).
func (a *arena) takeBlocks(bs []conv.Block) []conv.Block {
	n := len(bs)
	if n == 0 {
		return nil
	}
	if a == nil || n > maxSlab/4 {
		return append([]conv.Block(nil), bs...)
	}
	if cap(a.blocks)-len(a.blocks) < n {
		a.blocks = make([]conv.Block, 0, max(a.slab(), n))
	}
	start := len(a.blocks)
	a.blocks = append(a.blocks, bs...)
	return a.blocks[start : start+n : start+n]
}
