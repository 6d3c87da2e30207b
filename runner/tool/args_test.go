package tool

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

var testParams = params{
	{name: "s", kind: kindString, required: true, desc: "a string"},
	{name: "n", kind: kindInteger, desc: "an integer"},
	{name: "b", kind: kindBoolean, desc: "a boolean"},
}

type testArgs struct {
	S string `json:"s"`
	N *int   `json:"n"`
	B bool   `json:"b"`
}

func TestDecode(t *testing.T) {
	cases := []struct {
		input   string
		wantErr string // empty: must decode
		want    testArgs
	}{
		{input: `{"s":"x"}`, want: testArgs{S: "x"}},
		{input: ` {"s":"x","n":3,"b":true} `, want: testArgs{S: "x", N: ptr(3), B: true}},
		{input: `{"s":"x","n":30.0}`, want: testArgs{S: "x", N: ptr(30)}},
		{input: `{"s":"x","n":3e1}`, want: testArgs{S: "x", N: ptr(30)}},
		{input: `{"s":"x","n":-2}`, want: testArgs{S: "x", N: ptr(-2)}},
		{input: `{"s":"x","n":null,"b":null}`, want: testArgs{S: "x"}},
		{input: `{"s":""}`, want: testArgs{}},
		{input: ``, wantErr: `missing required argument "s"`},
		{input: `{}`, wantErr: `missing required argument "s"`},
		{input: `{"s":null}`, wantErr: `missing required argument "s"`},
		{input: `{"s":1}`, wantErr: `argument "s" must be a string, got a number 1`},
		{input: `{"s":["a"]}`, wantErr: `argument "s" must be a string, got an array ["a"]`},
		{input: `{"s":{"a":1}}`, wantErr: `argument "s" must be a string, got an object`},
		{input: `{"s":"x","n":"3"}`, wantErr: `argument "n" must be an integer, got a string "3"`},
		{input: `{"s":"x","n":2.5}`, wantErr: `argument "n" must be an integer, got a number 2.5`},
		{input: `{"s":"x","n":1e300}`, wantErr: `argument "n" is out of range`},
		{input: `{"s":"x","b":"true"}`, wantErr: `argument "b" must be a boolean, got a string "true"`},
		{input: `{"s":"x","b":1}`, wantErr: `argument "b" must be a boolean, got a number 1`},
		{input: `{"s":"x","z":1}`, wantErr: `unknown argument "z" (this tool takes s, n, b)`},
		{input: `{"s":"x"`, wantErr: `must be a JSON object, got invalid JSON {"s":"x"`},
		{input: `true`, wantErr: `must be a JSON object, got a boolean true`},
		{input: `null`, wantErr: `must be a JSON object, got null`},
		{input: `"` + strings.Repeat("a", 100) + `"`, wantErr: `got a string "aaaa`},
	}
	for _, c := range cases {
		var got testArgs
		err := testParams.decode(json.RawMessage(c.input), &got)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("decode(%s) error = %v, want one containing %q", c.input, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("decode(%s): %v", c.input, err)
			continue
		}
		if got.S != c.want.S || got.B != c.want.B || (got.N == nil) != (c.want.N == nil) || (got.N != nil && *got.N != *c.want.N) {
			t.Errorf("decode(%s) = %+v, want %+v", c.input, got, c.want)
		}
	}
}

func TestDescribeJSONCutsLongExcerpts(t *testing.T) {
	got := describeJSON(json.RawMessage(`"` + strings.Repeat("é", 50) + `"`))
	if !strings.HasSuffix(got, "…") || len(got) > 60 || !strings.HasPrefix(got, "a string") {
		t.Errorf("describeJSON = %q, want a short excerpt ending in …", got)
	}
	if !utf8.ValidString(got) || strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("describeJSON = %q: cut a character in two", got)
	}
}

func ptr(n int) *int { return &n }

