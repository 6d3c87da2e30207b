package policy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// FuzzBash runs every command the judge allows through mvdan.cc/sh's own
// interpreter, whose handlers record each simple command it would call
// (builtins and functions included) and each file it would open for
// writing, and run nothing: every command recorded must be one the rules
// allow, none one a deny rule matches, and every file written one the
// write rules allow.
func FuzzBash(f *testing.F) {
	for _, c := range bashCases {
		f.Add(c.cmd)
	}
	for _, s := range []string{
		"x='a[$(rm x)]'; echo $((x))",
		"f() { rm x; }; git status && f",
		"eval \"$(echo rm x)\"",
		"echo $(git status) > src/a",
		"for c in rm; do $c x; done",
		"set -- rm x; \"$@\"",
		"IFS=/; echo a/b",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	p := mustNew(f, Options{Allow: strict.Allow, Deny: strict.Deny, Dir: dir})
	f.Fuzz(func(t *testing.T, cmd string) {
		wd := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("HANG %q", cmd)) })
		defer wd.Stop()
		if p.Bash(cmd) != nil {
			return
		}
		file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
		if err != nil {
			t.Fatalf("%q: allowed, but the interpreter's parser refuses it: %v", cmd, err)
		}
		var mu sync.Mutex // a pipeline's commands run at once
		var calls [][]string
		var writes []string
		r, err := interp.New(
			interp.Dir(dir),
			interp.Env(expand.ListEnviron("HOME="+dir, "PATH=/usr/bin:/bin")),
			interp.StdIO(strings.NewReader(""), io.Discard, io.Discard),
			interp.CallHandler(func(ctx context.Context, args []string) ([]string, error) {
				mu.Lock()
				calls = append(calls, slices.Clone(args))
				mu.Unlock()
				return args, nil
			}),
			interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
				return func(context.Context, []string) error { return nil }
			}),
			interp.OpenHandler(func(ctx context.Context, path string, flag int, _ os.FileMode) (io.ReadWriteCloser, error) {
				if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
					if !filepath.IsAbs(path) {
						path = filepath.Join(interp.HandlerCtx(ctx).Dir, path)
					}
					mu.Lock()
					writes = append(writes, path)
					mu.Unlock()
					return nopFile{}, nil
				}
				return nil, errors.New("no reading in the oracle")
			}),
			interp.ReadDirHandler2(func(context.Context, string) ([]os.DirEntry, error) { return nil, nil }),
		)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		r.Run(ctx, file)
		mu.Lock()
		defer mu.Unlock()
		for _, c := range calls {
			if d := concrete(p, c); d != "" {
				t.Errorf("%q: allowed, but the interpreter calls %q: %s", cmd, c, d)
			}
		}
		for _, w := range writes {
			if w == "/dev/null" || w == "/dev/stdout" || w == "/dev/stderr" {
				continue
			}
			if d := p.CheckPath("write", w); d != nil {
				t.Errorf("%q: allowed, but the interpreter writes %s: %v", cmd, w, d)
			}
		}
	})
}

// concrete judges a command the interpreter called, its words known: ""
// when the rules allow it.
func concrete(p *Policy, words []string) string {
	args := make([]arg, len(words))
	for i, w := range words {
		args[i] = arg{s: w, static: true}
	}
	cmds, why := unwrap(nil, args)
	if why != "" {
		return why
	}
	for _, c := range cmds {
		for _, r := range p.deny {
			if r.cmd != nil && r.cmd.deniedBy(c, 0) {
				return "deny rule " + r.Text
			}
		}
		ok := p.bashAllowed
		for _, r := range p.allow {
			ok = ok || r.cmd != nil && r.cmd.match(c, false)
		}
		if !ok {
			return "no allow rule"
		}
	}
	return ""
}

type nopFile struct{}

func (nopFile) Read([]byte) (int, error)    { return 0, io.EOF }
func (nopFile) Write(b []byte) (int, error) { return len(b), nil }
func (nopFile) Close() error                { return nil }
