// Package tool holds awl's built-in tools: bash, read, write, edit, ls, glob,
// grep and view_image. The model calls them unattended, so a tool never asks,
// never hangs past its limits, and turns every mistake (bad arguments, a
// missing file, a non-zero exit) into a Result with IsError set rather than a
// panic or a Go error.
package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/awlrun/awl/conv"
)

// Tool is one tool the model can call. Run may be called concurrently from
// several goroutines; a tool keeps no state between calls.
type Tool interface {
	// Name is the name the model calls the tool by.
	Name() string
	// Description is what the model is told the tool does.
	Description() string
	// Schema is the JSON Schema of the input object: type object,
	// properties, required, additionalProperties false. Its bytes are
	// stable from call to call, so requests that carry it cache well.
	Schema() json.RawMessage
	// ReadOnly reports whether the tool only looks: it changes no file,
	// starts no process and has no other effect a later call could see.
	// Calls to read-only tools of one model turn may run at the same time;
	// every other call runs alone, in the order the model gave. A tool
	// that cannot promise this (a shell, an MCP tool) says false.
	ReadOnly() bool
	// Run runs one call. It returns when the call is done or ctx is done,
	// whichever is first.
	Run(ctx context.Context, input json.RawMessage) Result
}

// Result is a tool result: Content goes back to the model; IsError marks a
// failed call.
type Result struct {
	Content     string
	IsError     bool
	Attachments []conv.Attachment
	// ExitCode is a command's exit code (bash), nil for other tools and
	// for a command that did not exit on its own (killed, timed out).
	ExitCode *int
}

// Env is what tools run against.
type Env struct {
	// Dir is the working directory; relative paths resolve against it.
	// Empty means the process's working directory.
	Dir string
	// Getenv looks up environment variables (HOME, for `~/` paths). It may
	// be nil, in which case `~` is not expanded.
	Getenv func(string) string
	// MaxBashTimeout caps the timeout the model may ask bash for; 0 means
	// DefaultMaxBashTimeout.
	MaxBashTimeout time.Duration
	// Environ is the environment bash runs with; nil means the process's
	// own, as it is. The caller keeps secrets out of it (ScrubEnviron):
	// cmd/awl passes awl's environment without its secret variables.
	Environ []string
	// Confine, when set, confines what tools change: the processes they
	// start and the files they write (the sandbox).
	Confine Confiner
	// Paths, when set, judges every path a tool opens, at the moment it
	// opens it, by where it really lies (the rules of --tools and
	// --deny-tools, runner/policy).
	Paths PathPolicy
}

// PathPolicy judges the paths tools open. A tool asks it with the path of
// what it has just opened, symbolic links resolved by the kernel, so a link
// swapped after an earlier check cannot lead it elsewhere: a file to read
// is judged once open and before a byte of it is read, a file to write by
// the directory the write happens in, open, and the name in it.
type PathPolicy interface {
	// PathDenied returns nil when the tool may open the absolute path,
	// or the error to give the model.
	PathDenied(tool, path string) error
}

// policyDenied is a path the PathPolicy refused.
type policyDenied struct{ err error }

func (e *policyDenied) Error() string { return e.err.Error() }
func (e *policyDenied) Unwrap() error { return e.err }

// judgeFD judges, by Paths, the file a tool opened as name (descriptor
// fd), where it really lies; nil when there are no path rules.
func (e Env) judgeFD(tool string, fd uintptr, name string) error {
	if e.Paths == nil {
		return nil
	}
	real, err := fdPath(fd, name)
	if err != nil {
		return &policyDenied{fmt.Errorf("%s: %s: cannot tell where it lies, and path rules are set: %v", tool, name, err)}
	}
	if err := e.Paths.PathDenied(tool, real); err != nil {
		return &policyDenied{err}
	}
	return nil
}

