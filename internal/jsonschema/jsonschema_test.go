package jsonschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
)

// reference validates with an independent, widely used implementation: the
// verdicts must agree.
func reference(t testing.TB, schema, instance string) (bool, error) {
	t.Helper()
	doc, err := santhosh.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		return false, err
	}
	c := santhosh.NewCompiler()
	c.DefaultDraft(santhosh.Draft2020)
	if err := c.AddResource("awl:///schema.json", doc); err != nil {
		return false, err
	}
	sch, err := c.Compile("awl:///schema.json")
	if err != nil {
		return false, err
	}
	v, err := santhosh.UnmarshalJSON(strings.NewReader(instance))
	if err != nil {
		return false, err
	}
	return sch.Validate(v) == nil, nil
}

func mine(t testing.TB, schema, instance string) (bool, []Problem, error) {
	t.Helper()
	s, err := Compile([]byte(schema))
	if err != nil {
		return false, nil, err
	}
	v, err := Unmarshal([]byte(instance))
	if err != nil {
		return false, nil, err
	}
	ps := s.Validate(v)
	return len(ps) == 0, ps, nil
}

// cases pairs schemas with instances, each keyword's edges included.
var cases = []struct{ schema, valid, invalid string }{
	{`{"type":"string"}`, `"a"`, `1`},
	{`{"type":"integer"}`, `1.0`, `1.5`},
	{`{"type":["integer","null"]}`, `null`, `"x"`},
	{`{"type":"number"}`, `3`, `"3"`},
	{`{"enum":["a",1,null,{"x":[1]}]}`, `{"x":[1.0]}`, `{"x":[2]}`},
	{`{"const":{"a":1}}`, `{"a":1}`, `{"a":1,"b":2}`},
	{`{"minimum":5}`, `5`, `4.999`},
	{`{"exclusiveMinimum":5}`, `5.0001`, `5`},
	{`{"maximum":1e2}`, `100`, `100.5`},
	{`{"exclusiveMaximum":0}`, `-1`, `0`},
	{`{"multipleOf":0.01}`, `19.99`, `19.995`},
	{`{"multipleOf":3}`, `9`, `10`},
	{`{"minLength":2,"maxLength":3}`, `"éé"`, `"ééėé"`},
	{`{"pattern":"^a+$"}`, `"aaa"`, `"ab"`},
	{`{"pattern":"b"}`, `"abc"`, `"ac"`},
	{`{"required":["a","b"]}`, `{"a":1,"b":null}`, `{"a":1}`},
	{`{"properties":{"a":{"type":"string"}},"additionalProperties":false}`, `{"a":"x"}`, `{"a":"x","b":1}`},
	{`{"patternProperties":{"^x-":{"type":"integer"}},"additionalProperties":{"type":"string"}}`, `{"x-a":1,"b":"s"}`, `{"x-a":"1"}`},
	{`{"propertyNames":{"maxLength":2}}`, `{"ab":1}`, `{"abc":1}`},
	{`{"minProperties":1,"maxProperties":2}`, `{"a":1}`, `{}`},
	{`{"dependentRequired":{"a":["b"]}}`, `{"b":1}`, `{"a":1}`},
	{`{"dependentSchemas":{"a":{"required":["c"]}}}`, `{"a":1,"c":2}`, `{"a":1}`},
	{`{"items":{"type":"integer"},"minItems":1,"maxItems":3}`, `[1,2]`, `[1,"2"]`},
	{`{"prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}`, `["a",1]`, `["a",1,2]`},
	{`{"uniqueItems":true}`, `[1,"1",[1]]`, `[1,1.0]`},
	{`{"contains":{"const":2}}`, `[1,2]`, `[1,3]`},
	{`{"contains":{"const":2},"minContains":2,"maxContains":3}`, `[2,2]`, `[2,1]`},
	{`{"allOf":[{"minimum":1},{"maximum":3}]}`, `2`, `4`},
	{`{"anyOf":[{"type":"string"},{"minimum":10}]}`, `11`, `5`},
	{`{"oneOf":[{"type":"integer"},{"minimum":2}]}`, `1`, `3`},
	{`{"not":{"type":"null"}}`, `0`, `null`},
	{`{"if":{"properties":{"k":{"const":"a"}}},"then":{"required":["a"]},"else":{"required":["b"]}}`, `{"k":"b","b":1}`, `{"k":"a","b":1}`},
	{`{"$defs":{"p":{"type":"integer","minimum":0}},"properties":{"n":{"$ref":"#/$defs/p"}}}`, `{"n":3}`, `{"n":-1}`},
	{`{"$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"},"v":{"type":"integer"}}}},"$ref":"#/$defs/node"}`, `{"v":1,"next":{"v":2}}`, `{"v":1,"next":{"v":"2"}}`},
	{`{"$defs":{"a":{"$anchor":"pos","minimum":0}},"items":{"$ref":"#pos"}}`, `[0,1]`, `[-1]`},
	{`{"properties":{"a":{"type":"integer"}},"unevaluatedProperties":false}`, `{"a":1}`, `{"a":1,"b":2}`},
	{`{"allOf":[{"properties":{"a":true}}],"unevaluatedProperties":false}`, `{"a":1}`, `{"a":1,"b":2}`},
	{`{"anyOf":[{"properties":{"a":true},"required":["a"]},{"properties":{"b":true},"required":["b"]}],"unevaluatedProperties":false}`, `{"a":1,"b":2}`, `{"a":1,"c":2}`},
	{`{"if":{"required":["a"]},"then":{"properties":{"b":true}},"properties":{"a":true},"unevaluatedProperties":false}`, `{"a":1,"b":2}`, `{"b":2}`},
	{`{"prefixItems":[true],"unevaluatedItems":false}`, `[1]`, `[1,2]`},
	{`{"allOf":[{"prefixItems":[true,true]}],"unevaluatedItems":{"type":"string"}}`, `[1,2,"x"]`, `[1,2,3]`},
	{`{"contains":{"type":"string"},"unevaluatedItems":{"type":"integer"}}`, `["a",1]`, `["a",true]`},
	{`{"$ref":"#/$defs/s","$defs":{"s":{"type":"string"}},"minLength":2}`, `"ab"`, `"a"`},
	{`{"$id":"https://example.com/root.json","$defs":{"x":{"$id":"item.json","type":"integer"}},"items":{"$ref":"item.json"}}`, `[1]`, `["1"]`},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":false}`, `["a"]`, `["a","b"]`},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/s"}}}`, `{"a":"x"}`, `{"a":1}`},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","dependencies":{"a":["b"],"c":{"required":["d"]}}}`, `{"a":1,"b":1}`, `{"c":1}`},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$ref":"#/definitions/s","type":"integer"}},"definitions":{"s":{"type":"string"}}}`, `{"a":"x"}`, `{"a":1}`},
	{`true`, `{"any":1}`, ``},
	{`false`, ``, `1`},
	{`{"type":"object","properties":{"verdict":{"enum":["approve","reject"]},"reasons":{"type":"array","items":{"type":"string","minLength":1},"uniqueItems":true}},"required":["verdict","reasons"],"additionalProperties":false}`, `{"verdict":"approve","reasons":["a","b"]}`, `{"verdict":"approve","reasons":["a","a"]}`},
}

