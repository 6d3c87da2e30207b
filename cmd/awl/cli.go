package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/policy"
	"github.com/awlrun/awl/session"
)

// app carries the streams and environment every command runs with.
type app struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// start is when the process started: a run's duration_ms counts from
	// it, the wait for stdin included.
	start time.Time
	// keyFiles caches the content of files named by _FILE key variables,
	// by path: each is read once (providerKey).
	keyFiles map[string]keyFile
	// code is the exit code a command chose; errors returned from Run are
	// classified instead.
	code int
	// progress, during `awl run`, prints the run's steps on stderr
	// (progress.go); nil when it does not.
	progress io.Writer
	// secrets are the secrets awl comes to hold besides the variables'
	// (MCP OAuth tokens), which every redactor it made takes up
	// (secrets.go).
	secrets secretSet
	// noSessionDir, for a run given no session directory, is why none was
	// found: the run fails with it unless its configuration names one.
	noSessionDir error
}

// cli is the kong grammar.
type cli struct {
	globals

	Run      runCmd      `cmd:""`
	Sessions sessionsCmd `cmd:""`
	Schema   schemaCmd   `cmd:""`
	MCP      mcpCmd      `cmd:"" name:"mcp"`
	Models   modelsCmd   `cmd:""`
	Config   configCmd   `cmd:""`
	Skills   skillsCmd   `cmd:""`
	Version  versionCmd  `cmd:""`
}

// globals are the flags that go before the command.
type globals struct {
	ShowVersion versionFlag `name:"version"`
	SessionDir  string      `name:"session-dir" placeholder:"DIR"`
}

// runCLI is the grammar with `awl run` alone. kong builds the model of
// every command of a grammar and visits all of it at each parse, whichever
// command runs, and `awl run` is the command a pipeline starts again and
// again: mainAt hands kong this grammar when the command is run (onlyRun),
// which takes more than a third off kong's work. TestRunGrammar checks that
// it parses, fails and helps as the whole grammar does.
type runCLI struct {
	globals
	Run runCmd `cmd:""`
}

// onlyRun tells whether args name the run command, after the global flags.
func onlyRun(args []string) bool {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--session-dir":
			i++
		case strings.HasPrefix(a, "--session-dir="):
		default:
			return a == "run"
		}
	}
	return false
}

type versionCmd struct{}

// versionFlag is --version: it prints the build stamp, read only then, and
// exits.
type versionFlag bool

// BeforeReset is kong's hook, run before the other flags are applied
// (parse runs it, as kong's Parse would).
func (versionFlag) BeforeReset(app *kong.Kong) error {
	fmt.Fprintln(app.Stdout, currentStamp())
	app.Exit(0)
	return nil
}

func (versionCmd) Run(a *app) error {
	fmt.Fprintln(a.stdout, currentStamp())
	return nil
}

type schemaCmd struct {
	Which string `arg:"" enum:"events,input"`
}

func (c schemaCmd) Run(a *app) error {
	s := event.Schema
	if c.Which == "input" {
		s = inputSchema
	}
	_, err := a.stdout.Write(s)
	return err
}

// exitPanic carries kong's exit request (after --help) out of Parse.
type exitPanic struct{ code int }

// Main runs awl with args and the given streams and returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	return mainAt(ctx, time.Now(), args, stdin, stdout, stderr)
}