// judgeIn judges, by Paths, the file name in the open directory dir that
// a tool is about to write.
func (e Env) judgeIn(tool string, dir *os.File, name string) error {
	if e.Paths == nil {
		return nil
	}
	real, err := fdPath(dir.Fd(), dir.Name())
	if err != nil {
		return &policyDenied{fmt.Errorf("%s: %s: cannot tell where it lies, and path rules are set: %v", tool, dir.Name(), err)}
	}
	if err := e.Paths.PathDenied(tool, filepath.Join(real, name)); err != nil {
		return &policyDenied{err}
	}
	return nil
}

// dirJudge returns the judge of each directory a walk of tool opens, nil
// without path rules.
func (e Env) dirJudge(tool string) func(f *os.File) error {
	if e.Paths == nil {
		return nil
	}
	return func(f *os.File) error { return e.judgeFD(tool, f.Fd(), f.Name()) }
}

// writeRootsOrAll returns the directories writes must stay beneath; with
// path rules and no confinement, the whole tree, so that the write goes
// through writeBeneath's open directory and is judged there.
func (e Env) writeRootsOrAll() []string {
	roots := e.writeRoots()
	if roots == nil && e.Paths != nil {
		roots = []string{"/"}
	}
	return roots
}

// Confiner confines tools (the sandbox). Anything that starts a process for
// the model, not only bash, starts it through Start.
type Confiner interface {
	// Start starts cmd confined, in place of cmd.Start. cmd.Env nil
	// means awl's environment.
	Start(cmd *exec.Cmd) error
	// CheckWrite returns nil when a tool may write the absolute path, or
	// the error to give the model after the path as the model wrote it.
	CheckWrite(path string) error
	// Note is the line added to a failed result of a confined command,
	// saying what the confinement blocks.
	Note() string
}

// WriteRooter is a Confiner whose write and edit tools must write beneath
// directories: they open the file's directory beneath one of them and
// write through that descriptor, so that a symbolic link swapped in after
// CheckWrite cannot lead the write out.
type WriteRooter interface {
	// WriteRoots are the absolute directories, symbolic links resolved,
	// that writes stay beneath.
	WriteRoots() []string
}

// DirChecker is a WriteRooter that also judges the directory a write or
// an edit lands in, once it is open: by what the directory is, not by the
// path it was reached by. A path CheckWrite allowed can lead elsewhere a
// moment later (a link in it swapped by a confined process: `sub -> .`,
// then `sub -> .git`); the descriptor cannot, and the temporary file and
// the rename happen in it.
type DirChecker interface {
	// CheckDir returns nil when a tool may create and rename files in
	// dir, an open directory beneath a write root, or the error to give
	// after the path as the model wrote it, as CheckWrite's.
	CheckDir(dir *os.File) error
}

// dirDenied is a directory a DirChecker refused.
type dirDenied struct{ err error }

func (e *dirDenied) Error() string { return e.err.Error() }
func (e *dirDenied) Unwrap() error { return e.err }

// dirGuard returns the check of each directory writeBeneath opens, nil
// when the confinement makes none; the error it returns is a *dirDenied.
func (e Env) dirGuard() func(dir *os.File) error {
	c, ok := e.Confine.(DirChecker)
	if !ok {
		return nil
	}
	return func(dir *os.File) error {
		if err := c.CheckDir(dir); err != nil {
			return &dirDenied{err}
		}
		return nil
	}
}

// writeError is the failed result of a write through writeBeneath that
// failed with err, or ok false when err is not a refusal of the
// confinement's.
func (e Env) writeError(name, path string, err error) (Result, bool) {
	var dd *dirDenied
	var pd *policyDenied
	switch {
	case errors.As(err, &pd):
		return errorf("%v", pd.err), true
	case errors.As(err, &dd):
		return errorf("%s: %s: %v", name, path, dd.err), true
	case errors.Is(err, errOutside) && e.Confine == nil:
		return errorf("%s: %s: a symbolic link on the way changed while it was written; not written", name, path), true
	case errors.Is(err, errOutside):
		return e.denied(name, path), true
	}
	return Result{}, false
}

