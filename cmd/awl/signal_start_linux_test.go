package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/provider/providertest"
)

// TestSignalAtAnyMomentOfTheStart: SIGTERM sent at every millisecond of a
// run's start (the signals are caught in a goroutine,
// signalContext) ends it one of two ways only. Either the signal came
// before awl caught it, and the process died of it with nothing in the
// session directory; or awl caught it, exited 143 with a result event,
// and any session it made is whole, ended by its run entry. Never a
// temporary file left behind, nor a session without its ending.
func TestSignalAtAnyMomentOfTheStart(t *testing.T) {
	tmp, awl := linkedAwl(t)
	srv := providertest.New()
	defer srv.Close()
	for range 200 {
		srv.Enqueue(providertest.Response{Delay: 30 * time.Second, Body: providertest.Text("anthropic", "late").Body})
	}
	killed, caught := 0, 0
	// One more millisecond each time, until enough runs have caught it: a
	// race-detector build (or a loaded machine) takes tens of ms to start.
	for i := 0; caught < 10 && i < 300; i++ {
		// A directory of its own for each run: named by number, since a
		// loaded machine sweeps past 255 ms, and a name of i+1 letters
		// past 255 is too long to create (exit 3).
		sessions := filepath.Join(tmp, "sessions", fmt.Sprint("run-", i))
		cmd := exec.Command(awl, "run", "--no-stdin", "-o", "ndjson", "go")
		cmd.Dir = tmp
		cmd.Env = awlEnv(tmp, srv.URL, sessions)
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
		files, _ := filepath.Glob(filepath.Join(sessions, "*", "*"))
		hidden, _ := filepath.Glob(filepath.Join(sessions, "*", ".*.tmp"))
		files = append(files, hidden...)
		switch {
		case ws.Signaled() && ws.Signal() == syscall.SIGTERM:
			killed++
			if len(files) > 0 {
				t.Errorf("after %d ms: killed by SIGTERM, but it left %v", i, files)
			}
		case ws.Exited() && ws.ExitStatus() == 143:
			caught++
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			last := gjson.Parse(lines[len(lines)-1])
			if last.Get("type").Str != "result" || last.Get("reason").Str != "interrupted" {
				t.Errorf("after %d ms: exit 143, last event %s", i, last.Raw)
			}
			for _, f := range files {
				if strings.HasSuffix(f, ".tmp") {
					t.Errorf("after %d ms: a temporary file left: %s", i, f)
					continue
				}
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				ls := strings.Split(strings.TrimSpace(string(b)), "\n")
				if gjson.Get(ls[len(ls)-1], "type").Str != "run" {
					t.Errorf("after %d ms: %s does not end with its run entry:\n%s", i, f, b)
				}
			}
		default:
			t.Errorf("after %d ms: %v, want killed by SIGTERM or exit 143; stdout:\n%s", i, cmd.ProcessState, out.String())
		}
	}
	t.Logf("%d killed before the signals were caught, %d caught", killed, caught)
	if caught == 0 {
		t.Error("no run caught the signal, even 300 ms after its start")
	}
}