// mainAt is Main for a process that started at start.
func mainAt(ctx context.Context, start time.Time, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	// A stdout nobody reads must not keep a signalled run from ending its
	// session (signalSafeWriter).
	stdout = newSignalSafeWriter(stdout, ctx.Done())
	a := &app{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv, start: start}
	// `awl --version` and `awl version` need no parser either: a script
	// checking what it runs starts awl for that alone.
	if len(args) == 1 && (args[0] == "--version" || args[0] == "version") {
		fmt.Fprintln(stdout, currentStamp())
		return 0
	}
	var whole cli
	var run runCLI
	g, grammar := any(&whole), &whole.globals
	if onlyRun(args) {
		// The ordinary `awl run` line needs no kong (fastRun).
		if rewritten, err := rewriteResume(args); err == nil {
			if gl, rc, ok := fastRun(rewritten); ok {
				return runCommand(a, &gl, true, func(store *session.Store) error { return rc.Run(a, store) })
			}
		}
		g, grammar = &run, &run.globals
	}
	parser, err := newParser(g, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "awl:", err)
		return runner.ExitInternal
	}
	defer func() {
		if p := recover(); p != nil {
			ep, ok := p.(exitPanic)
			if !ok {
				panic(p)
			}
			code = ep.code
			if code != 0 {
				code = runner.ExitUsage
			}
		}
	}()
	rewritten, err := rewriteResume(args)
	var kctx *kong.Context
	if err == nil {
		kctx, err = parse(parser, rewritten)
	}
	if err != nil {
		parseFailure(a, args, err)
		fmt.Fprintf(stderr, "awl: %v\n", err)
		if pe := (*parseError)(nil); errors.As(err, &pe) && pe.ctx.Selected() != nil {
			cmd := strings.Fields(pe.ctx.Command())
			words := cmd[:0]
			for _, w := range cmd {
				if !strings.HasPrefix(w, "<") {
					words = append(words, w)
				}
			}
			fmt.Fprintf(stderr, "run 'awl %s --help' for usage\n", strings.Join(words, " "))
		} else if errors.Is(err, errEmptyResume) || errors.Is(err, errEmptyValue) {
			fmt.Fprintln(stderr, "run 'awl run --help' for usage")
		} else {
			fmt.Fprintln(stderr, "run 'awl --help' for usage")
		}
		return runner.ExitUsage
	}
	isRun := strings.HasPrefix(kctx.Command(), "run")
	return runCommand(a, grammar, isRun, func(store *session.Store) error {
		return runSelected(kctx, a, store)
	})
}

// runCommand runs a parsed command with the session store the global flags
// name: the default directory when none, made absolute, so paths in events
// and errors stay right after -C. It returns the exit code. With no
// directory named or found, a command other than run fails here; a run
// (isRun) goes on with a store of no Dir, since a configuration file may
// name one, and fails as a run does, its result event out (noSessionDir).
func runCommand(a *app, grammar *globals, isRun bool, run func(*session.Store) error) int {
	if grammar.SessionDir == "" {
		dir, err := session.DefaultDir(a.getenv)
		if err != nil && !isRun {
			fmt.Fprintln(a.stderr, "awl:", err)
			c, _ := runner.Classify(err)
			return c
		}
		a.noSessionDir = err
		grammar.SessionDir = dir
	}
	if grammar.SessionDir != "" {
		if abs, err := filepath.Abs(grammar.SessionDir); err == nil {
			grammar.SessionDir = abs
		}
	}
	if err := run(&session.Store{Dir: grammar.SessionDir, IsLimit: runner.IsLimit}); err != nil {
		c, _ := runner.Classify(err)
		fmt.Fprintln(a.stderr, "awl:", err)
		return c
	}
	return a.code
}

