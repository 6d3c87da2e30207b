package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/awlrun/awl/runner"
)

// scriptCmds are the commands the scripts add to testscript's own.
func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	m := map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"exitcode":   cmdExitcode,
		"answer":     cmdAnswer,
		"toolcall":   cmdToolcall,
		"setenvfile": cmdSetenvfile,
		"validate":   cmdValidate,
		"nosentinel": cmdNoSentinel,
		"waitfile":   cmdWaitfile,
	}
	for k, v := range sessionsScriptCmds() {
		m[k] = v
	}
	return m
}

// anthropicSSE renders an Anthropic Messages stream shaped like the recorded
// fixtures: message_start, one block per item, message_delta, message_stop.
func anthropicSSE(blocks []map[string]any, stop string) []byte {
	var b bytes.Buffer
	ev := func(name string, v any) {
		data, _ := json.Marshal(v)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data)
	}
	ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"model": "claude-test-1", "id": "msg_fake", "type": "message", "role": "assistant", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 100, "cache_creation_input_tokens": 10, "cache_read_input_tokens": 50, "output_tokens": 1},
	}})
	for i, blk := range blocks {
		switch blk["type"] {
		case "text":
			ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": blk["text"]}})
		case "tool_use":
			ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": blk["id"], "name": blk["name"], "input": map[string]any{}}})
			ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": blk["input"]}})
		}
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 20}})
	ev("message_stop", map[string]any{"type": "message_stop"})
	return b.Bytes()
}

func writeResponse(ts *testscript.TestScript, n string, body []byte) {
	dir := ts.MkAbs("provider")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		ts.Fatalf("%v", err)
	}
	ts.Check(os.WriteFile(filepath.Join(dir, n+".sse"), body, 0o644))
}

// cmdAnswer: `answer N text...` makes response N a text answer.
func cmdAnswer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: answer N text...")
	}
	text := strings.Join(args[1:], " ")
	writeResponse(ts, args[0], anthropicSSE([]map[string]any{{"type": "text", "text": text}}, "end_turn"))
}

// cmdToolcall: `toolcall N name input [name input...]` makes response N a
// set of tool calls with ids call_N_1, call_N_2, ….
func cmdToolcall(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 || len(args)%2 != 1 {
		ts.Fatalf("usage: toolcall N name input [name input...]")
	}
	var blocks []map[string]any
	for i := 1; i < len(args); i += 2 {
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": fmt.Sprintf("call_%s_%d", args[0], len(blocks)+1), "name": args[i], "input": args[i+1]})
	}
	writeResponse(ts, args[0], anthropicSSE(blocks, "tool_use"))
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
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(runner.EventsSchema))
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

// cmdWaitfile: `waitfile path` waits (up to 30s) until path exists, so a
// script can act once a background awl has reached a point (its request
// arrived at the fake provider).
func cmdWaitfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile path")
	}
	p := ts.MkAbs(args[0])
	for i := 0; i < 3000; i++ {
		if _, err := os.Stat(p); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.Fatalf("waitfile: %s did not appear", args[0])
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
