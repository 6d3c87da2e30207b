package tool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// Read limits.
const (
	// DefaultReadLines is how many lines read returns when the model does
	// not say.
	DefaultReadLines = 2000
	// MaxLineBytes is where read cuts a long line.
	MaxLineBytes = 2000
	// MaxReadBytes caps one read's output; it stops at a line boundary.
	MaxReadBytes = 256 << 10
)

var readParams = params{
	{name: "path", kind: kindString, required: true, desc: "The file to read, absolute or relative to the working directory."},
	{name: "offset", kind: kindInteger, desc: "The 1-based line number to start at (default 1)."},
	{name: "limit", kind: kindInteger, desc: "How many lines to read (default 2000)."},
}

type readTool struct{ env Env }

const readDescription = "Read a text file. Lines come numbered (`cat -n` style), from offset (1-based, default 1), at most limit lines (default 2000); " +
	"lines longer than 2000 bytes are cut. When more lines remain, the output ends with the offset to read on from. " +
	"Binary files are refused; use view_image for images."

type readArgs struct {
	Path   string `json:"path"`
	Offset *int   `json:"offset"`
	Limit  *int   `json:"limit"`
}

func (t readTool) run(ctx context.Context, in readArgs) Result {
	offset, limit := 1, DefaultReadLines
	if in.Offset != nil {
		if *in.Offset < 1 {
			return errorf("read: offset is a 1-based line number; got %d", *in.Offset)
		}
		offset = *in.Offset
	}
	if in.Limit != nil {
		if *in.Limit < 1 {
			return errorf("read: limit must be at least 1; got %d", *in.Limit)
		}
		limit = *in.Limit
	}
	f, res, ok := openText(t.env, "read", in.Path)
	if !ok {
		return res
	}
	defer f.Close()

	lr := newLineReader(f, MaxLineBytes)
	var b strings.Builder
	lineNo, shown, cuts := 0, 0, 0
	for {
		if ctx.Err() != nil {
			return errorf("read %s: stopped: %v", in.Path, context.Cause(ctx))
		}
		line, cut, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return errorf("read %s: %v", in.Path, err)
		}
		lineNo++
		if lineNo < offset {
			continue
		}
		if shown == limit || b.Len() >= MaxReadBytes {
			fmt.Fprintf(&b, "[more lines follow; read on with offset %d]\n", lineNo)
			return Result{Content: b.String()}
		}
		text := strings.ToValidUTF8(string(line), "\uFFFD")
		if cut {
			cuts++
			text += " [… line cut at 2000 bytes]"
		}
		fmt.Fprintf(&b, "%6d\t%s\n", lineNo, text)
		shown++
	}
	switch {
	case lineNo == 0:
		return Result{Content: fmt.Sprintf("%s is empty", in.Path)}
	case offset > lineNo:
		return errorf("read: offset %d is past the end of %s, which has %d lines", offset, in.Path, lineNo)
	}
	fmt.Fprintf(&b, "[end of file: %d lines]\n", lineNo)
	return Result{Content: b.String()}
}

// openText opens the text file at p for a tool named name. When it cannot
// (missing, a directory, binary), ok is false and res says why.
func openText(env Env, name, p string) (f *os.File, res Result, ok bool) {
	if p == "" {
		return nil, errorf("%s: path is empty", name), false
	}
	f, st, err := openRegular(env.resolve(p))
	switch {
	case err != nil:
		return nil, errorf("%s: %s", name, pathErr(p, err)), false
	case st.IsDir():
		return nil, errorf("%s: %s is a directory; use ls to list it", name, p), false
	case f == nil:
		return nil, errorf("%s: %s is not a regular file but %s", name, p, fileKind(st.Mode())), false
	}
	if err := env.judgeFD(name, f.Fd(), f.Name()); err != nil {
		f.Close()
		return nil, errorf("%v", err), false
	}
	head := make([]byte, sniffBytes)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		f.Close()
		return nil, errorf("%s: %s", name, pathErr(p, err)), false
	}
	head = head[:n]
	if looksBinary(head) {
		f.Close()
		if mime := sniffImage(head); mime != "" {
			return nil, errorf("%s: %s is an image (%s), not text; use view_image to look at it", name, p, mime), false
		}
		return nil, errorf("%s: %s is a binary file (%d bytes), not text; %s only handles text", name, p, st.Size(), name), false
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, errorf("%s: %s", name, pathErr(p, err)), false
	}
	return f, Result{}, true
}

// openRegular opens file for reading if it is a regular file. When it is
// something else, f is nil, st says what it is and err is nil: opening a FIFO
// would block until some writer appears, and a device may never end.
func openRegular(file string) (f *os.File, st fs.FileInfo, err error) {
	st, err = os.Stat(file)
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, st, nil
	}
	f, err = os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	return f, st, nil
}

// fileKind names the type of a file that is not regular, for messages.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeDir != 0:
		return "a directory"
	}
	return "a special file"
}

// pathErr says what went wrong with path p, naming it as the model did
// rather than as resolved on disk.
func pathErr(p string, err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return p + ": no such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return p + ": permission denied"
	}
	return fmt.Sprintf("%s: %v", p, err)
}
