package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/awlrun/awl/session"
)

// Why awl parses with kong's parts and not kong's Parse: kong looks its
// hooks up with reflect's MethodByName and a name it is handed, finds the
// commands that may run on their own the same way in Validate, and runs a
// command after a look at every method of its target. Any one of them,
// reachable anywhere in the program, makes the linker keep every exported
// method of every type that may be put in an interface, used or not: 2.1
// MB of awl's binary and 0.8 MiB of a run's memory (docs/performance.md).
// So parse calls kong's Trace, Reset, Resolve and Apply itself, runs the
// two hooks awl's grammar has, and checks what kong's Validate checks for
// it (validate); runSelected runs the command through an interface.
// TestNoReflectMethod keeps those calls out of the binary,
// TestParseMatchesKong checks that parse parses, fails and helps as kong's
// Parse does, and TestGrammarNeedsNoMore that the grammar uses nothing
// they leave out.

// parseError is a command line kong refused, with the parse that refused
// it: its context names the command, for the usage hint.
type parseError struct {
	error
	ctx *kong.Context
}

func (e *parseError) Unwrap() error { return e.error }

// parse parses args as kong's Parse does, without its reflective lookups.
func parse(parser *kong.Kong, args []string) (*kong.Context, error) {
	kctx, err := kong.Trace(parser, args)
	if err == nil {
		err = kctx.Error
	}
	if err == nil {
		err = beforeReset(parser, kctx)
	}
	if err == nil {
		err = kctx.Reset()
	}
	if err == nil {
		err = kctx.Resolve()
	}
	if err == nil {
		_, err = kctx.Apply()
	}
	if err == nil {
		err = validate(kctx)
	}
	if err != nil {
		return nil, &parseError{err, kctx}
	}
	return kctx, nil
}

// beforeReset runs the BeforeReset hooks of the flags given, in the order
// given, as kong does: kong's --help prints the help of the command and
// exits, --version prints the build stamp and exits. Neither has a default
// or an environment variable, so kong runs no hook for either when it is
// not given.
func beforeReset(parser *kong.Kong, kctx *kong.Context) error {
	for _, p := range kctx.Path {
		if p.Flag == nil {
			continue
		}
		if p.Flag == parser.Model.HelpFlag {
			if err := kctx.PrintUsage(false); err != nil {
				return err
			}
			parser.Exit(0)
			continue
		}
		if v, ok := p.Flag.Target.Interface().(versionFlag); ok {
			if err := v.BeforeReset(parser); err != nil {
				return err
			}
		}
	}
	return nil
}

// validate checks an applied parse as kong's Validate does, in the same
// order and words, for what awl's grammar uses: the values of enum flags
// and arguments, required flags, and a command or required argument
// missing. The grammar has no xor or and groups, no environment
// variables, no validators and no resolvers.
func validate(kctx *kong.Context) error {
	for _, p := range kctx.Path {
		if n := p.Node(); n != nil {
			for _, v := range n.Values() {
				// An enum given is checked below; kong checks here one
				// not given when it may be left out.
				if v.Enum != "" && (!v.Required || v.HasDefault) {
					if err := checkEnum(v); err != nil {
						return err
					}
				}
			}
		}
	}
	for _, p := range kctx.Path {
		v := p.Positional
		if p.Flag != nil {
			v = p.Flag.Value
		}
		if v != nil && v.Tag.Enum != "" {
			if err := checkEnum(v); err != nil {
				return err
			}
		}
		if err := checkRequiredFlags(p.Flags); err != nil {
			return err
		}
	}
	node := kctx.Selected()
	if node == nil {
		node = kctx.Model.Node
	}
	return checkMissing(node)
}

// checkEnum refuses a value that is not one of its enum's.
func checkEnum(v *kong.Value) error {
	got := fmt.Sprint(v.Target.Interface())
	enums := v.EnumSlice()
	if slices.Contains(enums, got) {
		return nil
	}
	quoted := make([]string, len(enums))
	for i, e := range enums {
		quoted[i] = strconv.Quote(e)
	}
	return fmt.Errorf("%s must be one of %s but got %q", v.ShortSummary(), strings.Join(quoted, ","), got)
}

// checkRequiredFlags refuses a parse that leaves a required flag out.
func checkRequiredFlags(flags []*kong.Flag) error {
	var missing []string
	for _, f := range flags {
		if f.Required && !f.Set {
			missing = append(missing, f.Summary())
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	return fmt.Errorf("missing flags: %s", strings.Join(missing, ", "))
}

// checkMissing refuses a parse that ends at node while a required
// argument of node is missing, or a command when node cannot run itself.
func checkMissing(node *kong.Node) error {
	var missing, args []string
	for _, a := range node.Positional {
		if a.Required && !a.Set {
			args = append(args, a.Summary())
		}
	}
	if len(args) > 0 {
		missing = append(missing, strconv.Quote(strings.Join(args, " ")))
	}
	if !runnable(node) {
		for _, c := range node.Children {
			if !c.Hidden {
				missing = append(missing, strconv.Quote(c.Name))
			}
		}
	}
	// kong cuts a list of more than five short, as awl's commands are.
	if len(missing) > 5 {
		missing = append(missing[:5], "...")
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("expected %s", missing[0])
	}
	return fmt.Errorf("expected one of %s", strings.Join(missing, ", "))
}

// appRunner and storeRunner are the two shapes of a command's Run: with
// the app, and with the session store too.
type (
	appRunner   interface{ Run(*app) error }
	storeRunner interface {
		Run(*app, *session.Store) error
	}
)

// runnable tells whether node is a command that runs.
func runnable(node *kong.Node) bool {
	if !node.Target.IsValid() || !node.Target.CanAddr() {
		return false
	}
	switch node.Target.Addr().Interface().(type) {
	case appRunner, storeRunner:
		return true
	}
	return false
}

// runSelected runs the command kctx selected, as kong's Run does with the
// app and the store bound (TestEveryCommandRuns).
func runSelected(kctx *kong.Context, a *app, store *session.Store) error {
	node := kctx.Selected()
	if node == nil {
		return errors.New("no command selected")
	}
	switch c := node.Target.Addr().Interface().(type) {
	case *runCmd:
		c.given = givenOf(kctx)
		// A run waits for the signals where it may block (prepare).
		return c.Run(a, store)
	case storeRunner:
		awaitSignals(a.ctx)
		return c.Run(a, store)
	case appRunner:
		awaitSignals(a.ctx)
		return c.Run(a)
	}
	return fmt.Errorf("no Run() method found in hierarchy of %s", node.Summary())
}
