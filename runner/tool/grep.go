package tool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Grep limits.
const (
	// MaxGrepMatches is how many matching lines grep lists.
	MaxGrepMatches = 500
	// maxGrepBytes caps grep's output.
	maxGrepBytes = 64 << 10
	// grepLineBytes is where a matching line is cut in the output.
	grepLineBytes = 500
)

var grepParams = params{
	{name: "pattern", kind: kindString, required: true, desc: "A Go (RE2) regular expression, matched against each line."},
	{name: "path", kind: kindString, desc: "The file or directory to search (default: the working directory)."},
	{name: "glob", kind: kindString, desc: "Only search files matching this glob: against the file name (`*.go`), or against the path relative to the search directory when it has a `/` (`internal/**/*.go`)."},
	{name: "ignore_case", kind: kindBoolean, desc: "Match without regard to case (default false)."},
	{name: "include_ignored", kind: kindBoolean, desc: "Also search files that .gitignore, .git/info/exclude or .ignore exclude (default false)."},
}

type grepTool struct{ env Env }

const grepDescription = "Search file contents with a Go (RE2) regular expression. Output lines are `path:line: text`, paths relative to the search directory, " +
	"sorted by path, then line; at most 500 matching lines. Binary files and .git directories are skipped, and so are files that git ignores " +
	"(.gitignore, .git/info/exclude) or an .ignore file excludes, unless path names them; include_ignored searches them all."

type grepArgs struct {
	Pattern        string `json:"pattern"`
	Path           string `json:"path"`
	Glob           string `json:"glob"`
	IgnoreCase     bool   `json:"ignore_case"`
	IncludeIgnored bool   `json:"include_ignored"`
}

func (t grepTool) run(ctx context.Context, in grepArgs) Result {
	if in.Pattern == "" {
		return errorf("grep: pattern is empty")
	}
	expr := in.Pattern
	if in.IgnoreCase {
		expr = "(?i)" + expr
	}
	m, err := newLineMatcher(expr)
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

	var g grepOut
	var skipped, denied atomic.Int64
	if !st.IsDir() {
		// One file: name it as given; a binary file is an error here.
		f, res, ok := openText(t.env, "grep", display)
		if !ok {
			return res
		}
		var hits grepHits
		err = newSearcher(m).search(ctx, f, hits.collect(display, nil))
		f.Close()
		g.merge(&hits)
	} else {
		opts := walkOpts{includeIgnored: in.IncludeIgnored, skipped: &skipped, judge: t.env.dirJudge("grep"), denied: &denied}
		var match func(rel string) bool
		if filter != nil {
			if strings.Contains(in.Glob, "/") {
				opts.descend = filter.mayMatchUnder
				match = filter.matchPath
			} else {
				match = func(rel string) bool { return filter.matchPath(path.Base(rel)) }
			}
		}
		err = grepTree(ctx, root, opts, match, m, &g, t.fileJudge(&denied))
	}
	var pd *policyDenied
	switch {
	case errors.As(err, &pd):
		return errorf("%v", pd.err)
	case ctx.Err() != nil:
		return errorf("grep: stopped: %v", context.Cause(ctx))
	case err != nil:
		return errorf("grep: %s", pathErr(display, err))
	}
	if g.matches == 0 {
		msg := fmt.Sprintf("no matches for %s in %s", in.Pattern, display)
		if n := skipped.Load(); n > 0 {
			msg += fmt.Sprintf(" (%s not searched: ignored; include_ignored: true searches them)", count(int(n), "file or directory", "files or directories"))
		}
		if n := denied.Load(); n > 0 {
			msg += fmt.Sprintf(" (%s not searched: the run's path rules deny them)", count(int(n), "file or directory", "files or directories"))
		}
		return Result{Content: msg}
	}
	if n := denied.Load(); n > 0 {
		fmt.Fprintf(&g.out, "[%s not searched: the run's path rules deny them]\n", count(int(n), "file or directory", "files or directories"))
	}
	if g.shown < g.matches {
		fmt.Fprintf(&g.out, "[showing %d of %d matching lines in %s; %d more not shown: narrow the pattern, or the search with path or glob]\n",
			g.shown, g.matches, count(g.files, "file"), g.matches-g.shown)
	}
	return Result{Content: g.out.String()}
}

// grepOut gathers the output in order: the first lines in full, then only
// counts.
type grepOut struct {
	out     strings.Builder
	shown   int // lines in out
	matches int // matching lines in all
	files   int // files with a match
}

// full reports whether out has room for no more lines.
func (g *grepOut) full() bool { return g.shown == MaxGrepMatches || g.out.Len() >= maxGrepBytes }

