package tool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// MaxGlobResults is how many paths glob lists.
const MaxGlobResults = 1000

var globParams = params{
	{name: "pattern", kind: kindString, required: true, desc: "The glob pattern, e.g. `**/*.go` or `src/*/testdata/*.json`. `*`, `?` and `[…]` match within one path segment; `**` matches any number of directories."},
	{name: "path", kind: kindString, desc: "The directory to search from (default: the working directory)."},
	{name: "include_ignored", kind: kindBoolean, desc: "Also list files that .gitignore, .git/info/exclude or .ignore exclude (default false)."},
}

type globTool struct{ env Env }

const globDescription = "Find files whose path matches a glob pattern. `*`, `?` and `[…]` match within a path segment and `**` across directories. " +
	"Paths are relative to the search directory, sorted, at most 1000; only files are listed. " +
	"Files that git ignores (.gitignore, .git/info/exclude) or an .ignore file excludes are skipped, and so are .git directories, " +
	"unless the path or the pattern's leading directories name them; include_ignored lists them all."

type globArgs struct {
	Pattern        string `json:"pattern"`
	Path           string `json:"path"`
	IncludeIgnored bool   `json:"include_ignored"`
}

func (t globTool) run(ctx context.Context, in globArgs) Result {
	pat, err := parsePattern(filepath.ToSlash(in.Pattern))
	if err != nil {
		return errorf("glob: %v", err)
	}
	display := in.Path
	if display == "" {
		display = "."
	}
	root := t.env.resolve(display)
	abs := strings.HasPrefix(in.Pattern, "/")
	if abs {
		// An absolute pattern searches from / and lists absolute paths.
		root, display = "/", "/"
	}
	if res, ok := checkDir("glob", root, display); !ok {
		return res
	}

	lit, rest := pat.literalPrefix()
	prefix := path.Join(lit...)
	if abs {
		prefix = "/" + prefix
	}
	var b strings.Builder
	shown, total := 0, 0
	add := func(rel string) {
		total++
		if shown < MaxGlobResults {
			shown++
			b.WriteString(rel)
			b.WriteByte('\n')
		}
	}
	if len(rest) == 0 {
		// No wildcard: the pattern names one path.
		if st, err := os.Stat(filepath.Join(root, filepath.FromSlash(prefix))); err == nil && !st.IsDir() {
			add(prefix)
		}
	} else {
		base := filepath.Join(root, filepath.FromSlash(prefix))
		join := func(rel string) string { return rel }
		if prefix != "" {
			join = func(rel string) string { return path.Join(prefix, rel) }
		}
		opts := walkOpts{includeIgnored: in.IncludeIgnored, descend: rest.mayMatchUnder, judge: t.env.dirJudge("glob")}
		err := walkFiles(ctx, base, opts, func(rel string, _ fs.DirEntry) error {
			if rest.matchPath(rel) {
				add(join(rel))
			}
			return nil
		})
		var pd *policyDenied
		switch {
		case errors.As(err, &pd):
			return errorf("%v", pd.err)
		case errors.Is(err, fs.ErrNotExist):
			// The literal part of the pattern names no directory.
		case ctx.Err() != nil:
			return errorf("glob: stopped: %v", context.Cause(ctx))
		case err != nil:
			return errorf("glob: %s", pathErr(path.Join(display, prefix), err))
		}
	}
	if total == 0 {
		return Result{Content: fmt.Sprintf("no files match %s in %s", in.Pattern, display)}
	}
	if total > shown {
		fmt.Fprintf(&b, "[showing %d of %d matches; %d more not shown: narrow the pattern or the path]\n", shown, total, total-shown)
	}
	return Result{Content: b.String()}
}

// checkDir makes sure dir is a directory for tool name, naming it display in
// the result when it is not.
func checkDir(name, dir, display string) (Result, bool) {
	st, err := os.Stat(dir)
	if err != nil {
		return errorf("%s: %s", name, pathErr(display, err)), false
	}
	if !st.IsDir() {
		return errorf("%s: %s is not a directory", name, display), false
	}
	return Result{}, true
}
