package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/awlrun/awl/provider/providertest"
)

func TestRewriteResume(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
		empty    bool
	}{
		// A word after --resume is always the reference, whatever it looks like.
		{in: []string{"run", "--resume", "abc", "x"}, want: []string{"run", "--resume=abc", "x"}},
		{in: []string{"run", "-r", "why", "is", "it"}, want: []string{"run", "--resume=why", "is", "it"}},
		{in: []string{"run", "--resume", "019a-12"}, want: []string{"run", "--resume=019a-12"}},
		{in: []string{"run", "--resume", "-"}, want: []string{"run", "--resume=-"}},
		// Bare: last, or before a flag (or --), means the latest session.
		{in: []string{"run", "hi", "--resume"}, want: []string{"run", "hi", "--continue"}},
		{in: []string{"run", "--resume", "-p", "hi"}, want: []string{"run", "--continue", "-p", "hi"}},
		{in: []string{"run", "--resume", "--", "hi"}, want: []string{"run", "--continue", "--", "hi"}},
		{in: []string{"run", "--resume=abc", "x"}, want: []string{"run", "--resume=abc", "x"}},
		// After --, nothing is rewritten.
		{in: []string{"run", "--", "--resume", "x"}, want: []string{"run", "--", "--resume", "x"}},
		// Empty references are errors.
		{in: []string{"run", "--resume=", "x"}, empty: true},
		{in: []string{"run", "--resume", "", "x"}, empty: true},
		{in: []string{"run", "-r", ""}, empty: true},
		// Text flags keep a value that starts with "-".
		{in: []string{"run", "-p", "- fix it"}, want: []string{"run", "--prompt=- fix it"}},
	} {
		got, err := rewriteResume(tc.in)
		if tc.empty {
			if !errors.Is(err, errEmptyResume) {
				t.Errorf("%q: err = %v, want the empty-reference error", tc.in, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q -> %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestDurationCountsStdinWait: duration_ms runs from the process start, so
// the wait for stdin is in it. The test starts the clock 2 s before Main
// (as a slow start-up would) and lets stdin's first byte come 300 ms later.
func TestDurationCountsStdinWait(t *testing.T) {
	srv := providertest.New()
	defer srv.Close()
	srv.Enqueue(providertest.Text("anthropic", "ok"))
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("AWL_SESSION_DIR", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Chdir(t.TempDir())
	pr, pw := io.Pipe()
	go func() {
		time.Sleep(300 * time.Millisecond)
		pw.Write([]byte("data"))
		pw.Close()
	}()
	var out, errb bytes.Buffer
	start := time.Now().Add(-2 * time.Second)
	if c := mainAt(context.Background(), start, []string{"run", "--stdin", "-o", "json", "hi"}, pr, &out, &errb); c != 0 {
		t.Fatalf("exit %d: %s", c, errb.String())
	}
	var res struct {
		DurationMS int64 `json:"duration_ms"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err, out.String())
	}
	if res.DurationMS < 2300 {
		t.Errorf("duration_ms = %d, want at least 2300 (2 s before Main + 300 ms on stdin)", res.DurationMS)
	}

	// A run that fails before it starts counts the same way.
	out.Reset()
	t.Setenv("ANTHROPIC_API_KEY", "")
	if c := mainAt(context.Background(), start, []string{"run", "--no-stdin", "-o", "json", "hi"}, nil, &out, &errb); c != 4 {
		t.Fatalf("exit %d, want 4", c)
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.DurationMS < 2000 {
		t.Errorf("failed run: duration_ms = %d (%v)", res.DurationMS, err)
	}
}
