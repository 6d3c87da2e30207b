package jsonerr

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestLine(t *testing.T) {
	for _, c := range []struct {
		text string
		line int
		ok   bool
	}{
		{"{\n  \"a\": 1,\n  \"b\": ]\n}", 3, true}, // syntax error
		{"{\n  \"a\": \"x\"\n}", 2, true},          // type error: a is an int
		{"{\"a\": 1", 1, true},                     // cut short: the end of the text
		{"\n\n\n{\"a\": [", 4, true},               // cut short after blank lines
	} {
		var v struct{ A int }
		err := json.Unmarshal([]byte(c.text), &v)
		if err == nil {
			t.Fatalf("%q decoded", c.text)
		}
		line, ok := Line([]byte(c.text), err)
		if line != c.line || ok != c.ok {
			t.Errorf("Line(%q, %v) = %d, %v; want %d, %v", c.text, err, line, ok, c.line, c.ok)
		}
	}
	if _, ok := Line([]byte("{}"), errors.New("not from json")); ok {
		t.Error("an error without an offset has a line")
	}
}
