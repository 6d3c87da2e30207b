package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

// stringArgCases are inputs on which the scan must give encoding/json's
// answer: escapes, repeats, nesting, and JSON that is only nearly valid.
var stringArgCases = []string{
	`{"command":"git status"}`,
	`{"command":"a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\u20ac"}`,
	`{"command":"\ud83d\ude00 surrogates"}`,
	`{"command":"\ud800 lone"}`,
	"{\"command\":\"bad \xff utf8\"}",
	`{"command":"rm x","command":"git status"}`,
	`{"command":"git status","command":"rm x"}`,
	`{"command":"rm x","command":1}`,
	`{"command":"rm x","command":null}`,
	`{"command":null}`,
	`{"comm\u0061nd":"rm x"}`,
	`{"Command":"rm x"}`,
	`{"x":{"command":"rm x"},"command":"ls"}`,
	`{"x":["command","rm x"],"y":[{"command":"a"}]}`,
	` { "command" : "ls" , "timeout" : 1.5e3 } `,
	`{"command":"ls"} x`,
	`{"command":"ls",}`,
	`{"command":"ls" "x":1}`,
	`{"a":01,"command":"ls"}`,
	`{"a":-,"command":"ls"}`,
	`{"a":1.,"command":"ls"}`,
	`{"a":tru,"command":"ls"}`,
	`{"a":"\x","command":"ls"}`,
	"{\"a\":\"\x01\",\"command\":\"ls\"}",
	`{"a":"\u12g4","command":"ls"}`,
	`{"command":"ls"`,
	`{"command":"ls`,
	`["command","ls"]`,
	`"command"`,
	`null`,
	``,
	`{}`,
	`{"a":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `,"command":"ls"}`,
	`{"a":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `,"command":"ls"}`,
}

// TestStringArg: the scan reads the member encoding/json reads.
func TestStringArg(t *testing.T) {
	for _, in := range stringArgCases {
		s, ok := stringArg([]byte(in), "command")
		ws, wok := decodeStringArg([]byte(in), "command")
		if s != ws || ok != wok {
			t.Errorf("%.80q: got %q %v, encoding/json %q %v", in, s, ok, ws, wok)
		}
	}
	// The common input, json.Marshal's (<, > and & escaped), is read
	// without encoding/json.
	in, _ := json.Marshal(map[string]string{"command": command4K()})
	raw, ok := scanMember(in, "command")
	if !ok {
		t.Fatal("the scan leaves a plain input to encoding/json")
	}
	if s, ok := unquote(raw); !ok || s != command4K() {
		t.Fatalf("unquote: %v", ok)
	}
}

// FuzzStringArg: on any input the scan answers as encoding/json does.
func FuzzStringArg(f *testing.F) {
	for _, in := range stringArgCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		s, ok := stringArg(in, "command")
		ws, wok := decodeStringArg(in, "command")
		if s != ws || ok != wok {
			t.Errorf("%q: got %q %v, encoding/json %q %v", in, s, ok, ws, wok)
		}
		if raw, ok := scanMember(in, "command"); ok && !json.Valid(in) {
			t.Errorf("%q: the scan took invalid JSON (member %q)", in, raw)
		}
	})
}
