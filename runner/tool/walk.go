package tool

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// errStop ends a walk early without it being a failure.
var errStop = errors.New("stop walking")

// walkFiles calls fn for every entry under root that is not a directory, in
// lexical order, with its slash-separated path relative to root. It skips
// .git directories, directories it cannot read, and directories for which
// descend (when not nil) returns false. fn returning errStop ends the walk
// quietly. The walk stops when ctx is done and returns ctx's error.
func walkFiles(ctx context.Context, root string, descend func(dir []string) bool, fn func(rel string) error) error {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if err != nil {
			if p == root {
				return err
			}
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, relErr := filepath.Rel(root, p)
		if relErr != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p == root {
				return nil
			}
			if d.Name() == ".git" || (descend != nil && !descend(strings.Split(rel, "/"))) {
				return fs.SkipDir
			}
			return nil
		}
		return fn(rel)
	})
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}
