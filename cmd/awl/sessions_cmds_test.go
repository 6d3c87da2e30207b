package main

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/session"
)

// sessionsScriptCmds are script commands added for the sessions scripts.
func sessionsScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"mkpng":      cmdMkpng,
		"holdlock":   cmdHoldlock,
		"backdate":   cmdBackdate,
		"answeras":   cmdAnswerAs,
		"toolcallas": cmdToolcallAs,
		"cookbook":   cmdCookbook,
	}
}

// cmdMkpng: `mkpng file` writes a small PNG image.
func cmdMkpng(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mkpng file")
	}
	img := image.NewNRGBA(image.Rect(0, 0, 4, 3))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	img.Set(0, 0, color.NRGBA{R: 255, A: 255})
	var b bytes.Buffer
	ts.Check(png.Encode(&b, img))
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b.Bytes(), 0o644))
}

// cmdHoldlock: `holdlock file` takes a session's writer lock, as a running
// awl would, and keeps it until the script ends.
func cmdHoldlock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: holdlock session-file")
	}
	s, err := session.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Defer(func() { s.Close() })
}

// cmdBackdate: `backdate DURATION file...` sets the files' modification
// time to DURATION ago (30d, 36h…).
func cmdBackdate(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: backdate DURATION file...")
	}
	d, err := parseAge(args[0])
	ts.Check(err)
	t := time.Now().Add(-d)
	for _, f := range args[1:] {
		ts.Check(os.Chtimes(ts.MkAbs(f), t, t))
	}
}

// cmdAnswerAs: `answeras MODEL N text...` is `answer` with MODEL as the
// model that answered.
func cmdAnswerAs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: answeras MODEL N text...")
	}
	t := cannedTurn()
	t.Model = args[0]
	t.Text = strings.Join(args[2:], " ")
	writeResponse(ts, args[1], providertest.Stream("anthropic", t))
}

// cmdToolcallAs: `toolcallas MODEL N name input...` is `toolcall` with
// MODEL as the model that answered.
func cmdToolcallAs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 4 || len(args)%2 != 0 {
		ts.Fatalf("usage: toolcallas MODEL N name input [name input...]")
	}
	t := cannedTurn()
	t.Model = args[0]
	for i := 2; i < len(args); i += 2 {
		t.Calls = append(t.Calls, providertest.Call{ID: fmt.Sprintf("call_%s_%d", args[1], len(t.Calls)+1), Name: args[i], Input: args[i+1]})
	}
	writeResponse(ts, args[1], providertest.Stream("anthropic", t))
}

// cookbookPath is docs/jq.md, found from the package directory (where go
// test runs).
var cookbookPath, _ = filepath.Abs(filepath.Join("..", "..", "docs", "jq.md"))

// recipe is one recipe of docs/jq.md: a ```sh block under a ### heading,
// and the ```text block after it showing what it prints.
type recipe struct {
	title, script, output string
	line                  int
}

// parseCookbook returns the recipes of the cookbook's markdown.
func parseCookbook(md string) ([]recipe, error) {
	var out []recipe
	var title string
	var cur *recipe
	sc := bufio.NewScanner(strings.NewReader(md))
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"):
			if cur != nil && cur.output == "" {
				return nil, fmt.Errorf("jq.md:%d: recipe %q has no ```text block", cur.line, cur.title)
			}
			cur = nil
			title = ""
			if t, ok := strings.CutPrefix(line, "### "); ok {
				title = t
			}
		case line == "```sh" || line == "```text":
			block, n, err := fenced(sc)
			if err != nil {
				return nil, fmt.Errorf("jq.md:%d: %v", lineNo, err)
			}
			start := lineNo
			lineNo += n
			if title == "" {
				continue // an example outside the recipes
			}
			if line == "```sh" {
				if cur != nil && cur.output == "" {
					return nil, fmt.Errorf("jq.md:%d: recipe %q has no ```text block", cur.line, cur.title)
				}
				out = append(out, recipe{title: title, script: block, line: start})
				cur = &out[len(out)-1]
				continue
			}
			if cur == nil || cur.output != "" {
				return nil, fmt.Errorf("jq.md:%d: a ```text block without a recipe before it", start)
			}
			cur.output = block
		}
	}
	if cur != nil && cur.output == "" {
		return nil, fmt.Errorf("jq.md:%d: recipe %q has no ```text block", cur.line, cur.title)
	}
	return out, sc.Err()
}

// fenced reads a code block's lines up to its closing fence.
func fenced(sc *bufio.Scanner) (string, int, error) {
	var b strings.Builder
	n := 0
	for sc.Scan() {
		n++
		if sc.Text() == "```" {
			return b.String(), n, nil
		}
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	return "", n, fmt.Errorf("unclosed code block")
}

// Values that differ from run to run; the cookbook shows plausible ones and
// the check compares their shape.
var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	fileRE = regexp.MustCompile(`[^\s"]*/[^\s"]*\.jsonl`)
	timeRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
)

func normalizeOutput(s string) string {
	s = fileRE.ReplaceAllString(s, "<file>")
	s = uuidRE.ReplaceAllString(s, "<id>")
	s = timeRE.ReplaceAllString(s, "<time>")
	return strings.TrimRight(s, "\n")
}

// cmdCookbook: `cookbook` runs every recipe of docs/jq.md with sh (and the
// real jq) in the script's directory and environment, and checks that each
// prints what the cookbook shows (session ids, paths and timestamps
// compared by shape). At least 8 recipes must exist.
func cmdCookbook(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: cookbook")
	}
	md, err := os.ReadFile(cookbookPath)
	ts.Check(err)
	recipes, err := parseCookbook(string(md))
	ts.Check(err)
	if len(recipes) < 8 {
		ts.Fatalf("docs/jq.md has %d recipes, want at least 8", len(recipes))
	}
	for _, r := range recipes {
		ts.Logf("recipe %q (jq.md:%d)", r.title, r.line)
		if err := ts.Exec("sh", "-e", "-c", r.script); err != nil {
			ts.Fatalf("recipe %q (jq.md:%d): %v\n%s", r.title, r.line, err, ts.ReadFile("stderr"))
		}
		got, want := normalizeOutput(ts.ReadFile("stdout")), normalizeOutput(r.output)
		if got != want {
			ts.Fatalf("recipe %q (jq.md:%d) printed:\n%s\nthe cookbook shows:\n%s", r.title, r.line, got, want)
		}
	}
}
