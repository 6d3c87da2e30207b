package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner/event"
)

// scriptCmds are the commands the scripts add to testscript's own.
func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	m := map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"exitcode":    cmdExitcode,
		"answer":      cmdAnswer,
		"toolcall":    cmdToolcall,
		"setenvfile":  cmdSetenvfile,
		"validate":    cmdValidate,
		"nosentinel":  cmdNoSentinel,
		"waitfile":    cmdWaitfile,
		"answerfile":  cmdAnswerfile,
		"prefixcheck": cmdPrefixcheck,
		"sink":        cmdSink,
	}
	for k, v := range sessionsScriptCmds() {
		m[k] = v
	}
	return m
}

// providerFlag takes an optional leading `-p NAME` (the wire API of the
// canned stream; anthropic by default) off args.
func providerFlag(args []string) (string, []string) {
	if len(args) >= 2 && args[0] == "-p" {
		return args[1], args[2:]
	}
	return "anthropic", args
}

func writeResponse(ts *testscript.TestScript, n string, resp providertest.Response) {
	dir := filepath.Join(ts.Getenv("WORK"), "provider")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		ts.Fatalf("%v", err)
	}
	ts.Check(os.WriteFile(filepath.Join(dir, n+".sse"), resp.Body, 0o644))
}

// cannedTurn is what the scripts' canned answers report.
func cannedTurn() providertest.Turn {
	return providertest.Turn{Model: "claude-test-1", InputTokens: 100, OutputTokens: 20}
}

// cmdAnswer: `answer [-p provider] N text...` makes response N a text answer.
func cmdAnswer(ts *testscript.TestScript, neg bool, args []string) {
	prov, args := providerFlag(args)
	if neg || len(args) < 2 {
		ts.Fatalf("usage: answer [-p provider] N text...")
	}
	t := cannedTurn()
	t.Text = strings.Join(args[1:], " ")
	writeResponse(ts, args[0], providertest.Stream(prov, t))
}

// cmdAnswerfile: `answerfile [-p provider] N file` makes response N a text
// answer with the file's content (for answers too big for a command line).
func cmdAnswerfile(ts *testscript.TestScript, neg bool, args []string) {
	prov, args := providerFlag(args)
	if neg || len(args) != 2 {
		ts.Fatalf("usage: answerfile [-p provider] N file")
	}
	t := cannedTurn()
	t.Text = ts.ReadFile(args[1])
	writeResponse(ts, args[0], providertest.Stream(prov, t))
}

// cmdToolcall: `toolcall [-p provider] [-text file] N name input [name
// input...]` makes response N a set of tool calls with ids call_N_1,
// call_N_2, …, after the file's content as text when -text is given.
func cmdToolcall(ts *testscript.TestScript, neg bool, args []string) {
	prov, args := providerFlag(args)
	t := cannedTurn()
	if len(args) > 1 && args[0] == "-text" {
		t.Text = ts.ReadFile(args[1])
		args = args[2:]
	}
	if neg || len(args) < 3 || len(args)%2 != 1 {
		ts.Fatalf("usage: toolcall [-p provider] [-text file] N name input [name input...]")
	}
	for i := 1; i < len(args); i += 2 {
		t.Calls = append(t.Calls, providertest.Call{ID: fmt.Sprintf("call_%s_%d", args[0], len(t.Calls)+1), Name: args[i], Input: args[i+1]})
	}
	writeResponse(ts, args[0], providertest.Stream(prov, t))
}

// cmdSetenvfile: `setenvfile VAR file` sets VAR to the file's trimmed content.
func cmdSetenvfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: setenvfile VAR file")
	}
	ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile(args[1])))
}

// cmdValidate: `validate file` checks every NDJSON line of file against
// `awl schema events`.
func cmdValidate(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: validate file")
	}
	err := validateEvents(ts.ReadFile(args[0]))
	if neg {
		if err == nil {
			ts.Fatalf("events validated, want an error")
		}
		return
	}
	ts.Check(err)
}

func validateEvents(ndjson string) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(event.Schema))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("events.json", doc); err != nil {
		return err
	}
	sch, err := c.Compile("events.json")
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(strings.NewReader(ndjson))
	sc.Buffer(nil, 64<<20)
	n := 0
	for sc.Scan() {
		n++
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(sc.Bytes()))
		if err != nil {
			return fmt.Errorf("line %d: %v", n, err)
		}
		if err := sch.Validate(v); err != nil {
			return fmt.Errorf("line %d: %v", n, err)
		}
	}
	if n == 0 {
		return fmt.Errorf("no events")
	}
	return sc.Err()
}

// cmdWaitfile: `waitfile path` waits (up to 2 minutes: a loaded machine
// running -race can take long to start awl) until path exists, so a
// script can act once a background awl has reached a point (its request
// arrived at the fake provider).
func cmdWaitfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile path")
	}
	p := ts.MkAbs(args[0])
	for i := 0; i < 12000; i++ {
		if _, err := os.Stat(p); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.Fatalf("waitfile: %s did not appear", args[0])
}

// cacheMarker matches Anthropic's cache breakpoints, which move with the end
// of the conversation: the one permitted difference between requests.
var cacheMarker = regexp.MustCompile(`,?"cache_control":\{[^}]*\}`)

// cmdPrefixcheck: `prefixcheck N` checks that requests/1.json … N.json each
// begin with exactly the messages of the request before, byte for byte
// (cache markers aside), with the same system prompt and tools.
func cmdPrefixcheck(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: prefixcheck N")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	var prev []string
	var system string
	for i := 1; i <= n; i++ {
		body := ts.ReadFile(filepath.Join(ts.Getenv("WORK"), "requests", strconv.Itoa(i)+".json"))
		sys := cacheMarker.ReplaceAllString(gjson.Get(body, "system").Raw+gjson.Get(body, "tools").Raw, "")
		if i > 1 && sys != system {
			ts.Fatalf("request %d: system prompt or tools changed", i)
		}
		system = sys
		var cur []string
		for _, m := range gjson.Get(body, "messages").Array() {
			cur = append(cur, cacheMarker.ReplaceAllString(m.Raw, ""))
		}
		if len(cur) <= len(prev) {
			ts.Fatalf("request %d: %d messages, not more than %d", i, len(cur), len(prev))
		}
		for j := range prev {
			if cur[j] != prev[j] {
				ts.Fatalf("request %d: message %d differs from request %d:\nnow %s\nwas %s", i, j, i-1, cur[j], prev[j])
			}
		}
		prev = cur
	}
}

// cmdNoSentinel: `nosentinel dir...` fails if any file under dir contains the
// sentinel API key.
func cmdNoSentinel(ts *testscript.TestScript, neg bool, args []string) {
	for _, d := range args {
		err := filepath.Walk(ts.MkAbs(d), func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if bytes.Contains(b, []byte(sentinelKey)) {
				return fmt.Errorf("%s contains the API key", p)
			}
			return nil
		})
		ts.Check(err)
	}
}