// merge adds one file's hits.
func (g *grepOut) merge(h *grepHits) {
	if h.count == 0 {
		return
	}
	g.files++
	g.matches += h.count
	from := 0
	for _, end := range h.ends {
		if g.full() {
			break
		}
		g.out.Write(h.text[from:end])
		from = end
		g.shown++
	}
}

// grepHits is what one file yields: its first matching lines, formatted,
// and how many lines matched in all.
type grepHits struct {
	text  []byte
	ends  []int // where each line in text ends
	count int
}

// collect returns a visit function that formats matching lines of the file
// named name into h while they could still be shown, and counts them all.
// When full is not nil and reports true, lines are only counted.
func (h *grepHits) collect(name string, full *atomic.Bool) func(int, []byte) {
	return func(lineNo int, line []byte) {
		h.count++
		if len(h.ends) == MaxGrepMatches || len(h.text) >= maxGrepBytes || (full != nil && full.Load()) {
			return
		}
		text, cut := line, ""
		if len(text) > grepLineBytes {
			text, cut = trimPartialRune(text[:grepLineBytes]), " [… line cut]"
		}
		h.text = append(h.text, name...)
		h.text = append(h.text, ':')
		h.text = strconv.AppendInt(h.text, int64(lineNo), 10)
		h.text = append(h.text, ':', ' ')
		if utf8.Valid(text) {
			h.text = append(h.text, text...)
		} else {
			h.text = append(h.text, strings.ToValidUTF8(string(text), "\uFFFD")...)
		}
		h.text = append(h.text, cut...)
		h.text = append(h.text, '\n')
		h.ends = append(h.ends, len(h.text))
	}
}

// grepSlot is one file of a tree search, searched by a worker and merged in
// walk order.
type grepSlot struct {
	file  string
	rel   string
	d     fs.DirEntry
	hits  grepHits
	done  chan struct{}
	judge func(fd uintptr, name string) bool
}

// fileJudge returns the judge of each file grep opens, which counts what
// it refuses in denied; nil without path rules.
func (t grepTool) fileJudge(denied *atomic.Int64) func(fd uintptr, name string) bool {
	if t.env.Paths == nil {
		return nil
	}
	return func(fd uintptr, name string) bool {
		if t.env.judgeFD("grep", fd, name) != nil {
			denied.Add(1)
			return false
		}
		return true
	}
}

// grepTree searches the files under root in parallel and merges what they
// yield into g in path order. match, when not nil, picks the files.
// judge, when not nil, judges each file once open; one it refuses is not
// searched.
func grepTree(ctx context.Context, root string, opts walkOpts, match func(string) bool, m *lineMatcher, g *grepOut, judge func(fd uintptr, name string) bool) error {
	workers := runtime.GOMAXPROCS(0)
	inflight := 8 * workers
	work := make(chan *grepSlot, inflight)
	order := make(chan *grepSlot, inflight)
	var full atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			s := newSearcher(m)
			for sl := range work {
				sl.search(ctx, s, &full)
				close(sl.done)
			}
		})
	}
	merged := make(chan struct{})
	go func() {
		defer close(merged)
		for sl := range order {
			<-sl.done
			g.merge(&sl.hits)
			sl.hits = grepHits{}
			if g.full() {
				full.Store(true)
			}
		}
	}()
	err := walkFiles(ctx, root, opts, func(rel string, d fs.DirEntry) error {
		if match != nil && !match(rel) {
			return nil
		}
		sl := &grepSlot{file: filepath.Join(root, filepath.FromSlash(rel)), rel: rel, d: d, done: make(chan struct{}), judge: judge}
		order <- sl
		work <- sl
		return nil
	})
	close(work)
	close(order)
	wg.Wait()
	<-merged
	return err
}

// search searches the slot's file, if it is a readable regular file (or a
// link to one) that is not binary.
func (sl *grepSlot) search(ctx context.Context, s *searcher, full *atomic.Bool) {
	if ctx.Err() != nil {
		return
	}
	switch t := sl.d.Type(); {
	case t&fs.ModeSymlink != 0:
		st, err := os.Stat(sl.file)
		if err != nil || !st.Mode().IsRegular() {
			return
		}
	case !t.IsRegular():
		return
	}
	f, err := openSearchFile(sl.file)
	if err != nil {
		return
	}
	defer f.Close()
	if sl.judge != nil && !sl.judge(f.Fd(), sl.file) {
		return
	}
	_ = s.search(ctx, f, sl.hits.collect(sl.rel, full))
}

// count says n things: "1 file", "3 files"; plural defaults to one+"s".
func count(n int, one string, plural ...string) string {
	if n == 1 {
		return "1 " + one
	}
	if len(plural) > 0 {
		return strconv.Itoa(n) + " " + plural[0]
	}
	return strconv.Itoa(n) + " " + one + "s"
}
