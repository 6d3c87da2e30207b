package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/awlrun/awl/internal/jsonstr"
)

// kind is the JSON type of a tool argument.
type kind string

const (
	kindString  kind = "string"
	kindInteger kind = "integer"
	kindBoolean kind = "boolean"
)

// param describes one argument of a tool: it yields the schema the model sees
// and the checks its input gets.
type param struct {
	name     string
	kind     kind
	required bool
	desc     string
}

// params is a tool's argument list, in the order the schema lists them.
type params []param

// schema returns the JSON Schema of the input object, in the bytes
// json.Marshal gives the same value (keys sorted, HTML characters escaped),
// written directly: every run builds every tool's schema, and a map of maps
// through reflection cost 40 KB of each start.
func (ps params) schema() json.RawMessage {
	// Sorted by insertion: a tool has a handful of parameters, and
	// slices.SortFunc on a []param would link a pdqsort compiled for this
	// struct shape alone (34 KB of binary).
	sorted := slices.Clone(ps)
	for i := 1; i < len(sorted); i++ {
		for j := i; j > 0 && sorted[j].name < sorted[j-1].name; j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	b := make([]byte, 0, 128+96*len(ps))
	b = append(b, `{"additionalProperties":false,"properties":{`...)
	for i, p := range sorted {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, p.name)
		b = append(b, `:{"description":`...)
		b = appendJSONString(b, p.desc)
		b = append(b, `,"type":`...)
		b = appendJSONString(b, string(p.kind))
		b = append(b, '}')
	}
	b = append(b, `},"required":[`...)
	n := 0
	for _, p := range ps {
		if p.required {
			if n > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, p.name)
			n++
		}
	}
	return append(b, `],"type":"object"}`...)
}

// appendJSONString appends s as json.Marshal writes a string: as
// jsonstr.Append does, but with <, > and & escaped, which no built-in
// tool's schema holds (encoding/json is left the strings that do).
func appendJSONString(b []byte, s string) []byte {
	if !strings.ContainsAny(s, "<>&") {
		return jsonstr.Append(b, s)
	}
	q, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tool schema: %v", err)) // a string always encodes
	}
	return append(b, q...)
}

// decode checks input against ps and, when it fits, stores it in dst, a
// pointer to a struct whose json tags name the params. An empty input counts
// as {}; null for an optional argument counts as absent. The error says what
// is wrong in words meant for the model.
func (ps params) decode(input json.RawMessage, dst any) error {
	input = bytes.TrimSpace(input)
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(input, &obj); err != nil || obj == nil {
		return fmt.Errorf("the arguments must be a JSON object, got %s", describeJSON(input))
	}
	known := make(map[string]bool, len(ps))
	for _, p := range ps {
		known[p.name] = true
	}
	for name := range obj {
		if !known[name] {
			return fmt.Errorf("unknown argument %q (this tool takes %s)", name, ps.names())
		}
	}
	clean := make(map[string]json.RawMessage, len(obj))
	for _, p := range ps {
		v, ok := obj[p.name]
		if ok && string(bytes.TrimSpace(v)) == "null" {
			ok = false
		}
		if !ok {
			if p.required {
				return fmt.Errorf("missing required argument %q", p.name)
			}
			continue
		}
		c, err := p.check(v)
		if err != nil {
			return err
		}
		clean[p.name] = c
	}
	b, err := json.Marshal(clean)
	if err != nil {
		return fmt.Errorf("re-encode arguments: %w", err)
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("decode arguments: %w", err)
	}
	return nil
}

// check validates one argument value and returns it in canonical form
// (integers written without a fraction or exponent).
func (p param) check(v json.RawMessage) (json.RawMessage, error) {
	v = bytes.TrimSpace(v)
	wrong := func() error {
		return fmt.Errorf("argument %q must be %s %s, got %s", p.name, article(p.kind), p.kind, describeJSON(v))
	}
	switch p.kind {
	case kindString:
		var s string
		if json.Unmarshal(v, &s) != nil {
			return nil, wrong()
		}
	case kindBoolean:
		var b bool
		if json.Unmarshal(v, &b) != nil {
			return nil, wrong()
		}
	case kindInteger:
		// json.Number would also take a string holding a number.
		var n json.Number
		if v[0] == '"' || json.Unmarshal(v, &n) != nil {
			return nil, wrong()
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil || f != math.Trunc(f) {
			return nil, wrong()
		}
		if f > math.MaxInt32 || f < math.MinInt32 {
			return nil, fmt.Errorf("argument %q is out of range: %s", p.name, n)
		}
		return json.RawMessage(strconv.FormatInt(int64(f), 10)), nil
	}
	return v, nil
}

// names lists the argument names for an error message.
func (ps params) names() string {
	if len(ps) == 0 {
		return "no arguments"
	}
	ns := make([]string, len(ps))
	for i, p := range ps {
		ns[i] = p.name
	}
	return strings.Join(ns, ", ")
}

func article(k kind) string {
	if k == kindInteger {
		return "an"
	}
	return "a"
}

// describeJSON names the JSON type of v, with a short excerpt, for errors.
func describeJSON(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	var what string
	switch {
	case len(v) == 0:
		return "nothing"
	case !json.Valid(v):
		what = "invalid JSON"
	case v[0] == '"':
		what = "a string"
	case v[0] == '{':
		what = "an object"
	case v[0] == '[':
		what = "an array"
	case v[0] == 't' || v[0] == 'f':
		what = "a boolean"
	case v[0] == 'n':
		return "null"
	case v[0] == '-' || (v[0] >= '0' && v[0] <= '9'):
		what = "a number"
	}
	const max = 40
	ex := strings.Join(strings.Fields(string(v)), " ")
	if len(ex) > max {
		ex = strings.ToValidUTF8(ex[:max], "") + "…"
	}
	return what + " " + ex
}
