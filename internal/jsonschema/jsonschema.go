// Package jsonschema validates JSON values against a JSON Schema: draft
// 2020-12, with the keywords of drafts 4 to 2019-09 that differ (an `items`
// array, `additionalItems`, `dependencies`, `definitions`, draft 4's boolean
// `exclusiveMaximum`, `$ref` beside other keywords ignored before 2019-09).
//
// It exists so that awl pays nothing at start for a validator it may not
// use: a general-purpose library compiles every draft's meta-schema in a
// package initialiser, on every start. Here nothing is prepared until a
// schema is compiled, and the meta-schema is compiled once, on first use.
//
// A schema is one self-contained document: `$ref` resolves JSON pointers,
// `$anchor`s and `$id`s inside it, and anything else is an error, never
// fetched. `format` is an annotation, never asserted, as 2020-12 says by
// default. `$dynamicRef` and `$recursiveRef` resolve like `$ref`.
package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Problem is one way a value fails a schema: where (a JSON pointer into
// the value, "" for the value itself) and what.
type Problem struct {
	Location string
	Message  string
}

// String shows a problem as "/location: what" ("/" for the whole value).
func (p Problem) String() string {
	loc := p.Location
	if loc == "" {
		loc = "/"
	}
	return loc + ": " + p.Message
}

// Unmarshal decodes one JSON value, numbers kept exact (json.Number).
// Anything after the value but white space is an error.
func Unmarshal(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

// Schema is a compiled schema. It is safe for concurrent use.
type Schema struct {
	root *node
}

// node is one schema object (or true/false) with its keywords decoded.
type node struct {
	boolean *bool // a true/false schema
	base    *url.URL
	draft   int // 4, 6, 7, 2019, 2020
	m       map[string]any

	ref       *node
	refTarget string // unresolved $ref, for the error
	// Subschemas by keyword.
	props      map[string]*node
	propNames  []string
	patterns   []*regexp.Regexp
	patternSch []*node
	sub        map[string]*node   // single-schema keywords
	subs       map[string][]*node // array-of-schema keywords
	depSchemas map[string]*node
	depReq     map[string][]string
	pattern    *regexp.Regexp
}

// Compile parses a schema document. The error names what is wrong: a
// document that is not a schema ("/type: value must be one of …"), a `$ref`
// that does not resolve inside it, a pattern that is not a regular
// expression.
func Compile(doc []byte) (*Schema, error) {
	v, err := Unmarshal(doc)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	return CompileValue(v)
}

// ErrInvalid wraps the problems found when a document is not a valid
// schema.
type ErrInvalid struct{ Problems []Problem }

func (e *ErrInvalid) Error() string {
	s := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		s[i] = p.String()
	}
	return "not a valid JSON Schema: " + strings.Join(s, "; ")
}

// CompileValue compiles a schema already decoded by Unmarshal.
func CompileValue(v any) (*Schema, error) {
	switch v.(type) {
	case map[string]any, bool:
	default:
		return nil, errors.New("a schema is a JSON object (or true/false)")
	}
	if ps := metaSchema().Validate(v); len(ps) > 0 {
		return nil, &ErrInvalid{Problems: ps}
	}
	return compile(v)
}

// compile builds the nodes without checking the document against the
// meta-schema (which is how the meta-schema itself is compiled).
func compile(v any) (*Schema, error) {
	base, _ := url.Parse("awl:///schema.json")
	c := &compiler{ids: map[string]*node{}, anchors: map[string]*node{}, raw: map[string]any{}}
	root, err := c.build(v, base, 2020, "")
	if err != nil {
		return nil, err
	}
	c.rootURL = docURL(base)
	c.ids[c.rootURL] = root
	c.raw[c.rootURL] = v
	for _, r := range c.refs {
		if err := c.resolve(r); err != nil {
			return nil, err
		}
	}
	return &Schema{root: root}, nil
}

type compiler struct {
	rootURL string
	ids     map[string]*node // absolute document URL → node
	anchors map[string]*node // URL#anchor → node
	raw     map[string]any   // document URL → its raw value, for pointers
	nodes   map[string]*node // URL#pointer → node built there
	refs    []*node
}

func docURL(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// schemaDraft is the draft a $schema URI names, or def. A switch, not a
// package-level map: a map literal is built by the package initialiser at
// every start of awl, schema or not (docs/performance.md).
func schemaDraft(s string, def int) int {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://")
	s = strings.TrimSuffix(s, "#")
	switch s {
	case "json-schema.org/draft-03/schema", "json-schema.org/draft-04/schema":
		return 4
	case "json-schema.org/draft-06/schema":
		return 6
	case "json-schema.org/draft-07/schema":
		return 7
	case "json-schema.org/draft/2019-09/schema":
		return 2019
	case "json-schema.org/draft/2020-12/schema", "json-schema.org/schema",
		"json-schema.org/draft/next/schema", "json-schema.org/draft/2020-12/schema#":
		return 2020
	}
	return def
}

var single = []string{"additionalProperties", "propertyNames", "items", "additionalItems", "contains",
	"not", "if", "then", "else", "unevaluatedProperties", "unevaluatedItems"}
var multi = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}

// build compiles v, found at ptr from base, into a node with its
// subschemas; $refs are resolved after the whole document is built.
func (c *compiler) build(v any, base *url.URL, draft int, ptr string) (*node, error) {
	n := &node{base: base, draft: draft}
	if c.nodes == nil {
		c.nodes = map[string]*node{}
	}
	switch s := v.(type) {
	case bool:
		n.boolean = &s
		c.nodes[docURL(base)+"#"+ptr] = n
		return n, nil
	case map[string]any:
		n.m = s
	default:
		return nil, fmt.Errorf("%s: a schema is a JSON object or a boolean", ptrOr(ptr))
	}
	ptr, err := c.identify(n, v, ptr)
	if err != nil {
		return nil, err
	}
	for _, step := range []func(*node, string) error{c.buildApplicators, c.buildProperties, c.buildDependencies} {
		if err := step(n, ptr); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// identify reads n's $schema, its $id (a new base, where the pointer
// starts again), its anchors and its reference, and records n under each
// name by which a $ref may reach it. It returns n's pointer from its base.
func (c *compiler) identify(n *node, v any, ptr string) (string, error) {
	base := n.base
	if sv, ok := n.m["$schema"].(string); ok {
		n.draft = schemaDraft(sv, n.draft)
	}
	idKey := "$id"
	if n.draft == 4 {
		idKey = "id"
	}
	if id, ok := n.m[idKey].(string); ok && id != "" {
		u, err := base.Parse(id)
		if err != nil {
			return "", fmt.Errorf("%s/%s: %v", ptr, idKey, err)
		}
		if strings.HasPrefix(id, "#") && n.draft <= 7 {
			// A draft 6/7 "$id": "#name" is an anchor.
			c.anchors[docURL(base)+"#"+u.Fragment] = n
		} else {
			n.base = u
			ptr = ""
			c.ids[docURL(u)] = n
			c.raw[docURL(u)] = v
			if u.Fragment != "" {
				c.anchors[docURL(u)+"#"+u.Fragment] = n
			}
		}
	}
	c.nodes[docURL(n.base)+"#"+ptr] = n
	for _, k := range []string{"$anchor", "$dynamicAnchor"} {
		if a, ok := n.m[k].(string); ok {
			c.anchors[docURL(n.base)+"#"+a] = n
		}
	}
	for _, k := range []string{"$ref", "$dynamicRef", "$recursiveRef"} {
		if r, ok := n.m[k].(string); ok {
			n.refTarget = r
			c.refs = append(c.refs, n)
			break
		}
	}
	return ptr, nil
}

// sub builds a subschema of n at pointer p.
func (c *compiler) sub(n *node, v any, p string) (*node, error) {
	return c.build(v, n.base, n.draft, p)
}

// buildApplicators builds n's subschemas under the keywords that hold one
// schema or an array of them, and under $defs (reached only by $ref).
func (c *compiler) buildApplicators(n *node, ptr string) error {
	for _, k := range single {
		if sv, ok := n.m[k]; ok {
			if _, isArr := sv.([]any); isArr {
				continue
			}
			s, err := c.sub(n, sv, ptr+"/"+k)
			if err != nil {
				return err
			}
			if n.sub == nil {
				n.sub = map[string]*node{}
			}
			n.sub[k] = s
		}
	}
	for _, k := range multi {
		if arr, ok := n.m[k].([]any); ok {
			list := make([]*node, len(arr))
			for i, sv := range arr {
				s, err := c.sub(n, sv, ptr+"/"+k+"/"+strconv.Itoa(i))
				if err != nil {
					return err
				}
				list[i] = s
			}
			if n.subs == nil {
				n.subs = map[string][]*node{}
			}
			n.subs[k] = list
		}
	}
	for _, k := range []string{"$defs", "definitions"} {
		if defs, ok := n.m[k].(map[string]any); ok {
			for name, sv := range defs {
				if _, err := c.sub(n, sv, ptr+"/"+k+"/"+escape(name)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// buildProperties builds n's properties and patternProperties, and its
// pattern.
func (c *compiler) buildProperties(n *node, ptr string) error {
	if props, ok := n.m["properties"].(map[string]any); ok {
		n.props = map[string]*node{}
		for name, sv := range props {
			s, err := c.sub(n, sv, ptr+"/properties/"+escape(name))
			if err != nil {
				return err
			}
			n.props[name] = s
			n.propNames = append(n.propNames, name)
		}
		sort.Strings(n.propNames)
	}
	if pp, ok := n.m["patternProperties"].(map[string]any); ok {
		keys := make([]string, 0, len(pp))
		for k := range pp {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, pat := range keys {
			re, err := regexp.Compile(pat)
			if err != nil {
				return fmt.Errorf("%s/patternProperties: %q is not a regular expression: %v", ptr, pat, err)
			}
			s, err := c.sub(n, pp[pat], ptr+"/patternProperties/"+escape(pat))
			if err != nil {
				return err
			}
			n.patterns = append(n.patterns, re)
			n.patternSch = append(n.patternSch, s)
		}
	}
	if p, ok := n.m["pattern"].(string); ok {
		re, err := regexp.Compile(p)
		if err != nil {
			return fmt.Errorf("%s/pattern: %q is not a regular expression: %v", ptr, p, err)
		}
		n.pattern = re
	}
	return nil
}

// buildDependencies builds dependencies, dependentSchemas and
// dependentRequired: a name's array of names is required with it, a
// schema applies with it.
func (c *compiler) buildDependencies(n *node, ptr string) error {
	deps := map[string]any{}
	if d, ok := n.m["dependencies"].(map[string]any); ok {
		for k, v := range d {
			deps[k] = v
		}
	}
	if d, ok := n.m["dependentSchemas"].(map[string]any); ok {
		for k, v := range d {
			deps[k] = v
		}
	}
	if d, ok := n.m["dependentRequired"].(map[string]any); ok {
		for k, v := range d {
			deps[k] = v
		}
	}
	for k, dv := range deps {
		if arr, ok := dv.([]any); ok {
			if n.depReq == nil {
				n.depReq = map[string][]string{}
			}
			for _, s := range arr {
				if str, ok := s.(string); ok {
					n.depReq[k] = append(n.depReq[k], str)
				}
			}
			continue
		}
		s, err := c.sub(n, dv, ptr+"/dependentSchemas/"+escape(k))
		if err != nil {
			return err
		}
		if n.depSchemas == nil {
			n.depSchemas = map[string]*node{}
		}
		n.depSchemas[k] = s
	}
	return nil
}

func ptrOr(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// escape and unescape are RFC 6901's encoding of a reference token:
// escaping replaces "~" first, unescaping "~1" first. Plain functions, not
// package-level strings.Replacers, which the initialiser would build at
// every start.
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func unescape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

func (c *compiler) resolve(n *node) error {
	u, err := n.base.Parse(n.refTarget)
	if err != nil {
		return fmt.Errorf("$ref %q: %v", n.refTarget, err)
	}
	doc := docURL(u)
	if _, ok := c.ids[doc]; !ok {
		return fmt.Errorf("external $ref %q: a schema must be self-contained", n.refTarget)
	}
	frag := u.Fragment
	if frag == "" {
		n.ref = c.ids[doc]
		return nil
	}
	if !strings.HasPrefix(frag, "/") {
		if t, ok := c.anchors[doc+"#"+frag]; ok {
			n.ref = t
			return nil
		}
		return fmt.Errorf("$ref %q: no anchor %q in the schema", n.refTarget, frag)
	}
	if t, ok := c.nodes[doc+"#"+frag]; ok {
		n.ref = t
		return nil
	}
	// A pointer to a place that is not a known subschema position (say,
	// inside an unknown keyword): walk the raw document and build it.
	var cur any = c.raw[doc]
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = unescape(tok)
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[tok]
			if !ok {
				return fmt.Errorf("$ref %q: nothing at that pointer", n.refTarget)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return fmt.Errorf("$ref %q: nothing at that pointer", n.refTarget)
			}
			cur = x[i]
		default:
			return fmt.Errorf("$ref %q: nothing at that pointer", n.refTarget)
		}
	}
	base, _ := url.Parse(doc)
	before := len(c.refs)
	t, err := c.build(cur, base, n.draft, frag)
	if err != nil {
		return err
	}
	for _, r := range c.refs[before:] {
		if err := c.resolve(r); err != nil {
			return err
		}
	}
	c.refs = c.refs[:before]
	n.ref = t
	return nil
}

// Validate returns the problems of v against the schema, nil when it is
// valid. v is a value from Unmarshal (json.Number numbers) or plain Go
// values as encoding/json decodes them (float64 numbers).
func (s *Schema) Validate(v any) []Problem {
	var st state
	_, ps := st.validate(s.root, v, "", 0)
	return ps
}

// Valid reports whether v is valid, cheaper than Validate when the
// problems are not needed.
func (s *Schema) Valid(v any) bool { return len(s.Validate(v)) == 0 }

type state struct{}

// evaluated is what a successful validation of a value covered, for
// unevaluatedProperties and unevaluatedItems.
type evaluated struct {
	props    map[string]bool
	allProps bool
	items    int  // items [0, items) evaluated
	allItems bool // every item
	itemSet  map[int]bool
}

func (e *evaluated) merge(o *evaluated) {
	if o == nil {
		return
	}
	if o.allProps {
		e.allProps = true
	}
	for k := range o.props {
		if e.props == nil {
			e.props = map[string]bool{}
		}
		e.props[k] = true
	}
	if o.allItems {
		e.allItems = true
	}
	if o.items > e.items {
		e.items = o.items
	}
	for k := range o.itemSet {
		if e.itemSet == nil {
			e.itemSet = map[int]bool{}
		}
		e.itemSet[k] = true
	}
}

const maxDepth = 200

// validate checks v, found at loc, against n: what it evaluated when it is
// valid, its problems when it is not. depth counts the schemas entered.
func (st *state) validate(n *node, v any, loc string, depth int) (*evaluated, []Problem) {
	if n.boolean != nil {
		if *n.boolean {
			// A boolean schema has no keywords, so it evaluates nothing
			// for unevaluatedProperties/Items.
			return &evaluated{}, nil
		}
		return nil, []Problem{{loc, "not allowed (the schema is false)"}}
	}
	if depth > maxDepth {
		return nil, []Problem{{loc, "the schema's references nest too deep"}}
	}
	ev := &evaluated{}
	var ps []Problem
	add := addTo(&ps, loc)
	if n.ref != nil {
		rev, rps := st.validate(n.ref, v, loc, depth+1)
		ps = append(ps, rps...)
		if len(rps) == 0 {
			ev.merge(rev)
		}
		if n.draft <= 7 {
			return ev, ps
		}
	}
	checkValue(n.m, v, add)
	switch x := v.(type) {
	case string:
		st.checkString(n, x, add)
	case json.Number, float64, int, int64:
		st.checkNumber(n, v, add)
	case map[string]any:
		ps = append(ps, st.checkObject(n, x, loc, depth, ev)...)
	case []any:
		ps = append(ps, st.checkArray(n, x, loc, depth, ev)...)
	}
	st.checkApplicators(n, v, loc, depth, ev, &ps)
	st.checkConditional(n, v, loc, depth, ev, &ps)
	st.checkUnevaluated(n, v, loc, depth, ev, &ps)
	if len(ps) > 0 {
		return nil, ps
	}
	return ev, nil
}

// addTo returns a function that adds a problem at loc to *ps.
func addTo(ps *[]Problem, loc string) func(string, ...any) {
	return func(msg string, args ...any) { *ps = append(*ps, Problem{loc, fmt.Sprintf(msg, args...)}) }
}

// checkValue checks the keywords about the value itself: type, enum and
// const.
func checkValue(m map[string]any, v any, add func(string, ...any)) {
	if t, ok := m["type"]; ok {
		if !typeMatches(t, v) {
			add("got %s, want %s", typeName(v), wantTypes(t))
		}
	}
	if e, ok := m["enum"].([]any); ok {
		found := false
		for _, x := range e {
			if equal(x, v) {
				found = true
				break
			}
		}
		if !found {
			add("value must be one of %s", joinValues(e))
		}
	}
	if c, ok := m["const"]; ok && !equal(c, v) {
		add("value must be %s", show(c))
	}
}

// checkApplicators checks allOf, anyOf, oneOf and not, adding to *ps, and
// merges into ev what the subschemas that matched evaluated.
func (st *state) checkApplicators(n *node, v any, loc string, depth int, ev *evaluated, ps *[]Problem) {
	add := addTo(ps, loc)
	if list, ok := n.subs["allOf"]; ok {
		for _, s := range list {
			sev, sps := st.validate(s, v, loc, depth+1)
			*ps = append(*ps, sps...)
			if len(sps) == 0 {
				ev.merge(sev)
			}
		}
	}
	if list, ok := n.subs["anyOf"]; ok {
		var all []Problem
		okAny := false
		for _, s := range list {
			sev, sps := st.validate(s, v, loc, depth+1)
			if len(sps) == 0 {
				okAny = true
				ev.merge(sev)
			} else {
				all = append(all, sps...)
			}
		}
		if !okAny {
			add("does not match any schema of anyOf")
			*ps = append(*ps, all...)
		}
	}
	if list, ok := n.subs["oneOf"]; ok {
		var all []Problem
		var valid []int
		var vev *evaluated
		for i, s := range list {
			sev, sps := st.validate(s, v, loc, depth+1)
			if len(sps) == 0 {
				valid = append(valid, i)
				vev = sev
			} else {
				all = append(all, sps...)
			}
		}
		switch len(valid) {
		case 0:
			add("does not match any schema of oneOf")
			*ps = append(*ps, all...)
		case 1:
			ev.merge(vev)
		default:
			add("matches schemas %d and %d of oneOf; it must match exactly one", valid[0], valid[1])
		}
	}
	if s, ok := n.sub["not"]; ok {
		if _, sps := st.validate(s, v, loc, depth+1); len(sps) == 0 {
			add("must not match the schema of not")
		}
	}
}

// checkConditional checks if, then and else.
func (st *state) checkConditional(n *node, v any, loc string, depth int, ev *evaluated, ps *[]Problem) {
	if s, ok := n.sub["if"]; ok {
		iev, ips := st.validate(s, v, loc, depth+1)
		if len(ips) == 0 {
			ev.merge(iev)
			if t, ok := n.sub["then"]; ok {
				tev, tps := st.validate(t, v, loc, depth+1)
				*ps = append(*ps, tps...)
				if len(tps) == 0 {
					ev.merge(tev)
				}
			}
		} else if e, ok := n.sub["else"]; ok {
			eev, eps := st.validate(e, v, loc, depth+1)
			*ps = append(*ps, eps...)
			if len(eps) == 0 {
				ev.merge(eev)
			}
		}
	}
}

// checkUnevaluated checks what depends on what the other keywords
// evaluated: dependentSchemas (which evaluate more), then
// unevaluatedProperties and unevaluatedItems.
func (st *state) checkUnevaluated(n *node, v any, loc string, depth int, ev *evaluated, ps *[]Problem) {
	add := addTo(ps, loc)
	if obj, ok := v.(map[string]any); ok {
		for name, s := range n.depSchemas {
			if _, has := obj[name]; has {
				dev, dps := st.validate(s, v, loc, depth+1)
				*ps = append(*ps, dps...)
				if len(dps) == 0 {
					ev.merge(dev)
				}
			}
		}
		if s, ok := n.sub["unevaluatedProperties"]; ok && !ev.allProps {
			var extra []string
			for _, k := range sortedKeys(obj) {
				if ev.props[k] {
					continue
				}
				if _, sps := st.validate(s, obj[k], loc+"/"+escape(k), depth+1); len(sps) > 0 {
					if s.boolean != nil {
						extra = append(extra, k)
					} else {
						*ps = append(*ps, sps...)
					}
				}
			}
			if len(extra) > 0 {
				add("unevaluated properties %s not allowed", quoteList(extra))
			}
			ev.allProps = true
		}
	}
	if arr, ok := v.([]any); ok {
		if s, ok := n.sub["unevaluatedItems"]; ok && !ev.allItems {
			for i := ev.items; i < len(arr); i++ {
				if ev.itemSet[i] {
					continue
				}
				_, sps := st.validate(s, arr[i], loc+"/"+strconv.Itoa(i), depth+1)
				*ps = append(*ps, sps...)
			}
			ev.allItems = true
		}
	}
}

func (st *state) checkString(n *node, s string, add func(string, ...any)) {
	m := n.m
	l := utf8.RuneCountInString(s)
	if x, ok := intKeyword(m, "minLength"); ok && l < x {
		add("length must be >= %d, but got %d", x, l)
	}
	if x, ok := intKeyword(m, "maxLength"); ok && l > x {
		add("length must be <= %d, but got %d", x, l)
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		add("%s does not match pattern %s", show(s), show(n.pattern.String()))
	}
}

func (st *state) checkNumber(n *node, v any, add func(string, ...any)) {
	m := n.m
	x, ok := rat(v)
	if !ok {
		return
	}
	cmp := func(k string) (*big.Rat, bool) {
		r, ok := rat(m[k])
		return r, ok
	}
	exMin, exMax := false, false
	if b, ok := m["exclusiveMinimum"].(bool); ok {
		exMin = b
	}
	if b, ok := m["exclusiveMaximum"].(bool); ok {
		exMax = b
	}
	if r, ok := cmp("minimum"); ok {
		if exMin && x.Cmp(r) <= 0 {
			add("must be > %s but found %s", r.RatString(), x.RatString())
		} else if x.Cmp(r) < 0 {
			add("must be >= %s but found %s", show(m["minimum"]), show(v))
		}
	}
	if r, ok := cmp("maximum"); ok {
		if exMax && x.Cmp(r) >= 0 {
			add("must be < %s but found %s", show(m["maximum"]), show(v))
		} else if x.Cmp(r) > 0 {
			add("must be <= %s but found %s", show(m["maximum"]), show(v))
		}
	}
	if r, ok := cmp("exclusiveMinimum"); ok && x.Cmp(r) <= 0 {
		add("must be > %s but found %s", show(m["exclusiveMinimum"]), show(v))
	}
	if r, ok := cmp("exclusiveMaximum"); ok && x.Cmp(r) >= 0 {
		add("must be < %s but found %s", show(m["exclusiveMaximum"]), show(v))
	}
	if r, ok := cmp("multipleOf"); ok && r.Sign() > 0 {
		q := new(big.Rat).Quo(x, r)
		if !q.IsInt() {
			add("%s is not a multiple of %s", show(v), show(m["multipleOf"]))
		}
	}
}

func (st *state) checkObject(n *node, obj map[string]any, loc string, depth int, ev *evaluated) []Problem {
	m := n.m
	var ps []Problem
	add := func(msg string, args ...any) { ps = append(ps, Problem{loc, fmt.Sprintf(msg, args...)}) }
	if req, ok := m["required"].([]any); ok {
		var missing []string
		for _, r := range req {
			if s, ok := r.(string); ok {
				if _, has := obj[s]; !has {
					missing = append(missing, s)
				}
			}
		}
		switch len(missing) {
		case 0:
		case 1:
			add("missing property %s", quoteList(missing))
		default:
			add("missing properties %s", quoteList(missing))
		}
	}
	if x, ok := intKeyword(m, "minProperties"); ok && len(obj) < x {
		add("must have at least %d properties, found %d", x, len(obj))
	}
	if x, ok := intKeyword(m, "maxProperties"); ok && len(obj) > x {
		add("must have at most %d properties, found %d", x, len(obj))
	}
	for name, deps := range n.depReq {
		if _, has := obj[name]; !has {
			continue
		}
		var missing []string
		for _, d := range deps {
			if _, has := obj[d]; !has {
				missing = append(missing, d)
			}
		}
		if len(missing) > 0 {
			add("property %s needs %s", show(name), quoteList(missing))
		}
	}
	keys := sortedKeys(obj)
	if s, ok := n.sub["propertyNames"]; ok {
		for _, k := range keys {
			if _, sps := st.validate(s, k, loc+"/"+escape(k), depth+1); len(sps) > 0 {
				add("property name %s is not valid: %s", show(k), sps[0].Message)
			}
		}
	}
	matched := map[string]bool{}
	for _, k := range keys {
		if s, ok := n.props[k]; ok {
			matched[k] = true
			_, sps := st.validate(s, obj[k], loc+"/"+escape(k), depth+1)
			ps = append(ps, sps...)
		}
		for i, re := range n.patterns {
			if re.MatchString(k) {
				matched[k] = true
				_, sps := st.validate(n.patternSch[i], obj[k], loc+"/"+escape(k), depth+1)
				ps = append(ps, sps...)
			}
		}
	}
	for k := range matched {
		if ev.props == nil {
			ev.props = map[string]bool{}
		}
		ev.props[k] = true
	}
	if s, ok := n.sub["additionalProperties"]; ok {
		var extra []string
		for _, k := range keys {
			if matched[k] {
				continue
			}
			if _, sps := st.validate(s, obj[k], loc+"/"+escape(k), depth+1); len(sps) > 0 {
				if s.boolean != nil {
					extra = append(extra, k)
				} else {
					ps = append(ps, sps...)
				}
			}
		}
		if len(extra) > 0 {
			add("additional properties %s not allowed", quoteList(extra))
		}
		ev.allProps = true
	}
	return ps
}

func (st *state) checkArray(n *node, arr []any, loc string, depth int, ev *evaluated) []Problem {
	m := n.m
	var ps []Problem
	add := func(msg string, args ...any) { ps = append(ps, Problem{loc, fmt.Sprintf(msg, args...)}) }
	if x, ok := intKeyword(m, "minItems"); ok && len(arr) < x {
		add("must have at least %d items, found %d", x, len(arr))
	}
	if x, ok := intKeyword(m, "maxItems"); ok && len(arr) > x {
		add("must have at most %d items, found %d", x, len(arr))
	}
	if u, ok := m["uniqueItems"].(bool); ok && u {
	outer:
		for i := range arr {
			for j := i + 1; j < len(arr); j++ {
				if equal(arr[i], arr[j]) {
					add("items at %d and %d are equal", i, j)
					break outer
				}
			}
		}
	}
	item := func(s *node, i int) {
		_, sps := st.validate(s, arr[i], loc+"/"+strconv.Itoa(i), depth+1)
		ps = append(ps, sps...)
	}
	prefix := n.subs["prefixItems"]
	if tuple, ok := n.subs["items"]; ok { // items as an array: drafts before 2020-12
		prefix = tuple
		for i := 0; i < len(arr) && i < len(prefix); i++ {
			item(prefix[i], i)
		}
		if s, ok := n.sub["additionalItems"]; ok {
			for i := len(prefix); i < len(arr); i++ {
				if s.boolean != nil && !*s.boolean {
					add("must have at most %d items, found %d", len(prefix), len(arr))
					break
				}
				item(s, i)
			}
			ev.allItems = true
		}
	} else {
		for i := 0; i < len(arr) && i < len(prefix); i++ {
			item(prefix[i], i)
		}
		if s, ok := n.sub["items"]; ok {
			for i := len(prefix); i < len(arr); i++ {
				if s.boolean != nil && !*s.boolean {
					add("must have at most %d items, found %d", len(prefix), len(arr))
					break
				}
				item(s, i)
			}
			ev.allItems = true
		}
	}
	if len(prefix) > ev.items {
		ev.items = min(len(prefix), len(arr))
	}
	if s, ok := n.sub["contains"]; ok {
		count := 0
		for i := range arr {
			if _, sps := st.validate(s, arr[i], loc+"/"+strconv.Itoa(i), depth+1); len(sps) == 0 {
				count++
				if ev.itemSet == nil {
					ev.itemSet = map[int]bool{}
				}
				ev.itemSet[i] = true
			}
		}
		lo := 1
		if x, ok := intKeyword(m, "minContains"); ok && n.draft >= 2019 {
			lo = x
		}
		if count < lo {
			if lo == 1 {
				add("no item matches the schema of contains")
			} else {
				add("%d items match the schema of contains, fewer than %d", count, lo)
			}
		}
		if x, ok := intKeyword(m, "maxContains"); ok && n.draft >= 2019 && count > x {
			add("%d items match the schema of contains, more than %d", count, x)
		}
	}
	return ps
}

func intKeyword(m map[string]any, k string) (int, bool) {
	r, ok := rat(m[k])
	if !ok || !r.IsInt() {
		return 0, false
	}
	if !r.Num().IsInt64() {
		return 0, false
	}
	return int(r.Num().Int64()), true
}

func rat(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		return r, ok
	case float64:
		r := new(big.Rat)
		if r.SetFloat64(x) == nil {
			return nil, false
		}
		return r, true
	case int:
		return new(big.Rat).SetInt64(int64(x)), true
	case int64:
		return new(big.Rat).SetInt64(x), true
	}
	return nil, false
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case json.Number, float64, int, int64:
		if r, ok := rat(v); ok && r.IsInt() {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

func typeIs(want string, v any) bool {
	got := typeName(v)
	return want == got || (want == "number" && got == "integer")
}

func typeMatches(t any, v any) bool {
	switch x := t.(type) {
	case string:
		return typeIs(x, v)
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok && typeIs(s, v) {
				return true
			}
		}
		return false
	}
	return true
}

func wantTypes(t any) string {
	switch x := t.(type) {
	case string:
		return x
	case []any:
		s := make([]string, 0, len(x))
		for _, e := range x {
			s = append(s, fmt.Sprint(e))
		}
		return strings.Join(s, " or ")
	}
	return fmt.Sprint(t)
}

// equal is JSON equality: numbers by value (1 equals 1.0), objects by
// members, arrays by items in order.
func equal(a, b any) bool {
	if ra, ok := rat(a); ok {
		rb, ok := rat(b)
		return ok && ra.Cmp(rb) == 0
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const max = 80
	if len(b) > max {
		s := string(b[:max])
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		return s + "…"
	}
	return string(b)
}

func joinValues(vs []any) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = show(v)
	}
	return strings.Join(s, ", ")
}

func quoteList(names []string) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = show(n)
	}
	return strings.Join(s, ", ")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