// newParser builds the kong parser of grammar, a *cli or a *runCLI.
func newParser(grammar any, stdout, stderr io.Writer) (*kong.Kong, error) {
	parser, err := kong.New(grammar,
		kong.Name("awl"),
		kong.Description("awl runs LLM agent prompts to completion, for scripts and CI."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(c int) { panic(exitPanic{c}) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
	)
	if err != nil {
		return nil, err
	}
	fillHelp(parser.Model.Node, "", helpTexts(), providerHelp())
	refuseEmptyValues(parser.Model.Node)
	return parser, nil
}

// emptyHint adds, for some flags, what to use instead of an empty value.
// (Switches, not maps: a package-level map is built by an initialiser at
// every start of awl.)
func emptyHint(flag string) string {
	switch flag {
	case "tools":
		return " (use --no-tools to offer none)"
	case "system":
		return " (awl always sends a system prompt: give --system the text to send)"
	}
	return ""
}

// isRuleList reports the list flags whose values are lists of tool rules,
// split by runner/policy on the commas outside parentheses: a value of
// commas and spaces alone is empty.
func isRuleList(flag string) bool { return flag == "tools" || flag == "deny-tools" }

// refuseEmptyValues makes an empty value a usage error for every flag of
// node and its commands that takes one: `--prompt-file "$FILE"` with $FILE
// unset must not run without the prompt file, nor `--sandbox "$MODE"`
// unconfined. A list flag whose value holds only separators is empty too.
func refuseEmptyValues(node *kong.Node) {
	for _, f := range node.Flags {
		if f.IsBool() || f.IsCounter() {
			continue
		}
		f.Mapper = emptyRefuser{f.Mapper}
	}
	for _, child := range node.Children {
		refuseEmptyValues(child)
	}
}

// emptyRefuser wraps a flag's mapper: it refuses the value the flag is
// about to take when it is empty.
type emptyRefuser struct{ kong.Mapper }

func (m emptyRefuser) Decode(ctx *kong.DecodeContext, target reflect.Value) error {
	if t := ctx.Scan.Peek(); t.IsValue() {
		v, sep := t.String(), ctx.Value.Tag.Sep
		if ctx.Value.IsSlice() && sep != -1 {
			v = strings.TrimSpace(strings.ReplaceAll(v, string(sep), ""))
		}
		if isRuleList(ctx.Value.Name) {
			v = strings.Join(policy.Split(v), ",")
		}
		if v == "" {
			return errors.New("the value is empty" + emptyHint(ctx.Value.Name))
		}
	}
	return m.Mapper.Decode(ctx, target)
}

// textFlag is the long name of arg when it is a flag whose value is free
// text or a path, else "": their next argument is always the value, even
// when it starts with "-" (a prompt that is a Markdown list, an
// --append-system of "-be terse"), which kong would otherwise take for a
// flag.
func textFlag(arg string) string {
	switch arg {
	case "-p":
		return "--prompt"
	case "-f":
		return "--prompt-file"
	case "-C":
		return "--cd"
	case "--prompt", "--prompt-file", "--system", "--append-system", "--model", "--base-url",
		"--image", "--replay", "--mcp-config", "--fork", "--session-id", "--cd":
		return arg
	}
	return ""
}

// errEmptyResume is the usage error for a --resume whose value is empty:
// `--resume="$ID"` with $ID unset must not continue some other session.
var errEmptyResume = errors.New("--resume: the session reference is empty (to continue the latest session, use -c)")

// errEmptyValue is the usage error for --fork or --session-id given an
// empty value.
var errEmptyValue = errors.New("the value is empty")

// rewriteResume normalises arguments before kong sees them. It makes the
// optional value of --resume explicit: `--resume WORD` always takes WORD as
// the session reference when WORD is not a flag; bare `--resume` (last, or
// followed by a flag) means the latest session of the working directory,
// like -c/--continue. An empty reference (`--resume=`, `--resume ""`) is an
// error. And it joins each text flag with its value (see textFlag).
func rewriteResume(args []string) ([]string, error) {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		switch {
		case a == "--resume" || a == "-r":
			switch {
			case i+1 >= len(args) || (strings.HasPrefix(args[i+1], "-") && args[i+1] != "-"):
				out = append(out, "--continue")
			case args[i+1] == "":
				return nil, errEmptyResume
			default:
				out = append(out, "--resume="+args[i+1])
				i++
			}
		case a == "--resume=" || a == "-r=":
			return nil, errEmptyResume
		case (a == "--fork" || a == "--session-id") && i+1 < len(args) && args[i+1] == "", a == "--fork=", a == "--session-id=":
			// An unset "$VAR" must not fall back to a new session or a
			// random id.
			return nil, fmt.Errorf("%s: %w", strings.TrimSuffix(a, "="), errEmptyValue)
		case textFlag(a) != "" && i+1 < len(args) && strings.HasPrefix(args[i+1], "-") && args[i+1] != "-":
			out = append(out, textFlag(a)+"="+args[i+1])
			i++
		default:
			out = append(out, a)
		}
	}
	return out, nil
}

// parseFailure writes the result event (and the step summary) for an
// `awl run` whose flags did not parse: a pipeline reading --output json or
// ndjson always gets its result line, whatever went wrong.
func parseFailure(a *app, args []string, err error) {
	if len(args) == 0 || args[0] != "run" {
		return
	}
	mode := ""
	for i := 1; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			break
		}
		switch {
		case (arg == "-o" || arg == "--output") && i+1 < len(args):
			mode = args[i+1]
			i++
		case strings.HasPrefix(arg, "--output="):
			mode = strings.TrimPrefix(arg, "--output=")
		case strings.HasPrefix(arg, "-o") && len(arg) > 2:
			mode = strings.TrimPrefix(strings.TrimPrefix(arg, "-o"), "=")
		}
	}
	res := runner.Result{Err: runner.Usagef(err.Error())}
	switch mode {
	case "json", "ndjson":
		runner.EmitResult(event.NewEmitter(a.stdout, nil), res, time.Since(a.start))
	}
	writeStepSummary(a, res, runner.ExitUsage)
}
