package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Role is which file a File is.
type Role uint8

const (
	// User is $XDG_CONFIG_HOME/awl/config.toml.
	User Role = iota
	// Project is a .awl/config.toml found from the run's directory.
	Project
	// Named is the file --config or AWL_CONFIG names.
	Named
)

// The keys a file holds beside the schema's.
const (
	profileKey = "profile"
	serversKey = "mcp-servers"
	trustKey   = "trust-project"
)

// entry is a value in a file, with its place.
type entry struct {
	v         Value
	line, col int
}

// table is a file's keys at the top level or in one profile.
type table map[string]entry

// File is one configuration file, parsed and checked against the schema.
type File struct {
	Path string
	Role Role
	// SHA256 is the hex sha256 of the bytes read.
	SHA256 string
	top    table
	// profiles are the [profile.NAME] tables, by name.
	profiles map[string]table
	// Servers are the [mcp-servers.NAME] tables, in name order.
	Servers []Server
	// serversAt is the line of the mcp-servers key, 0 for none.
	serversAt int
	// trust is the user file's trust-project, nil when not set.
	trust *entry
}

// Server is one [mcp-servers.NAME] table: its fields as .mcp.json spells
// them, checked to name its credentials rather than hold them.
type Server struct {
	Name   string
	File   string
	Line   int
	Fields map[string]any
}

