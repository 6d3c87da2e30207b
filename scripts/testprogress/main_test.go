package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/internal/testenv"
)

// fakeGo writes a go command that prints what `go test -json ./...` printed
// for a module of four packages (testdata/gotest.json: one passes with a
// skipped test, one fails in a subtest, one has no tests, one does not
// build), after running script, and exits with code.
func fakeGo(t *testing.T, script string, code int) string {
	t.Helper()
	rec, err := filepath.Abs("testdata/gotest.json")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "go")
	body := "#!/bin/sh\n[ \"$1 $2\" = 'test -json' ] || { echo \"called with $*\" >&2; exit 99; }\n" + script + "\ncat '" + rec + "'\nexit " + string(rune('0'+code)) + "\n"
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProgressLines: a line per package in the order they finish, a
// failed test's output as it fails, a build failure's compiler output,
// and go test's exit status kept.
func TestProgressLines(t *testing.T) {
	testenv.RequireCommands(t, "sh", "cat")
	var out testenv.Buffer
	code := run(fakeGo(t, "", 1), []string{"-race", "./..."}, &out, time.Hour)
	if code != 1 {
		t.Errorf("exit %d, want go test's 1", code)
	}
	got := out.String()
	want := []string{
		"test -race ./...: a line per package as each finishes\n",
		"broken/broken_test.go:5:28: undefined: undefined\n",
		"--- FAIL: example.com/rec/bad TestFails/sub (0.00s)\n    === RUN   TestFails/sub\n        bad_test.go:7: want 2, got 3\n",
		"FAIL example.com/rec/bad 0.0s\n",
		"FAIL example.com/rec/broken 0.0s [build failed]\n",
		"?    example.com/rec/none [no test files]\n",
		"ok   example.com/rec/good 0.0s\n",
		"FAIL (exit 1): 1 packages ok, 2 failed, 1 without tests, in ",
	}
	at := 0
	for _, w := range want {
		i := strings.Index(got[at:], w)
		if i < 0 {
			t.Fatalf("the output lacks, after byte %d, %q:\n%s", at, w, got)
		}
		at += i + len(w)
	}
	for _, leak := range []string{"good_test.go:5: fine", "not here", "TestPasses"} {
		if strings.Contains(got, leak) {
			t.Errorf("the output shows %q, from a test that did not fail:\n%s", leak, got)
		}
	}
}

// TestProgressExitStatus: a failing package is a failure even when go
// test exits 0, and go test's own status passes through.
func TestProgressExitStatus(t *testing.T) {
	testenv.RequireCommands(t, "sh", "cat")
	var out testenv.Buffer
	if code := run(fakeGo(t, "", 0), []string{"./..."}, &out, time.Hour); code != 1 {
		t.Errorf("go test exited 0 after a FAIL line: exit %d, want 1", code)
	}
	if code := run(fakeGo(t, "", 2), []string{"./..."}, &out, time.Hour); code != 2 {
		t.Errorf("exit %d, want go test's 2", code)
	}
	if code := run(filepath.Join(t.TempDir(), "no-such-go"), []string{"./..."}, &out, time.Hour); code != 1 {
		t.Errorf("a go command that cannot start: exit %d, want 1", code)
	}
}

// TestProgressHeartbeat: while a package runs and nothing is printed, a
// line says which packages are running; the fake go test waits for that
// line before it goes on.
func TestProgressHeartbeat(t *testing.T) {
	testenv.RequireCommands(t, "sh", "cat")
	dir := t.TempDir()
	goOn := filepath.Join(dir, "go-on")
	script := `echo '{"Action":"start","Package":"example.com/slow"}'
while [ ! -e '` + goOn + `' ]; do sleep 0.01; done`
	var out testenv.Buffer
	done := make(chan int)
	go func() { done <- run(fakeGo(t, script, 1), []string{"./..."}, &out, 40*time.Millisecond) }()
	for !strings.Contains(out.String(), "running example.com/slow (") {
		select {
		case code := <-done:
			t.Fatalf("run ended (exit %d) with no heartbeat:\n%s", code, out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := os.WriteFile(goOn, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(out.String(), "ok   example.com/rec/good") {
		t.Errorf("after the heartbeat the packages' lines are missing:\n%s", out.String())
	}
}