// writeRoots returns the directories writes must stay beneath, nil when
// writes are not confined.
func (e Env) writeRoots() []string {
	if r, ok := e.Confine.(WriteRooter); ok {
		return r.WriteRoots()
	}
	return nil
}

// denied is the failed result of a write the confinement refused.
func (e Env) denied(name, path string) Result {
	return errorf("%s: %s: Permission denied\n%s", name, path, e.Confine.Note())
}

// checkWrite returns a failed result, and true, when the confinement does
// not allow the tool name to write the file the model called path.
func (e Env) checkWrite(name, path string) (Result, bool) {
	if e.Confine == nil {
		return Result{}, false
	}
	if err := e.Confine.CheckWrite(e.resolve(path)); err != nil {
		return errorf("%s: %s: %v", name, path, err), true
	}
	return Result{}, false
}

// ScrubEnviron returns environ without the variables named in secrets: a
// model that ran `env` would otherwise copy an API key into the session
// log.
func ScrubEnviron(environ []string, secrets ...string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(secrets, name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Builtins returns every built-in tool, in a stable order: bash, read, write,
// edit, ls, glob, grep, view_image.
func Builtins(env Env) []Tool {
	return []Tool{
		newBuiltin("bash", mutating, bashDescription, bashParams, bashTool{env}.run),
		newBuiltin("read", readOnly, readDescription, readParams, readTool{env}.run),
		newBuiltin("write", mutating, writeDescription, writeParams, writeTool{env}.run),
		newBuiltin("edit", mutating, editDescription, editParams, editTool{env}.run),
		newBuiltin("ls", readOnly, lsDescription, lsParams, lsTool{env}.run),
		newBuiltin("glob", readOnly, globDescription, globParams, globTool{env}.run),
		newBuiltin("grep", readOnly, grepDescription, grepParams, grepTool{env}.run),
		newBuiltin("view_image", readOnly, viewImageDescription, viewImageParams, viewImageTool{env}.run),
	}
}

// Whether a built-in tool is read-only (see Tool.ReadOnly).
const (
	readOnly = true
	mutating = false
)

// builtin is a Tool whose arguments decode into an A before run sees them.
type builtin[A any] struct {
	name, desc string
	readOnly   bool
	params     params
	run        func(context.Context, A) Result
	// schema is params' JSON Schema, made at the first Schema call: a
	// run builds the tools twice (for its policy, then to offer them)
	// and asks only the second set.
	schemaOnce sync.Once
	schema     json.RawMessage
}

func newBuiltin[A any](name string, ro bool, desc string, ps params, run func(context.Context, A) Result) *builtin[A] {
	return &builtin[A]{name: name, readOnly: ro, desc: desc, params: ps, run: run}
}

func (b *builtin[A]) Name() string        { return b.name }
func (b *builtin[A]) Description() string { return b.desc }
func (b *builtin[A]) Schema() json.RawMessage {
	b.schemaOnce.Do(func() { b.schema = b.params.schema() })
	return slices.Clone(b.schema)
}
func (b *builtin[A]) ReadOnly() bool { return b.readOnly }

// Run checks input against the tool's params; bad arguments come back as an
// error result naming the tool and what was wrong.
func (b *builtin[A]) Run(ctx context.Context, input json.RawMessage) Result {
	var in A
	if err := b.params.decode(input, &in); err != nil {
		return errorf("%s: %v", b.name, err)
	}
	return b.run(ctx, in)
}

// errorf returns a failed Result whose content is the formatted message.
func errorf(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// resolve turns a path the model gave into a path on disk: `~/…` under HOME
// when Getenv is set, absolute paths as they are, anything else under Dir.
func (e Env) resolve(p string) string {
	if e.Getenv != nil && (p == "~" || strings.HasPrefix(p, "~/")) {
		if home := e.Getenv("HOME"); home != "" {
			return filepath.Join(home, p[1:])
		}
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	dir := e.Dir
	if dir == "" {
		dir = "."
	}
	return filepath.Join(dir, p)
}