// Profiles are the names of the file's profiles, sorted.
func (f *File) Profiles() []string {
	names := make([]string, 0, len(f.profiles))
	for n := range f.profiles {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Parse reads a file's bytes as TOML and checks every key against schema:
// a syntax error, an unknown key (with the nearest known one), a value of
// the wrong type, an empty value, or a credential written into an MCP
// server's headers or env is an *Error (exit 2) whose lines say
// "path:line:col: reason". base is the directory relative paths are taken
// from.
func Parse(path string, data []byte, role Role, base string, schema Schema) (*File, error) {
	sum := sha256.Sum256(data)
	f := &File{Path: path, Role: role, SHA256: hex.EncodeToString(sum[:]), top: table{}, profiles: map[string]table{}}
	// A byte order mark, which some Windows editors write, is no part of
	// the TOML: the decoder would call it a key's first character.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	doc, pos, ok := quick(data)
	if !ok {
		if err := toml.Unmarshal(data, &doc); err != nil {
			var de *toml.DecodeError
			if errors.As(err, &de) {
				row, col := de.Position()
				return nil, &Error{Code: 2, Lines: []string{errorf(path, row, col, "%s", strings.TrimPrefix(de.Error(), "toml: "))}}
			}
			return nil, &Error{Code: 2, Lines: []string{errorf(path, 0, 0, "%s", strings.TrimPrefix(err.Error(), "toml: "))}}
		}
		pos = positions(data)
	}
	p := &parser{path: path, base: base, schema: schema, pos: pos}
	for _, k := range sortedKeys(doc) {
		v := doc[k]
		switch k {
		case profileKey:
			p.profiles(f, v)
		case serversKey:
			f.serversAt, _ = p.at(k)
			f.Servers = p.servers(v)
		case trustKey:
			line, col := p.at(k)
			if b, ok := v.(bool); ok {
				f.trust = &entry{v: b, line: line, col: col}
			} else {
				p.fail([]string{k}, "%s must be true or false", k)
			}
		default:
			p.key(f.top, []string{k}, v)
		}
	}
	if len(p.errs) > 0 {
		return nil, &Error{Code: 2, Lines: p.sorted()}
	}
	return f, nil
}

// parser holds what Parse needs while it walks a document.
type parser struct {
	path   string
	base   string
	schema Schema
	pos    map[string]position
	errs   []posError
}

type position struct{ line, col int }

type posError struct {
	at   position
	text string
}

// at is the line and column of the key at path (joined by "\x00"), or of
// the nearest enclosing key the walk found.
func (p *parser) at(path ...string) (int, int) {
	for n := len(path); n > 0; n-- {
		if q, ok := p.pos[strings.Join(path[:n], "\x00")]; ok {
			return q.line, q.col
		}
	}
	return 0, 0
}

// fail records the error of the key at path.
func (p *parser) fail(path []string, format string, args ...any) {
	line, col := p.at(path...)
	p.errs = append(p.errs, posError{position{line, col}, errorf(p.path, line, col, format, args...)})
}

// sorted is the errors in the file's order.
func (p *parser) sorted() []string {
	slices.SortStableFunc(p.errs, func(a, b posError) int {
		if a.at.line != b.at.line {
			return a.at.line - b.at.line
		}
		return a.at.col - b.at.col
	})
	out := make([]string, 0, min(len(p.errs), maxErrors+1))
	for _, e := range p.errs[:min(len(p.errs), maxErrors)] {
		out = append(out, e.text)
	}
	if n := len(p.errs) - maxErrors; n > 0 {
		out = append(out, fmt.Sprintf("%s: and %d more problems", p.path, n))
	}
	return out
}

// maxErrors is how many of a file's problems are said, in the file's
// order: a generated file with ten thousand bad keys is not ten thousand
// lines of a CI log.
const maxErrors = 20

// profiles reads the [profile.NAME] tables.
func (p *parser) profiles(f *File, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		p.fail([]string{profileKey}, "profile must be tables, as [profile.NAME]")
		return
	}
	for _, name := range sortedKeys(m) {
		pm, ok := m[name].(map[string]any)
		if !ok {
			p.fail([]string{profileKey, name}, "profile.%s must be a table, as [profile.%s]", name, name)
			continue
		}
		if strings.TrimSpace(name) == "" {
			// --profile "" is refused as an empty value: such a profile
			// could never be used.
			p.fail([]string{profileKey, name}, "a profile's name is empty")
			continue
		}
		t := table{}
		for _, k := range sortedKeys(pm) {
			if k == profileKey || k == serversKey || k == trustKey {
				p.fail([]string{profileKey, name, k}, "%s cannot be set in a profile (only at the top level)", k)
				continue
			}
			p.key(t, []string{profileKey, name, k}, pm[k])
		}
		f.profiles[name] = t
	}
}

// key checks the value of the schema key at path and adds it to t.
func (p *parser) key(t table, path []string, v any) {
	name := path[len(path)-1]
	k := p.schema.Lookup(name)
	if k == nil {
		p.fail(path, "unknown key %s%s", name, p.suggest(name))
		return
	}
	val, reason := checkValue(k, v)
	if reason != "" {
		p.fail(path, "%s: %s", name, reason)
		return
	}
	if k.Path {
		val = p.resolvePath(val)
	}
	line, col := p.at(path...)
	t[name] = entry{v: val, line: line, col: col}
}

// resolvePath takes a relative path of v from the file's base directory.
func (p *parser) resolvePath(v Value) Value {
	abs := func(s string) string {
		if s == "-" || s == "none" || filepath.IsAbs(s) || p.base == "" {
			return s
		}
		return filepath.Join(p.base, s)
	}
	switch v := v.(type) {
	case string:
		return abs(v)
	case []string:
		out := make([]string, len(v))
		for i, s := range v {
			out[i] = abs(s)
		}
		return out
	}
	return v
}

// suggest is ", did you mean NAME?" for the known key nearest to name, or
// "" when none is near.
func (p *parser) suggest(name string) string {
	cands := []string{profileKey, serversKey, trustKey}
	for _, k := range p.schema {
		cands = append(cands, k.Name)
	}
	return nearest(strings.ReplaceAll(name, "_", "-"), cands)
}

// nearest is " (did you mean NAME?)" for the name of cands nearest to
// name, or "" when none is near.
func nearest(name string, cands []string) string {
	best, bestD := "", 1<<30
	norm := strings.ToLower(name)
	for _, c := range cands {
		if d := distance(norm, c); d < bestD {
			best, bestD = c, d
		}
	}
	// Two edits make any key of two letters another ("x" is not a typo
	// of "cd"): a suggestion must keep more of the name than it changes.
	if bestD > max(2, len(name)/3) || bestD >= len(name) {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// distance is the Levenshtein distance of a and b, in bytes.
func distance(a, b string) int {
	if len(a) > 256 || len(b) > 256 {
		return 1 << 20
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// checkValue converts v, as the TOML decoder gave it, to k's type, or says
// what is wrong with it.
func checkValue(k *Key, v any) (Value, string) {
	want := "must be " + typeNames[k.Type]
	switch k.Type {
	case String:
		s, ok := v.(string)
		if !ok {
			return nil, want
		}
		return checkString(k, s)
	case Bool:
		b, ok := v.(bool)
		if !ok {
			return nil, want
		}
		return b, ""
	case Int:
		n, ok := v.(int64)
		if !ok {
			return nil, want
		}
		if n < 0 && (k.Class == Min || k.Class == Limit) {
			return nil, "must not be negative"
		}
		return n, ""
	case Float:
		var x float64
		switch n := v.(type) {
		case float64:
			x = n
		case int64:
			x = float64(n)
		default:
			return nil, want
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, "must be a finite number"
		}
		if x < 0 && (k.Class == Min || k.Class == Limit) {
			return nil, "must not be negative"
		}
		return x, ""
	case Duration:
		s, ok := v.(string)
		if !ok {
			return nil, want
		}
		return parseDuration(s)
	}
	return checkList(k, v)
}

// checkString checks a string value: not empty, one of the enum's.
func checkString(k *Key, s string) (Value, string) {
	if strings.TrimSpace(s) == "" {
		return nil, "the value is empty"
	}
	if k.Class == Sandbox && !slices.Contains(sandboxModes, s) {
		// As the sandbox says it.
		return nil, fmt.Sprintf("unknown sandbox mode %q (off, read-only, workspace-write)", s)
	}
	if enum := k.Enum; enum != nil && !slices.Contains(enum, s) {
		return nil, fmt.Sprintf("%q is not one of %s", s, strings.Join(enum, ", "))
	}
	return s, ""
}

// parseDuration reads a duration that must not be negative.
func parseDuration(s string) (Value, string) {
	if strings.TrimSpace(s) == "" {
		return nil, "the value is empty"
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return nil, fmt.Sprintf("%q is not a duration (such as \"10m\" or \"90s\")", s)
	}
	if d < 0 {
		return nil, "must not be negative"
	}
	return d, ""
}

// checkList checks a list value: an array of strings, none empty, not
// empty itself.
func checkList(k *Key, v any) (Value, string) {
	arr, ok := v.([]any)
	if !ok {
		return nil, "must be an array of strings, such as [\"a\", \"b\"]"
	}
	if len(arr) == 0 {
		return nil, "the list is empty" + emptyListHint(k)
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Sprintf("item %d must be a string", i+1)
		}
		if k.Split != nil {
			rules := k.Split(s)
			if len(rules) == 0 {
				return nil, fmt.Sprintf("item %d is empty", i+1)
			}
			out = append(out, rules...)
			continue
		}
		if strings.TrimSpace(strings.ReplaceAll(s, k.Sep, "")) == "" || k.Sep == "" && strings.TrimSpace(s) == "" {
			return nil, fmt.Sprintf("item %d is empty", i+1)
		}
		out = append(out, s)
	}
	return out, ""
}

// emptyListHint says what to write instead of an empty list, where awl
// has a key for it.
func emptyListHint(k *Key) string {
	if k.Name == "tools" {
		return " (no-tools = true offers none)"
	}
	return " (leave the key out)"
}

// sortedKeys is m's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// positions maps every key of a document, by its path joined with "\x00",
// to where it is first written: table headers, dotted keys and the keys of
// inline tables. The document has been decoded already, so it parses.
func positions(data []byte) map[string]position {
	out := map[string]position{}
	var p unstable.Parser
	p.Reset(data)
	lines := newLineStarts(data)
	var prefix []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			prefix = recordKey(lines, out, nil, e.Key())
		case unstable.KeyValue:
			recordKeyValue(lines, out, prefix, e)
		}
	}
	return out
}

// lineStarts are the offsets at which data's lines start. The parser's
// own Shape counts the lines from the start of the file for each key, so a
// file of ten thousand keys took seconds; this finds a key's line by a
// binary search.
type lineStarts []int

func newLineStarts(data []byte) lineStarts {
	starts := make(lineStarts, 1, bytes.Count(data, []byte("\n"))+1)
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// at is the line and column (in bytes, both from 1, as the parser's Shape
// says them) of offset.
func (l lineStarts) at(offset int) position {
	i, _ := slices.BinarySearch(l, offset+1)
	return position{i, offset - l[i-1] + 1}
}

// recordKeyValue records the key of a key/value node under prefix, and the
// keys of an inline table it holds.
func recordKeyValue(p lineStarts, out map[string]position, prefix []string, e *unstable.Node) {
	path := recordKey(p, out, prefix, e.Key())
	v := e.Value()
	if v.Kind != unstable.InlineTable {
		return
	}
	it := v.Children()
	for it.Next() {
		if n := it.Node(); n.Kind == unstable.KeyValue {
			recordKeyValue(p, out, path, n)
		}
	}
}

// recordKey records each part of a dotted key under prefix, and returns
// the whole path.
func recordKey(p lineStarts, out map[string]position, prefix []string, it unstable.Iterator) []string {
	path := slices.Clone(prefix)
	for it.Next() {
		n := it.Node()
		path = append(path, string(n.Data))
		k := strings.Join(path, "\x00")
		if _, ok := out[k]; !ok {
			out[k] = p.at(int(n.Raw.Offset))
		}
	}
	return path
}
