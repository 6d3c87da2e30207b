package tool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

var writeParams = params{
	{name: "path", kind: kindString, required: true, desc: "The file to write, absolute or relative to the working directory. Missing parent directories are created."},
	{name: "content", kind: kindString, required: true, desc: "The whole new content of the file."},
}

type writeTool struct{ env Env }

const writeDescription = "Write a file with the given content, replacing it if it exists and creating missing parent directories. " +
	"To change part of an existing file, prefer edit."

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func (t writeTool) run(ctx context.Context, in writeArgs) Result {
	if in.Path == "" {
		return errorf("write: path is empty")
	}
	if ctx.Err() != nil {
		return errorf("write %s: not written: the run was stopped (%v)", in.Path, context.Cause(ctx))
	}
	if res, denied := t.env.checkWrite("write", in.Path); denied {
		return res
	}
	file := t.env.resolve(in.Path)
	existed := false
	if roots := t.env.writeRootsOrAll(); roots != nil {
		var kind fs.FileMode
		err := writeBeneath(roots, t.env.dirGuard(), file, []byte(in.Content), true, func(dir *os.File, name string, mode fs.FileMode, exists bool) error {
			if err := t.env.judgeIn("write", dir, name); err != nil {
				return err
			}
			existed = exists
			if exists && !mode.IsRegular() {
				kind = mode
				return errNotRegular
			}
			return nil
		})
		if res, denied := t.env.writeError("write", in.Path, err); denied {
			return res
		}
		switch {
		case errors.Is(err, errNotRegular) && kind.IsDir():
			return errorf("write: %s is a directory", in.Path)
		case errors.Is(err, errNotRegular):
			return errorf("write: %s is not a regular file but %s", in.Path, fileKind(kind))
		case err != nil:
			return errorf("write: %s", pathErr(in.Path, err))
		}
		return written(in, existed)
	}
	switch st, err := os.Stat(file); {
	case err == nil && st.IsDir():
		return errorf("write: %s is a directory", in.Path)
	case err == nil && !st.Mode().IsRegular():
		return errorf("write: %s is not a regular file but %s", in.Path, fileKind(st.Mode()))
	case err == nil:
		existed = true
	case !errors.Is(err, fs.ErrNotExist):
		return errorf("write: %s", pathErr(in.Path, err))
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return errorf("write: create parent directories of %s: %s", in.Path, pathErr(filepath.Dir(in.Path), err))
	}
	if err := replaceFile(file, []byte(in.Content)); err != nil {
		return errorf("write: %s", pathErr(in.Path, err))
	}
	return written(in, existed)
}

// errNotRegular refuses to write over something that is not a file.
var errNotRegular = errors.New("not a regular file")

// written is the result of a successful write.
func written(in writeArgs, existed bool) Result {
	verb := "created"
	if existed {
		verb = "overwrote"
	}
	return Result{Content: fmt.Sprintf("%s %s: wrote %d bytes", verb, in.Path, len(in.Content))}
}
