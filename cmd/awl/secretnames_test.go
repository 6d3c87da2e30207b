package main

import (
	"bytes"
	"slices"
	"testing"

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
