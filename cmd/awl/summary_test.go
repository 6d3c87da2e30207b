package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/awlrun/awl/runner"
)

// TestStepSummaryCutsBetweenCharacters: the error in GITHUB_STEP_SUMMARY is
// one line cut at 300 characters, never inside a UTF-8 character, wherever
// the cut falls.
func TestStepSummaryCutsBetweenCharacters(t *testing.T) {
	for pad := range 4 {
		msg := strings.Repeat("x", pad) + strings.Repeat("é€😀", 110)
		path := filepath.Join(t.TempDir(), "summary.md")
		a := &app{stderr: &bytes.Buffer{}, getenv: func(k string) string {
			if k == "GITHUB_STEP_SUMMARY" {
				return path
			}
			return ""
		}}
		writeStepSummary(a, runner.Result{Err: errors.New(msg)}, 5)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(data) {
			t.Errorf("pad %d: the summary is not valid UTF-8: %q", pad, data)
		}
		if !bytes.Contains(data, []byte("…")) {
			t.Errorf("pad %d: the long error was not cut: %q", pad, data)
		}
	}
}
