package tool

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// errStop ends a walk early without it being a failure.
var errStop = errors.New("stop walking")

// walkOpts says what a walk skips.
type walkOpts struct {
	// includeIgnored walks into what .gitignore, .git/info/exclude and
	// .ignore files exclude. .git directories are skipped either way.
	includeIgnored bool
	// descend, when not nil, says whether to walk into the directory with
	// these walk-relative segments.
	descend func(dir []string) bool
	// skipped, when not nil, counts the ignored entries left out.
	skipped *atomic.Int64
	// judge, when not nil, judges each directory once it is open, by
	// where it really lies (Env.judgeFD): one it refuses is not read, and
	// the root refused fails the walk.
	judge func(f *os.File) error
	// denied, when not nil, counts what judge refused.
	denied *atomic.Int64
}

// walkFiles calls fn for every entry under root that is not a directory,
// with its slash-separated path relative to root, in lexical order of those
// paths (byte-wise, as `sort` with LC_ALL=C would list them). It skips .git
// directories, directories it cannot read, ignored entries (unless
// opts.includeIgnored) and directories opts.descend refuses. Root itself is
// never checked against the ignore rules: a path the caller names explicitly
// is walked. fn returning errStop ends the walk quietly. The walk stops when
// ctx is done and returns ctx's error.
//
// Directories are read ahead in parallel, but fn is called from one
// goroutine at a time, in order.
func walkFiles(ctx context.Context, root string, opts walkOpts, fn func(rel string, e fs.DirEntry) error) error {
	w := &walker{ctx: ctx, opts: opts, queue: make(chan *dirJob, 512)}
	var rules *ignoreRules
	if !opts.includeIgnored {
		rules = rootIgnoreRules(root)
	}
	top := &dirJob{dir: root, rules: rules}
	top.run(w)
	if top.err != nil {
		return top.err
	}
	workers := min(runtime.GOMAXPROCS(0), 8)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range w.queue {
				if !w.stopped.Load() {
					j.run(w)
				}
			}
		})
	}
	err := w.walk(top, fn)
	w.stopped.Store(true)
	close(w.queue)
	wg.Wait()
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

type walker struct {
	ctx     context.Context
	opts    walkOpts
	queue   chan *dirJob // directories to read ahead
	stopped atomic.Bool
}

// dirJob is one directory of a walk, read by whichever goroutine gets to it
// first.
type dirJob struct {
	dir   string   // path on disk
	rel   []string // walk-relative segments
	rules *ignoreRules

	once    sync.Once
	err     error
	entries []walkEntry
}

// walkEntry is an entry of a directory that the walk keeps.
type walkEntry struct {
	d   fs.DirEntry
	rel string  // slash-separated path relative to the walk's root
	sub *dirJob // set for a directory to walk into
}

// run reads the directory (once) and decides which entries to keep.
func (j *dirJob) run(w *walker) {
	j.once.Do(func() { j.read(w) })
}

func (j *dirJob) read(w *walker) {
	f, err := os.Open(j.dir)
	if err != nil {
		j.err = err
		return
	}
	if w.opts.judge != nil {
		if err := w.opts.judge(f); err != nil {
			f.Close()
			if w.opts.denied != nil {
				w.opts.denied.Add(1)
			}
			j.err = err
			return
		}
	}
	ds, err := f.ReadDir(-1)
	f.Close()
	if err != nil && len(ds) == 0 {
		j.err = err
		return
	}
	// Sorted as os.ReadDir sorts, so that one instantiation of the generic
	// sort serves both.
	slices.SortFunc(ds, compareEntries)

	rules := j.rules
	if rules != nil {
		rules = rules.push(j.dir, len(j.rel), func(name string) bool {
			return slices.ContainsFunc(ds, func(d fs.DirEntry) bool { return d.Name() == name })
		})
	}
	prefix := strings.Join(j.rel, "/")
	if prefix != "" {
		prefix += "/"
	}
	segs := make([]string, len(j.rel)+1)
	copy(segs, j.rel)
	var scratch []string
	j.entries = make([]walkEntry, 0, len(ds))
	for _, d := range ds {
		name := d.Name()
		isDir := d.IsDir()
		if isDir && name == ".git" {
			continue
		}
		segs[len(j.rel)] = name
		if rules != nil && rules.ignored(segs, isDir, &scratch) {
			if w.opts.skipped != nil {
				w.opts.skipped.Add(1)
			}
			continue
		}
		e := walkEntry{d: d, rel: prefix + name}
		if isDir {
			if w.opts.descend != nil && !w.opts.descend(segs) {
				continue
			}
			e.sub = &dirJob{dir: filepath.Join(j.dir, name), rel: slices.Clone(segs), rules: rules}
		}
		j.entries = append(j.entries, e)
	}
}

// walk yields j's entries in order, descending into its directories after
// queueing them to be read ahead.
func (w *walker) walk(j *dirJob, fn func(rel string, e fs.DirEntry) error) error {
	j.run(w)
	if j.err != nil {
		return nil // an unreadable directory below the root is skipped
	}
	for _, e := range j.entries {
		if e.sub == nil {
			continue
		}
		select {
		case w.queue <- e.sub:
		default: // the queue is full: this one is read when reached
		}
	}
	for _, e := range j.entries {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		var err error
		if e.sub != nil {
			err = w.walk(e.sub, fn)
		} else {
			err = fn(e.rel, e.d)
		}
		if err != nil {
			return err
		}
	}
	j.entries = nil
	return nil
}

// compareEntries orders directory entries by name with a "/" after each
// directory's: the byte-wise order of the full paths the walk yields.
func compareEntries(a, b fs.DirEntry) int {
	an, bn := a.Name(), b.Name()
	n := min(len(an), len(bn))
	if c := strings.Compare(an[:n], bn[:n]); c != 0 {
		return c
	}
	return cmp.Compare(keyByte(an, n, a.IsDir()), keyByte(bn, n, b.IsDir()))
}

// keyByte is the byte at n of name with a "/" after it for a directory,
// -1 past its end.
func keyByte(name string, n int, dir bool) int {
	switch {
	case n < len(name):
		return int(name[n])
	case n == len(name) && dir:
		return '/'
	}
	return -1
}
