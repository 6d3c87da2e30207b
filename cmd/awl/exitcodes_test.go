package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/awlrun/awl/runner"
)

// exitTable is a markdown table of exit codes: each row's code (a row
// "130 / 143" gives two), the text of its row, and the reasons its
// backticked cells name.
type exitTable struct {
	rows    map[int]string
	reasons map[int][]string
}

// readExitTable reads the first table under heading in doc; reasonCol is
// the column (from 1) that holds the reasons, 0 for none.
func readExitTable(t *testing.T, doc, heading string, reasonCol int) exitTable {
	t.Helper()
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("%s has no %q section", doc, heading)
	}
	tab := exitTable{rows: map[int]string{}, reasons: map[int][]string{}}
	started := false
	for line := range strings.SplitSeq(text[i+len(heading)+2:], "\n") {
		if !strings.HasPrefix(line, "|") {
			if started {
				break
			}
			continue
		}
		started = true
		cells := strings.Split(line, "|")
		var codes []int
		for f := range strings.SplitSeq(cells[1], "/") {
			if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
				codes = append(codes, n)
			}
		}
		for _, c := range codes {
			tab.rows[c] = line
			if reasonCol > 0 {
				for _, m := range backtick.FindAllStringSubmatch(cells[reasonCol], -1) {
					tab.reasons[c] = append(tab.reasons[c], m[1])
				}
			}
		}
	}
	if len(tab.rows) == 0 {
		t.Fatalf("%s: no exit codes under %q", doc, heading)
	}
	return tab
}

var backtick = regexp.MustCompile("`([^`]+)`")

// outcomes records what the binary did in testdata/exitcodes.txtar: each
// exit code with its result event's reason, and the README causes shown.
type outcomes struct {
	mu     sync.Mutex
	seen   map[int][]string // code → reasons
	causes map[int][]string // code → causes
	readme exitTable
}

// cmdOutcome: `outcome N REASON CAUSE command args...` runs the command,
// which must exit N and print a result event (the last line of stdout)
// with exit_code N and reason REASON; CAUSE must be a phrase of README's row for N. With
// `-from EVENTS CODEFILE` in place of a command, the event is EVENTS's
// last line and the exit code CODEFILE's content, as a shell that sent a
// signal to awl wrote them.
func (o *outcomes) cmdOutcome(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 4 {
		ts.Fatalf("usage: outcome N REASON CAUSE (command [args...] | -from EVENTS CODEFILE)")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	reason, cause := args[1], args[2]
	if !strings.Contains(o.readme.rows[want], cause) {
		ts.Fatalf("README.md's exit code %d row does not say %q: %s", want, cause, o.readme.rows[want])
	}
	var got int
	var stdout string
	if args[3] == "-from" {
		if len(args) != 6 {
			ts.Fatalf("usage: outcome N REASON CAUSE -from EVENTS CODEFILE")
		}
		stdout = ts.ReadFile(args[4])
		got, err = strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[5])))
		ts.Check(err)
	} else {
		err := ts.Exec(args[3], args[4:]...)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			got = ee.ExitCode()
		} else if err != nil {
			ts.Fatalf("%v", err)
		}
		stdout = ts.ReadFile("stdout")
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var res struct {
		Type     string `json:"type"`
		ExitCode *int   `json:"exit_code"`
		Reason   string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil || res.Type != "result" || res.ExitCode == nil {
		ts.Fatalf("the last line of stdout is no result event (%v): %s", err, lines[len(lines)-1])
	}
	if *res.ExitCode != want || res.Reason != reason {
		ts.Fatalf("result event: exit_code %d, reason %q; want %d %q", *res.ExitCode, res.Reason, want, reason)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !slices.Contains(o.seen[want], reason) {
		o.seen[want] = append(o.seen[want], reason)
	}
	o.causes[want] = append(o.causes[want], cause)
}

// TestReadmeExitCodeTable holds the README's exit-code table, and the
// reasons docs/events.md gives each code, to the binary: the script
// testdata/exitcodes.txtar ends runs in every way the README's rows list
// (but exit 1, a bug), and each code and each reason of the tables must have come out of the
// binary, with the result event saying the same; nothing else may.
func TestReadmeExitCodeTable(t *testing.T) {
	o := &outcomes{
		seen:   map[int][]string{},
		causes: map[int][]string{},
		readme: readExitTable(t, "../../README.md", "## Exit codes", 0),
	}
	events := readExitTable(t, "../../docs/events.md", "## Exit codes", 2)
	cmds := scriptCmds()
	cmds["outcome"] = o.cmdOutcome
	t.Run("script", func(t *testing.T) {
		testscript.Run(t, scriptParams(t, "testdata/exitcodes.txtar", cmds))
	})
	if t.Failed() {
		return
	}
	// Exit 1 is awl's own failure, which no script can ask for: it is
	// what an error that owns no exit code becomes.
	if code, reason := runner.Classify(errors.New("a bug")); code == 1 {
		o.seen[1] = append(o.seen[1], reason)
	}
	for code := range o.readme.rows {
		if _, ok := events.rows[code]; !ok {
			t.Errorf("README.md lists exit code %d; docs/events.md does not", code)
		}
		if len(o.seen[code]) == 0 {
			t.Errorf("README.md lists exit code %d; no run of the script ended with it", code)
		}
	}
	for code, reasons := range events.reasons {
		if _, ok := o.readme.rows[code]; !ok {
			t.Errorf("docs/events.md lists exit code %d; README.md does not", code)
		}
		for _, r := range reasons {
			if !slices.Contains(o.seen[code], r) {
				t.Errorf("docs/events.md gives exit code %d the reason %q; no run of the script ended so", code, r)
			}
		}
	}
	for code, reasons := range o.seen {
		for _, r := range reasons {
			if !slices.Contains(events.reasons[code], r) {
				t.Errorf("a run ended with exit code %d and reason %q, which docs/events.md does not give it", code, r)
			}
		}
	}
}

// TestCIExitTableReasons: docs/ci.md's table of exit codes for a job to
// branch on gives each code the reasons docs/events.md gives it (which
// TestReadmeExitCodeTable holds to the binary): a job branching on
// config_untrusted must find it there.
func TestCIExitTableReasons(t *testing.T) {
	events := readExitTable(t, "../../docs/events.md", "## Exit codes", 2)
	ci := readExitTable(t, "../../docs/ci.md", "## Exit codes and branching", 2)
	for code, want := range events.reasons {
		got := ci.reasons[code]
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
			t.Errorf("docs/ci.md gives exit code %d the reasons %q; docs/events.md gives %q", code, got, want)
		}
	}
}
