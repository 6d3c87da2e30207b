package tool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MaxLsEntries is how many entries ls lists.
const MaxLsEntries = 1000

var lsParams = params{
	{name: "path", kind: kindString, desc: "The directory to list (default: the working directory)."},
	{name: "include_ignored", kind: kindBoolean, desc: "Also list entries that .gitignore, .git/info/exclude or .ignore exclude, and .git (default false)."},
}

type lsTool struct{ env Env }

const lsDescription = "List a directory's entries, sorted by name, hidden ones included; directories end in `/`. At most 1000 entries. " +
	"Entries that git ignores (.gitignore, .git/info/exclude) or an .ignore file excludes are left out, and so is .git; " +
	"the listing says how many, and include_ignored lists them."

type lsArgs struct {
	Path           string `json:"path"`
	IncludeIgnored bool   `json:"include_ignored"`
}

func (t lsTool) run(ctx context.Context, in lsArgs) Result {
	display := in.Path
	if display == "" {
		display = "."
	}
	dir := t.env.resolve(display)
	if res, ok := checkDir("ls", dir, display); !ok {
		return res
	}
	entries, err := t.readDir(dir)
	var pd *policyDenied
	if errors.As(err, &pd) {
		return errorf("%v", pd.err)
	}
	if err != nil && len(entries) == 0 {
		return errorf("ls: %s", pathErr(display, err))
	}
	hidden := 0
	if !in.IncludeIgnored {
		rules := rootIgnoreRules(dir).push(dir, 0, func(name string) bool {
			return slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == name })
		})
		var scratch []string
		kept := entries[:0]
		for _, e := range entries {
			isDir := e.IsDir()
			if (isDir && e.Name() == ".git") || rules.ignored([]string{e.Name()}, isDir, &scratch) {
				hidden++
				continue
			}
			kept = append(kept, e)
		}
		entries = kept
	}
	var b strings.Builder
	if len(entries) == 0 {
		fmt.Fprintf(&b, "%s is empty", display)
		if hidden > 0 {
			fmt.Fprintf(&b, " but for %s that are ignored; include_ignored: true lists them", count(hidden, "entry", "entries"))
		}
		return Result{Content: b.String()}
	}
	for i, e := range entries {
		if i == MaxLsEntries {
			fmt.Fprintf(&b, "[showing %d of %d entries; %d more not shown: use glob to narrow]\n", MaxLsEntries, len(entries), len(entries)-MaxLsEntries)
			break
		}
		if ctx.Err() != nil {
			return errorf("ls: stopped: %v", context.Cause(ctx))
		}
		b.WriteString(e.Name())
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			// A link to a directory lists like one.
			if st, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && st.IsDir() {
				isDir = true
			}
		}
		if isDir {
			b.WriteByte('/')
		}
		b.WriteByte('\n')
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "[%s not listed: ignored; include_ignored: true lists them]\n", count(hidden, "entry", "entries"))
	}
	return Result{Content: b.String()}
}

// readDir reads dir as os.ReadDir does, the directory judged by the path
// rules once open.
func (t lsTool) readDir(dir string) ([]os.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := t.env.judgeFD("ls", f.Fd(), f.Name()); err != nil {
		return nil, err
	}
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}
