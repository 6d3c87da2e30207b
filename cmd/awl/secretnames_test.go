package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/awlrun/awl/provider"
)

// TestSecretNamesCoverTheRegistry: every variable that holds a provider
// credential in the registry is among the secrets kept from tools and
// checks, so a provider added there is kept from them without touching
// this list.
func TestSecretNamesCoverTheRegistry(t *testing.T) {
	a := &app{stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }}
	names, err := secretNames(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range provider.Specs() {
		for _, v := range append([]string{s.KeyVar}, s.MoreSecretVars...) {
			if v == "" {
				continue // replay: a recording, no credential
			}
			if !slices.Contains(names, v) {
				t.Errorf("%s (%s) is not kept secret", v, s.Name)
			}
		}
	}
}

// TestRedactEnvSplitsAtAnySpace: a list of names written on Windows, or
// read from a file with CRLF lines (AWL_REDACT_ENV=$(cat names)), keeps
// each name secret: a carriage return, a vertical tab, a form feed or a
// no-break space separates names as a space does. Split at the ASCII
// blanks alone, "SB\r" was kept secret instead of SB, whose value then
// reached the model and the tools, without a word.
func TestRedactEnvSplitsAtAnySpace(t *testing.T) {
	env := map[string]string{"AWL_REDACT_ENV": "SA\r\nSB\r\vSC\fSD\u00a0SE\u2028SF"}
	a := &app{stderr: &bytes.Buffer{}, getenv: func(k string) string { return env[k] }}
	names, err := secretNames(a, []string{"SG\r\nSH\r"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"SA", "SB", "SC", "SD", "SE", "SF", "SG", "SH"} {
		if !slices.Contains(names, n) {
			t.Errorf("%s is not kept secret: %q", n, names[len(names)-8:])
		}
	}
	for _, n := range names {
		if strings.ContainsFunc(n, unicode.IsSpace) {
			t.Errorf("a name with a space in it: %q", n)
		}
	}
}