func TestAgreesWithReference(t *testing.T) {
	for _, c := range cases {
		for _, in := range []struct {
			text string
			want bool
		}{{c.valid, true}, {c.invalid, false}} {
			if in.text == "" {
				continue
			}
			ref, err := reference(t, c.schema, in.text)
			if err != nil {
				t.Fatalf("reference on %s: %v", c.schema, err)
			}
			if ref != in.want {
				t.Fatalf("bad case: reference says %v for %s against %s", ref, in.text, c.schema)
			}
			got, ps, err := mine(t, c.schema, in.text)
			if err != nil {
				t.Fatalf("%s: %v", c.schema, err)
			}
			if got != in.want {
				t.Errorf("%s against %s: valid=%v, want %v (%v)", in.text, c.schema, got, in.want, ps)
			}
			if !got && len(ps) == 0 {
				t.Errorf("%s against %s: invalid without a problem", in.text, c.schema)
			}
		}
	}
}

func TestProblems(t *testing.T) {
	for _, c := range []struct{ schema, instance, want string }{
		{`{"properties":{"ok":{"type":"boolean"}}}`, `{"ok":"yes"}`, `/ok: got string, want boolean`},
		{`{"properties":{"verdict":{"enum":["approve","reject"]}}}`, `{"verdict":"maybe"}`, `/verdict: value must be one of "approve", "reject"`},
		{`{"required":["a","b"]}`, `{}`, `/: missing properties "a", "b"`},
		{`{"additionalProperties":false}`, `{"x/y":1}`, `/: additional properties "x/y" not allowed`},
		{`{"items":{"minimum":2}}`, `[3,1]`, `/1: must be >= 2 but found 1`},
		{`{"properties":{"a~b":{"type":"null"}}}`, `{"a~b":0}`, `/a~0b: got integer, want null`},
		{`{"minLength":3}`, `"ab"`, `/: length must be >= 3, but got 2`},
	} {
		_, ps, err := mine(t, c.schema, c.instance)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range ps {
			got = append(got, p.String())
		}
		if !strings.Contains(strings.Join(got, "\n"), c.want) {
			t.Errorf("%s against %s: problems %q, want %q", c.instance, c.schema, got, c.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, c := range []struct{ schema, want string }{
		{`{"type": "objekt"}`, `/type: value must be one of`},
		{`{"properties": {"a": {"minimum": "3"}}}`, `/properties/a/minimum: got string, want number`},
		{`{"required": "a"}`, `/required: got string, want array`},
		{`{"minLength": -1}`, `/minLength: must be >= 0`},
		{`{"pattern": "("}`, `not a regular expression`},
		{`{"$ref": "other.json"}`, `external $ref "other.json": a schema must be self-contained`},
		{`{"$ref": "#/$defs/missing"}`, `nothing at that pointer`},
		{`{"$ref": "#nope"}`, `no anchor "nope"`},
		{`[1]`, `a schema is a JSON object (or true/false)`},
		{`{"a":1} {"b":2}`, `more than one JSON value`},
	} {
		_, err := Compile([]byte(c.schema))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Compile(%s) = %v, want an error containing %q", c.schema, err, c.want)
		}
	}
}

// A schema that refers to itself through $ref without consuming the value
// must end, with a problem, not overflow the stack.
func TestSelfReferenceEnds(t *testing.T) {
	s, err := Compile([]byte(`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`))
	if err != nil {
		t.Fatal(err)
	}
	if ps := s.Validate(1.0); len(ps) == 0 {
		t.Fatal("a reference loop validated")
	}
}

// TestRandomAgainstReference generates schemas and values and compares the
// verdicts with the reference implementation: 2×300 schemas with 4 values
// each (a quarter of that with -short). It counts what it compared, so
// that a generator the reference mostly refuses, or whose values all pass
// (or all fail), cannot pass by comparing little.
func TestRandomAgainstReference(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 75
	}
	for seed := 1; seed <= 2; seed++ {
		valid, invalid := randomAgainstReference(t, seed, n)
		if total := valid + invalid; total < n*4*3/4 || valid < total/10 || invalid < total/10 {
			t.Errorf("seed %d: compared %d of %d cases (%d valid, %d invalid); want three quarters, and a tenth of each verdict", seed, total, n*4, valid, invalid)
		}
	}
}

// randomAgainstReference compares n random schemas, 4 values each, and
// returns how many comparisons found the value valid and invalid.
func randomAgainstReference(t *testing.T, seed, n int) (valid, invalid int) {
	r := rand.New(rand.NewPCG(uint64(seed), 2))
	for i := 0; i < n; i++ {
		sch := genSchema(r, 3)
		schema, _ := json.Marshal(sch)
		for j := 0; j < 4; j++ {
			inst, _ := json.Marshal(genValue(r, 3))
			ref, err := reference(t, string(schema), string(inst))
			if err != nil {
				continue // the reference refuses the schema: not a comparison
			}
			got, ps, err := mine(t, string(schema), string(inst))
			if err != nil {
				t.Fatalf("Compile(%s): %v (the reference accepts it)", schema, err)
			}
			if got != ref {
				t.Fatalf("%s against %s: valid=%v, reference %v (%v)", inst, schema, got, ref, ps)
			}
			if got {
				valid++
			} else {
				invalid++
			}
		}
	}
	return valid, invalid
}

func FuzzValidate(f *testing.F) {
	for _, c := range cases {
		f.Add(c.schema, c.valid)
		f.Add(c.schema, c.invalid)
	}
	f.Fuzz(func(t *testing.T, schema, instance string) {
		s, err := Compile([]byte(schema))
		if err != nil {
			return
		}
		v, err := Unmarshal([]byte(instance))
		if err != nil {
			return
		}
		got := s.Valid(v)
		if ref, err := reference(t, schema, instance); err == nil && ref != got && !bytes.Contains([]byte(schema), []byte("format")) {
			t.Fatalf("%s against %s: valid=%v, reference %v", instance, schema, got, ref)
		}
	})
}

var names = []string{"a", "b", "c"}

func genValue(r *rand.Rand, depth int) any {
	k := r.IntN(8)
	if depth == 0 {
		k = r.IntN(5)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return float64(r.IntN(7) - 2)
	case 3:
		return []float64{0.5, 2.25, -1.5}[r.IntN(3)]
	case 4:
		return strings.Repeat(names[r.IntN(3)], r.IntN(4))
	case 5, 6:
		m := map[string]any{}
		for i := r.IntN(4); i > 0; i-- {
			m[names[r.IntN(3)]] = genValue(r, depth-1)
		}
		return m
	default:
		a := []any{}
		for i := r.IntN(4); i > 0; i-- {
			a = append(a, genValue(r, depth-1))
		}
		return a
	}
}

var types = []string{"null", "boolean", "integer", "number", "string", "object", "array"}

func genSchema(r *rand.Rand, depth int) any {
	if r.IntN(10) == 0 {
		return r.IntN(2) == 0
	}
	s := map[string]any{}
	sub := func() any {
		if depth == 0 {
			return map[string]any{"type": types[r.IntN(len(types))]}
		}
		return genSchema(r, depth-1)
	}
	for i := 1 + r.IntN(3); i > 0; i-- {
		switch r.IntN(26) {
		case 0:
			s["type"] = types[r.IntN(len(types))]
		case 1:
			s["type"] = []any{types[r.IntN(3)], types[3+r.IntN(4)]}
		case 2:
			s["enum"] = []any{genValue(r, 1), genValue(r, 1)}
		case 3:
			s["const"] = genValue(r, 1)
		case 4:
			s["minimum"] = float64(r.IntN(4) - 1)
		case 5:
			s["exclusiveMaximum"] = float64(r.IntN(4))
		case 6:
			s["multipleOf"] = []float64{0.5, 2, 0.25}[r.IntN(3)]
		case 7:
			s["minLength"] = float64(r.IntN(3))
		case 8:
			s["pattern"] = []string{"^a", "b+", "^$"}[r.IntN(3)]
		case 9:
			s["required"] = []any{names[r.IntN(3)]}
		case 10:
			s["properties"] = map[string]any{names[r.IntN(3)]: sub()}
		case 11:
			s["additionalProperties"] = sub()
		case 12:
			s["patternProperties"] = map[string]any{"^[ab]": sub()}
		case 13:
			s["items"] = sub()
		case 14:
			s["prefixItems"] = []any{sub()}
		case 15:
			s["uniqueItems"] = true
		case 16:
			s["contains"] = sub()
		case 17:
			s["allOf"] = []any{sub(), sub()}
		case 18:
			s["anyOf"] = []any{sub(), sub()}
		case 19:
			s["oneOf"] = []any{sub(), sub()}
		case 20:
			s["not"] = sub()
		case 21:
			s["if"], s["then"], s["else"] = sub(), sub(), sub()
		case 22:
			s["unevaluatedProperties"] = sub()
		case 23:
			s["unevaluatedItems"] = sub()
		case 24:
			s["dependentRequired"] = map[string]any{names[r.IntN(3)]: []any{names[r.IntN(3)]}}
		case 25:
			s["maxItems"] = float64(r.IntN(3))
			s["minProperties"] = float64(r.IntN(2))
		}
	}
	return s
}

func ExampleSchema_Validate() {
	s, _ := Compile([]byte(`{"type":"object","required":["name"]}`))
	v, _ := Unmarshal([]byte(`{}`))
	fmt.Println(s.Validate(v))
	// Output: [/: missing property "name"]
}

// The draft a $schema names: every URI awl knows, with either scheme and
// with or without the trailing "#", and an unknown one keeping the default.
func TestSchemaDraft(t *testing.T) {
	known := map[string]int{
		"json-schema.org/draft-03/schema":      4,
		"json-schema.org/draft-04/schema":      4,
		"json-schema.org/draft-06/schema":      6,
		"json-schema.org/draft-07/schema":      7,
		"json-schema.org/draft/2019-09/schema": 2019,
		"json-schema.org/draft/2020-12/schema": 2020,
		"json-schema.org/schema":               2020,
		"json-schema.org/draft/next/schema":    2020,
	}
	for uri, want := range known {
		for _, s := range []string{"http://" + uri, "https://" + uri + "#", uri} {
			if got := schemaDraft(s, -1); got != want {
				t.Errorf("schemaDraft(%q) = %d, want %d", s, got, want)
			}
		}
	}
	if got := schemaDraft("https://json-schema.org/draft/2020-12/schema##", -1); got != 2020 {
		t.Errorf("two #s: %d, want 2020", got)
	}
	for _, s := range []string{"https://example.com/schema", "json-schema.org/draft-05/schema", ""} {
		if got := schemaDraft(s, -1); got != -1 {
			t.Errorf("schemaDraft(%q) = %d, want the default", s, got)
		}
	}
}

// RFC 6901's reference tokens: escaping turns "~" into "~0" before "/" into
// "~1", unescaping undoes "~1" first (so "~01" is "~1", not "/"), the same
// as the strings.Replacers these functions replaced.
func TestPointerTokens(t *testing.T) {
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	unesc := strings.NewReplacer("~1", "/", "~0", "~")
	for _, s := range []string{"", "a", "a/b", "a~b", "~1", "~0", "/~", "~/", "~~//", "~01", "a~1b~0c", "~~1", "é/~"} {
		if got, want := escape(s), esc.Replace(s); got != want {
			t.Errorf("escape(%q) = %q, want %q", s, got, want)
		}
		if got, want := unescape(s), unesc.Replace(s); got != want {
			t.Errorf("unescape(%q) = %q, want %q", s, got, want)
		}
		if got := unescape(escape(s)); got != s {
			t.Errorf("unescape(escape(%q)) = %q", s, got)
		}
	}
	if got := unescape("~01"); got != "~1" {
		t.Errorf(`unescape("~01") = %q, want "~1"`, got)
	}
}
