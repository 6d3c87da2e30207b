package tool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Glob limits.
const (
	// MaxGlobResults is how many paths glob lists.
	MaxGlobResults = 1000
	// maxGlobScan is how many matches glob collects before it stops
	// counting.
	maxGlobScan = 100_000
)

var globParams = params{
	{name: "pattern", kind: kindString, required: true, desc: "The glob pattern, e.g. `**/*.go` or `src/*/testdata/*.json`. `*`, `?` and `[…]` match within one path segment; `**` matches any number of directories."},
	{name: "path", kind: kindString, desc: "The directory to search from (default: the working directory)."},
}

type globTool struct{ env Env }

const globDescription = "Find files whose path matches a glob pattern. `*`, `?` and `[…]` match within a path segment and `**` across directories. " +
	"Paths are relative to the search directory, sorted, at most 1000; .git directories are skipped and only files are listed."

type globArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
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
	if strings.HasPrefix(in.Pattern, "/") {
		// An absolute pattern searches from / and lists absolute paths.
		root, display = "/", "/"
	}
	if res, ok := checkDir("glob", root, display); !ok {
		return res
	}

	lit, rest := pat.literalPrefix()
	prefix := path.Join(lit...)
	var matches []string
	more := false
	if len(rest) == 0 {
		// No wildcard: the pattern names one path.
		if st, err := os.Stat(filepath.Join(root, filepath.FromSlash(prefix))); err == nil && !st.IsDir() {
			matches = append(matches, prefix)
		}
	} else {
		base := filepath.Join(root, filepath.FromSlash(prefix))
		err := walkFiles(ctx, base, rest.mayMatchUnder, func(rel string) error {
			if !rest.match(strings.Split(rel, "/")) {
				return nil
			}
			if len(matches) == maxGlobScan {
				more = true
				return errStop
			}
			matches = append(matches, path.Join(prefix, rel))
			return nil
		})
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// The literal part of the pattern names no directory.
		case ctx.Err() != nil:
			return errorf("glob: stopped: %v", context.Cause(ctx))
		case err != nil:
			return errorf("glob: %s", pathErr(path.Join(display, prefix), err))
		}
	}
	if strings.HasPrefix(in.Pattern, "/") {
		for i, m := range matches {
			matches[i] = "/" + m
		}
	}
	if len(matches) == 0 {
		return Result{Content: fmt.Sprintf("no files match %s in %s", in.Pattern, display)}
	}
	slices.Sort(matches)
	var b strings.Builder
	for _, m := range matches[:min(len(matches), MaxGlobResults)] {
		b.WriteString(m)
		b.WriteByte('\n')
	}
	switch {
	case more:
		fmt.Fprintf(&b, "[showing %d of more than %d matches; narrow the pattern]\n", MaxGlobResults, maxGlobScan)
	case len(matches) > MaxGlobResults:
		fmt.Fprintf(&b, "[showing %d of %d matches; narrow the pattern]\n", MaxGlobResults, len(matches))
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