// FuzzDecodeArgs feeds arbitrary input to every tool's argument decoder: it
// must never panic, and what it accepts must have every required argument.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `{"command":"ls","timeout":5}`, `{"path":"a","offset":1,"limit":2}`,
		`{"path":"a","old_string":"x","new_string":"y","replace_all":true}`,
		`{"pattern":"**/*.go","path":"."}`, `{"timeout":1e400}`, `{"offset":-0.0}`, `{"path":"\ud800"}`,
	} {
		f.Add(s)
	}
	all := []params{bashParams, readParams, writeParams, editParams, lsParams, globParams, grepParams, viewImageParams}
	f.Fuzz(func(t *testing.T, input string) {
		for _, ps := range all {
			var got map[string]any
			if err := ps.decode(json.RawMessage(input), &got); err != nil {
				if err.Error() == "" {
					t.Fatal("empty error message")
				}
				continue
			}
			for _, p := range ps {
				if p.required {
					if _, ok := got[p.name]; !ok {
						t.Fatalf("decode(%q) accepted input without %q", input, p.name)
					}
				}
			}
		}
	})
}

// TestSchemaBytesAreMarshals: each tool's schema is, byte for byte, what
// json.Marshal makes of it as a map, for every built-in tool and for names
// and descriptions json.Marshal escapes.
func TestSchemaBytesAreMarshals(t *testing.T) {
	marshal := func(ps params) string {
		props := map[string]any{}
		required := []string{}
		for _, p := range ps {
			props[p.name] = map[string]string{"type": string(p.kind), "description": p.desc}
			if p.required {
				required = append(required, p.name)
			}
		}
		b, err := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	cases := []params{
		{},
		{{name: "z", kind: kindString, required: true, desc: "last <b> & \"quoted\" \u2028 \x01"}, {name: "a", kind: kindInteger, desc: "first"}, {name: "m", kind: kindBoolean, required: true}},
		{{name: "amp", kind: kindString, desc: "a & b"}, {name: "gt", kind: kindString, desc: "a > b"}},
		{{name: "q\"", kind: kindString, desc: "no html: \"quoted\" \\ \u2028 \u2029 \x01 \t bad \xff utf-8 é"}},
	}
	for _, tl := range Builtins(Env{}) {
		if b, ok := tl.(interface{ paramList() params }); ok {
			cases = append(cases, b.paramList())
		}
	}
	if len(cases) < 5 {
		t.Fatalf("only %d cases: the built-in tools' params were not found", len(cases))
	}
	for _, ps := range cases {
		if got, want := string(ps.schema()), marshal(ps); got != want {
			t.Errorf("schema:\n got %s\nwant %s", got, want)
		}
	}
}

func (b *builtin[A]) paramList() params { return b.params }

// BenchmarkBuiltins is building the built-in tools, schemas included, as
// every run does.
func BenchmarkBuiltins(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Builtins(Env{})
	}
}

// TestBuiltinsMakeSchemasWhenAsked: building the tools makes no schema (a
// run builds them twice and asks one set); the first Schema call makes it,
// and later calls return the same. (The request goldens check what the
// schemas say.)
func TestBuiltinsMakeSchemasWhenAsked(t *testing.T) {
	env := Env{Dir: t.TempDir()}
	n := len(Builtins(env))
	bare := testing.AllocsPerRun(20, func() { Builtins(env) })
	asked := testing.AllocsPerRun(20, func() {
		for _, b := range Builtins(env) {
			b.Schema()
		}
	})
	t.Logf("Builtins: %.0f allocations; with every Schema asked: %.0f", bare, asked)
	// Asking costs each tool its clone, plus its schema when it is made then.
	if asked-bare <= float64(2*n) {
		t.Errorf("Builtins took %.0f allocations, with every Schema asked %.0f: the schemas are made when the tools are built", bare, asked)
	}
	for _, b := range Builtins(env) {
		first, again := b.Schema(), b.Schema()
		if !json.Valid(first) || string(first) != string(again) {
			t.Errorf("%s: Schema() = %s, then %s", b.Name(), first, again)
		}
	}
}
