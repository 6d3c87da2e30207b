package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/awlrun/awl/internal/atomicfile"
	"github.com/awlrun/awl/runner"
)

// schemaRef is --output-schema's value. Set tells an empty value (a script
// passing an unset variable) from an absent flag.
type schemaRef struct {
	Set bool
	Ref string
}

// Decode implements kong.MapperValue.
func (s *schemaRef) Decode(ctx *kong.DecodeContext) error {
	s.Set = true
	return ctx.Scan.PopValueInto("file", &s.Ref)
}

// readSchema reads the schema into st once: early by readSchemaFile, or
// with the prompt.
func (c *runCmd) readSchema(ctx context.Context, a *app, st *runSetup) error {
	if st.schemaRead {
		return nil
	}
	var err error
	st.schema, err = c.loadSchema(ctx, a)
	st.schemaRead = true
	return err
}

// readSchemaFile reads --output-schema FILE (or refuses an empty value)
// before the provider is opened, so that a schema given wrong is exit 2
// before its credentials are looked for; a schema from stdin (-) is read
// with the prompt, after every other check.
func (c *runCmd) readSchemaFile(ctx context.Context, a *app, st *runSetup) error {
	if ref := c.OutputSchema.Ref; ref == "-" || ref == "none" || (ref == "" && !c.OutputSchema.Set) {
		return nil
	}
	awaitSignals(a.ctx) // the file may be a pipe
	return c.readSchema(ctx, a, st)
}

// loadSchema reads and compiles --output-schema before anything is sent.
// "-" reads the schema from stdin, which then cannot also carry the
// prompt; "none" is no schema (and drops a resumed session's).
func (c *runCmd) loadSchema(ctx context.Context, a *app) (*runner.OutputSchema, error) {
	var data []byte
	ref := c.OutputSchema.Ref
	switch {
	case c.OutputSchema.Set && ref == "":
		return nil, runner.Usagef("--output-schema: the value is empty (a schema file, - for stdin, or none)")
	case ref == "" && len(c.recordedSchema) > 0:
		// A replay validates against the recording's schema unless told
		// otherwise, so its gate gives the recorded feedback again.
		s, err := runner.CompileOutputSchema(c.recordedSchema)
		if err != nil {
			return nil, runner.Usagef(fmt.Sprintf("--replay: the recording's output schema: %v", err))
		}
		return s, nil
	case ref == "", ref == "none":
		return nil, nil
	case ref == "-":
		if c.NoStdin || c.Stdin || c.PromptFile == "-" || strings.TrimSpace(strings.Join(c.Args, " ")+c.Prompt+c.PromptFile) == "" {
			return nil, runner.Usagef("--output-schema - reads the schema from stdin, so the prompt must come from arguments, -p or -f FILE (and not --stdin or --no-stdin)")
		}
		s, _, err := readStdin(ctx, a.stdin, 0, wrap{})
		if err != nil {
			return nil, err
		}
		data = []byte(s)
		c.NoStdin = true // stdin is spent: the prompt comes from elsewhere
	default:
		var err error
		data, err = os.ReadFile(ref)
		if err != nil {
			return nil, runner.Usagef(fmt.Sprintf("--output-schema: %v", err))
		}
	}
	s, err := runner.CompileOutputSchema(data)
	if err != nil {
		return nil, runner.Usagef(fmt.Sprintf("--output-schema %s: %v", ref, err))
	}
	return s, nil
}

// checkLastMessage refuses an --output-last-message FILE that could never
// be written (its directory is missing, or FILE is a directory) before the
// run spends anything.
func (c *runCmd) checkLastMessage() error {
	if c.OutputLastMessage == "" {
		return nil
	}
	if fi, err := os.Stat(c.OutputLastMessage); err == nil && fi.IsDir() {
		return runner.Usagef(fmt.Sprintf("--output-last-message %s: is a directory", c.OutputLastMessage))
	}
	dir := filepath.Dir(c.OutputLastMessage)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return runner.Usagef(fmt.Sprintf("--output-last-message %s: no directory %s", c.OutputLastMessage, dir))
	}
	return nil
}

// writeLastMessage writes the final answer of a successful run to
// --output-last-message: the JSON value with a schema, the text otherwise,
// ending in a newline. It replaces the file whole (a temporary file
// renamed into place), so a reader never sees half of it.
func (c *runCmd) writeLastMessage(a *app, res runner.Result) {
	if c.OutputLastMessage == "" || res.Err != nil {
		return
	}
	text := res.Text
	if res.Structured != nil {
		text = string(res.Structured)
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if err := atomicfile.Write(c.OutputLastMessage, []byte(text), 0o644); err != nil {
		fmt.Fprintln(a.stderr, "awl: --output-last-message:", err)
	}
}
