package main

import (
	"slices"

	"github.com/alecthomas/kong"

	"github.com/awlrun/awl/cmd/awl/config"
)

// Adding a flag to `awl run`, with its configuration key, is a change in
// one place: the field in runCmd (run.go), with kong's tags and a config
// tag saying what a configuration file may do with it (keyClass below:
// "free", "trusted", "min", "limit", "allow", "deny", "sandbox", "narrow",
// or "-" for a flag that is no key; ",path" after the class when the value
// is a path). Then run
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
// runCmd's config tag says (config.Class). A user file, a file named by
// --config or AWL_CONFIG and a trusted project file may set every key but
// keyNone's; an untrusted project file only narrows what the run may do,
// as the class says, and is refused a keyTrusted key (exit 4). A flag
// whose value is a path adds ",path" to its tag (`config:"trusted,path"`):
// a relative path in a file is taken from the file's place.
type keyClass = config.Class

const (
	// keyNone (`config:"-"`) is a flag with no key: it names this run
	// alone (--resume, --session-id, --replay), or the configuration
	// itself (--config, --profile).
	keyNone = config.None
	// keyFree (`config:"free"`) may be set by any file: the model, the
	// prompt text, how output looks.
	keyFree = config.Free
	// keyTrusted (`config:"trusted"`) may send the key elsewhere, run a
	// command outside the model's confined tools, read or write a path of
	// the file's choosing, or loosen the sandbox.
	keyTrusted = config.Trusted
	// keyMin (`config:"min"`) is a limit where 0 is a value: the smaller
	// counts.
	keyMin = config.Min
	// keyLimit (`config:"limit"`) is a limit where 0 means none.
	keyLimit = config.Limit
	// keyAllow (`config:"allow"`) is an allow list: lists intersect.
	keyAllow = config.Allow
	// keyDeny (`config:"deny"`) is a deny list: lists add up.
	keyDeny = config.Deny
	// keySandbox (`config:"sandbox"`) is the sandbox mode: the stricter
	// counts.
	keySandbox = config.Sandbox
	// keyNarrow (`config:"narrow"`) is a switch that narrows when on
	// (--no-tools, --mcp-strict): a project file may turn it on only.
	keyNarrow = config.Narrow
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
