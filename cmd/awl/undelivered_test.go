package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/awlrun/awl/provider/providertest"
)

// failingStdout is a stdout every write to which fails with err.
type failingStdout struct{ err error }

func (f failingStdout) Write([]byte) (int, error) { return 0, f.err }

// TestUndeliveredAnswerFails: a run whose answer (text) or result (json,
// ndjson, traced or not) cannot be written to stdout, as on a full disk,
// exits 1 saying so, never 0; the session still holds the answer. A
// stdout whose reader went away (EPIPE) is no failure.
func TestUndeliveredAnswerFails(t *testing.T) {
	for _, c := range []struct {
		args  []string
		err   error
		trace bool
		code  int
	}{
		{[]string{"run", "--no-stdin", "hi"}, syscall.ENOSPC, false, 1},
		{[]string{"run", "--no-stdin", "-o", "json", "hi"}, syscall.ENOSPC, false, 1},
		{[]string{"run", "--no-stdin", "-o", "ndjson", "hi"}, syscall.ENOSPC, true, 1},
		{[]string{"run", "--no-stdin", "-o", "json", "--progress", "hi"}, syscall.EIO, false, 1},
		{[]string{"run", "--no-stdin", "hi"}, syscall.EPIPE, false, 0},
		{[]string{"run", "--no-stdin", "-o", "json", "hi"}, syscall.EPIPE, false, 0},
	} {
		t.Run(fmt.Sprintf("%s %v trace=%v", strings.Join(c.args[2:], " "), c.err, c.trace), func(t *testing.T) {
			endpoint := ""
			if c.trace {
				endpoint = newOTLPReceiver(t).URL
			}
			srv, dir := traceEnv(t, endpoint)
			srv.Enqueue(providertest.Stream("anthropic", providertest.Turn{Model: "claude-test-1", InputTokens: 10, OutputTokens: 2, Text: "the answer"}))
			var errb bytes.Buffer
			code := Main(context.Background(), c.args, nil, failingStdout{c.err}, &errb)
			if code != c.code {
				t.Fatalf("exit %d, want %d: %s", code, c.code, errb.String())
			}
			if said := strings.Contains(errb.String(), "was not delivered; the session holds it"); said != (c.code == 1) {
				t.Errorf("stderr %q: says the answer was not delivered: %v", errb.String(), said)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "sessions", "*", "*.jsonl"))
			if len(files) != 1 {
				t.Fatalf("sessions %v", files)
			}
			if b, _ := os.ReadFile(files[0]); !bytes.Contains(b, []byte("the answer")) {
				t.Errorf("the session lacks the answer")
			}
		})
	}
}
