package config

import (
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// quick reads a document of the shape nearly every configuration file
// has in one pass of go-toml's parser, without its decoder: keys of one
// part at the top level and in [profile.NAME] tables, holding strings,
// booleans, decimal integers, plain decimal floats and arrays of these. It
// records each key's position as positions does. Anything else (another
// table, a dotted key, an inline table, a date, an integer in another base
// or with "_", inf or nan, a nested array, a key or table given twice, a
// syntax error) is false, and toml.Unmarshal, the decoder of record, reads
// the document. FuzzQuickIsUnmarshal holds the two to the same document
// and positions. The decoder's reflection is the cold half of a file's
// parse at a run's start (docs/performance.md).
func quick(data []byte) (map[string]any, map[string]position, bool) {
	lines := newLineStarts(data)
	// A key a line at most: the maps of a usual file are made once, not
	// grown. Only up to quickKeys: a 1 MiB file of blank lines or comments
	// is a million lines, and maps sized for them took 168 MB.
	n := min(len(lines), quickKeys)
	doc, pos := make(map[string]any, n), make(map[string]position, n)
	cur := doc
	var prefix []string
	var p unstable.Parser
	p.Reset(data)
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			path := recordKey(lines, pos, nil, e.Key())
			if len(path) != 2 || path[0] != profileKey {
				return nil, nil, false
			}
			profiles, ok := doc[profileKey].(map[string]any)
			if _, set := doc[profileKey]; set && !ok {
				return nil, nil, false
			}
			if !ok {
				profiles = map[string]any{}
				doc[profileKey] = profiles
			}
			if _, dup := profiles[path[1]]; dup {
				return nil, nil, false
			}
			cur, prefix = map[string]any{}, path
			profiles[path[1]] = cur
		case unstable.KeyValue:
			it := e.Key()
			it.Next()
			name := it.Node()
			if it.Next() {
				return nil, nil, false
			}
			k := string(name.Data)
			if _, dup := cur[k]; dup {
				return nil, nil, false
			}
			v, ok := quickValue(e.Value(), true)
			if !ok {
				return nil, nil, false
			}
			cur[k] = v
			at := k
			if prefix != nil {
				at = prefix[0] + "\x00" + prefix[1] + "\x00" + k
			}
			pos[at] = lines.at(int(name.Raw.Offset))
		default:
			return nil, nil, false
		}
	}
	if p.Error() != nil {
		return nil, nil, false
	}
	return doc, pos, true
}

// quickKeys is as many keys as quick makes room for at the start: more
// than a usual file holds.
const quickKeys = 64

// quickValue is n's value as toml.Unmarshal gives it in a map[string]any,
// for the kinds quick reads; an array only at the top (outer).
func quickValue(n *unstable.Node, outer bool) (any, bool) {
	switch n.Kind {
	case unstable.String:
		return string(n.Data), true
	case unstable.Bool:
		return n.Data[0] == 't', true
	case unstable.Integer:
		if !onlyBytes(n.Data, "0123456789+-") {
			return nil, false
		}
		i, err := strconv.ParseInt(string(n.Data), 10, 64)
		return i, err == nil
	case unstable.Float:
		if !onlyBytes(n.Data, "0123456789+-.eE") {
			return nil, false
		}
		f, err := strconv.ParseFloat(string(n.Data), 64)
		return f, err == nil
	case unstable.Array:
		if !outer {
			return nil, false
		}
		out := []any{}
		it := n.Children()
		for it.Next() {
			c := it.Node()
			if c.Kind == unstable.Comment {
				continue
			}
			v, ok := quickValue(c, false)
			if !ok {
				return nil, false
			}
			out = append(out, v)
		}
		return out, true
	}
	return nil, false
}

// onlyBytes tells whether b holds only bytes of set.
func onlyBytes(b []byte, set string) bool {
	for _, c := range b {
		if strings.IndexByte(set, c) < 0 {
			return false
		}
	}
	return true
}
