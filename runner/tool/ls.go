package tool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MaxLsEntries is how many entries ls lists.
const MaxLsEntries = 1000

var lsParams = params{
	{name: "path", kind: kindString, desc: "The directory to list (default: the working directory)."},
}

type lsTool struct{ env Env }

const lsDescription = "List a directory's entries, sorted by name, hidden ones included; directories end in `/`. At most 1000 entries."

type lsArgs struct {
	Path string `json:"path"`
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
	entries, err := os.ReadDir(dir)
	if err != nil && len(entries) == 0 {
		return errorf("ls: %s", pathErr(display, err))
	}
	if len(entries) == 0 {
		return Result{Content: fmt.Sprintf("%s is empty", display)}
	}
	var b strings.Builder
	for i, e := range entries {
		if i == MaxLsEntries {
			fmt.Fprintf(&b, "[showing %d of %d entries; use glob to narrow]\n", MaxLsEntries, len(entries))
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
	return Result{Content: b.String()}
}
