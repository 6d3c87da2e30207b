package main

import (
	"slices"

	"github.com/alecthomas/kong"
)

// Adding a flag to `awl run`, with its configuration key, is a change in
// one place: the field in runCmd (run.go), with kong's tags and a config
// tag saying what a configuration file may do with it (keyClass below:
// "free", "trusted", "min", "limit", "allow", "deny", "sandbox", "narrow",
// or "-" for a flag that is no key). Then run
//
//	UPDATE_GOLDEN=1 go test -run TestRunFlagsAreTheTags ./cmd/awl
//
// which writes runFlagTable (fastrun_flags.go) from the tags. The fast
// parser, the record of the flags given (givenFlags), the configuration
// key of the flag's name and its AWL_ variable all read that table; a
// field without a config tag fails TestRunFlagsAreTheTags. A flag that is
// secret-bearing or names a path, a command or an endpoint is "trusted":
// an untrusted project file that sets it is refused (docs/config.md).

// keyClass is what a configuration file may do with a run flag's key, as
// runCmd's config tag says. A user file, a file named by --config or
// AWL_CONFIG and a trusted project file may set every key but keyNone; an
// untrusted project file only narrows what the run may do, as the class
// says.
type keyClass uint8

const (
	// keyNone (`config:"-"`) is a flag with no key: it names this run
	// alone (--resume, --session-id, --replay).
	keyNone keyClass = iota
	// keyFree (`config:"free"`) may be set by any file: the model, the
	// prompt text, how output looks.
	keyFree
	// keyTrusted (`config:"trusted"`) may send the key elsewhere, run a
	// command outside the model's confined tools, read or write a path of
	// the file's choosing, or loosen the sandbox: an untrusted project
	// file that sets it is refused with exit 4.
	keyTrusted
	// keyMin (`config:"min"`) is a limit where 0 is a value: an untrusted
	// project file's value counts only when smaller.
	keyMin
	// keyLimit (`config:"limit"`) is a limit where 0 means none: an
	// untrusted project file's value counts when it is a limit where there
	// was none, or a smaller one.
	keyLimit
	// keyAllow (`config:"allow"`) is an allow list: an untrusted project
	// file's list intersects the one below it.
	keyAllow
	// keyDeny (`config:"deny"`) is a deny list: an untrusted project
	// file's entries are added.
	keyDeny
	// keySandbox (`config:"sandbox"`) is the sandbox mode: an untrusted
	// project file's mode counts only when stricter.
	keySandbox
	// keyNarrow (`config:"narrow"`) is a switch that narrows when on
	// (--no-tools, --mcp-strict): an untrusted project file may turn it
	// on, never off.
	keyNarrow
)

// keyClasses are the config tag's words, by class.
var keyClasses = [...]string{
	keyNone: "-", keyFree: "free", keyTrusted: "trusted", keyMin: "min", keyLimit: "limit",
	keyAllow: "allow", keyDeny: "deny", keySandbox: "sandbox", keyNarrow: "narrow",
}

// givenFlags is the record of which flags a command line gave, by long
// name (a short flag by its long name), each once, sorted: a flag repeated
// is given once, a bool given "=false" is given. Built once for a parse,
// by fastRun and by givenOf for kong's, and the same for the same command
// line (TestGivenFlagsMatch). Configuration files and AWL_ variables set
// only what no flag gave; --session-dir is recorded with the run's flags.
type givenFlags struct {
	names []string
}

// has tells whether the flag --name was given.
func (g givenFlags) has(name string) bool {
	_, ok := slices.BinarySearch(g.names, name)
	return ok
}

// add records that --name was given.
func (g *givenFlags) add(name string) {
	if i, ok := slices.BinarySearch(g.names, name); !ok {
		g.names = slices.Insert(g.names, i, name)
	}
}

// givenOf is the record of the flags a kong parse gave: the flags on its
// path, the global ones included. kong puts a flag on the path each time
// it is given, and a flag a resolver set (awl has none) as Resolved.
func givenOf(kctx *kong.Context) givenFlags {
	var g givenFlags
	for _, p := range kctx.Path {
		if p.Flag != nil && !p.Resolved {
			g.add(p.Flag.Name)
		}
	}
	return g
}
