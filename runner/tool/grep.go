package tool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// Grep limits.
const (
	// MaxGrepMatches is how many matching lines grep lists.
	MaxGrepMatches = 500
	// maxGrepBytes caps grep's output.
	maxGrepBytes = 64 << 10
	// grepLineBytes is where a matching line is cut in the output.
	grepLineBytes = 500
	// grepScanBytes is how much of each line is searched.
	grepScanBytes = 64 << 10
)

var grepParams = params{
	{name: "pattern", kind: kindString, required: true, desc: "A Go (RE2) regular expression, matched against each line."},
	{name: "path", kind: kindString, desc: "The file or directory to search (default: the working directory)."},
	{name: "glob", kind: kindString, desc: "Only search files matching this glob: against the file name (`*.go`), or against the path relative to the search directory when it has a `/` (`internal/**/*.go`)."},
	{name: "ignore_case", kind: kindBoolean, desc: "Match without regard to case (default false)."},
}

type grepTool struct{ env Env }

const grepDescription = "Search file contents with a Go (RE2) regular expression. Output lines are `path:line: text`, paths relative to the search directory, " +
	"at most 500 matching lines. Binary files and .git directories are skipped."

type grepArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	IgnoreCase bool   `json:"ignore_case"`
}

func (t grepTool) run(ctx context.Context, in grepArgs) Result {
	if in.Pattern == "" {
		return errorf("grep: pattern is empty")
	}
	expr := in.Pattern
	if in.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return errorf("grep: bad regular expression: %v", err)
	}
	var filter pattern
	if in.Glob != "" {
		if filter, err = parsePattern(filepath.ToSlash(in.Glob)); err != nil {
			return errorf("grep: glob: %v", err)
		}
	}
	display := in.Path
	if display == "" {
		display = "."
	}
	root := t.env.resolve(display)
	st, err := os.Stat(root)
	if err != nil {
		return errorf("grep: %s", pathErr(display, err))
	}

	g := grepper{re: re}
	if !st.IsDir() {
		// One file: name it as given; a binary file is an error here.
		f, res, ok := openText(t.env, "grep", display)
		if !ok {
			return res
		}
		err = g.file(ctx, f, display)
		f.Close()
	} else {
		var descend func([]string) bool
		if filter != nil && strings.Contains(in.Glob, "/") {
			descend = filter.mayMatchUnder
		}
		err = walkFiles(ctx, root, descend, func(rel string) error {
			if filter != nil {
				name := []string{path.Base(rel)}
				if strings.Contains(in.Glob, "/") {
					name = strings.Split(rel, "/")
				}
				if !filter.match(name) {
					return nil
				}
			}
			f, _, err := openRegular(filepath.Join(root, filepath.FromSlash(rel)))
			if err != nil || f == nil {
				return nil // unreadable files and non-files are skipped
			}
			defer f.Close()
			return g.file(ctx, f, rel)
		})
	}
	switch {
	case ctx.Err() != nil:
		return errorf("grep: stopped: %v", context.Cause(ctx))
	case err != nil && !errors.Is(err, errStop):
		return errorf("grep: %s", pathErr(display, err))
	}
	if g.matches == 0 {
		return Result{Content: fmt.Sprintf("no matches for %s in %s", in.Pattern, display)}
	}
	if g.full {
		fmt.Fprintf(&g.out, "[stopped after %d matching lines; narrow the pattern, path or glob]\n", g.matches)
	}
	return Result{Content: g.out.String()}
}

// grepper collects matching lines across files.
type grepper struct {
	re      *regexp.Regexp
	out     strings.Builder
	matches int
	full    bool
}

// file searches f, named name in the output, and returns errStop once the
// output is full. Binary files are skipped.
func (g *grepper) file(ctx context.Context, f *os.File, name string) error {
	head := make([]byte, sniffBytes)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	if looksBinary(head[:n]) {
		return nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil
	}
	lr := newLineReader(f, grepScanBytes)
	for lineNo := 1; ; lineNo++ {
		if lineNo%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		line, _, err := lr.next()
		if err != nil {
			return nil // io.EOF, or a read error that ends this file
		}
		if !g.re.Match(line) {
			continue
		}
		if g.matches == MaxGrepMatches || g.out.Len() >= maxGrepBytes {
			g.full = true
			return errStop
		}
		g.matches++
		text := line
		cut := ""
		if len(text) > grepLineBytes {
			text, cut = trimPartialRune(text[:grepLineBytes]), " [… line cut]"
		}
		fmt.Fprintf(&g.out, "%s:%d: %s%s\n", name, lineNo, strings.ToValidUTF8(string(text), "\uFFFD"), cut)
	}
}
