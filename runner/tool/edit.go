package tool

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// maxListedLines caps how many line numbers an edit error lists.
const maxListedLines = 20

var editParams = params{
	{name: "path", kind: kindString, required: true, desc: "The file to edit, absolute or relative to the working directory."},
	{name: "old_string", kind: kindString, required: true, desc: "The exact text to replace, whitespace included. It must occur exactly once unless replace_all is true."},
	{name: "new_string", kind: kindString, required: true, desc: "The text to put in its place."},
	{name: "replace_all", kind: kindBoolean, desc: "Replace every occurrence instead of requiring exactly one (default false)."},
}

type editTool struct{ env Env }

const editDescription = "Replace exact text in a file. old_string must match the file byte for byte, indentation included, and occur exactly once; " +
	"include enough surrounding lines to make it unique, or set replace_all to replace every occurrence. " +
	"When it matches several times or not at all, the error gives the line numbers."

type editArgs struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

func (t editTool) run(ctx context.Context, in editArgs) Result {
	if in.OldString == "" {
		return errorf("edit: old_string is empty; to create a file or replace all of it, use write")
	}
	if in.OldString == in.NewString {
		return errorf("edit: old_string and new_string are the same; nothing to change")
	}
	if res, denied := t.env.checkWrite("edit", in.Path); denied {
		return res
	}
	f, res, ok := openText(t.env, "edit", in.Path)
	if !ok {
		return res
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return errorf("edit: %s", pathErr(in.Path, err))
	}
	content := string(data)
	starts := occurrences(content, in.OldString)
	switch {
	case len(starts) == 0:
		msg := fmt.Sprintf("edit: old_string was not found in %s", in.Path)
		if lines := fuzzyLines(content, in.OldString); len(lines) > 0 {
			msg += fmt.Sprintf("; text that differs only in whitespace is at %s: read the file and copy the exact text, indentation and line breaks included", lineList(lines))
		} else {
			msg += "; read the file and copy the exact text to replace"
		}
		return errorf("%s", msg)
	case len(starts) > 1 && !in.ReplaceAll:
		return errorf("edit: old_string matches %d times in %s, at %s; include more surrounding text to make it unique, or set replace_all to replace every occurrence",
			len(starts), in.Path, lineList(lineNumbers(content, starts)))
	}
	if ctx.Err() != nil {
		return errorf("edit %s: not written: the run was stopped (%v)", in.Path, context.Cause(ctx))
	}
	updated := strings.ReplaceAll(content, in.OldString, in.NewString)
	if roots := t.env.writeRootsOrAll(); roots != nil {
		err := writeBeneath(roots, t.env.dirGuard(), t.env.resolve(in.Path), []byte(updated), false, func(dir *os.File, name string, _ fs.FileMode, _ bool) error {
			return t.env.judgeIn("edit", dir, name)
		})
		if res, denied := t.env.writeError("edit", in.Path, err); denied {
			return res
		}
		if err != nil {
			return errorf("edit: %s", pathErr(in.Path, err))
		}
	} else if err := replaceFile(t.env.resolve(in.Path), []byte(updated)); err != nil {
		return errorf("edit: %s", pathErr(in.Path, err))
	}
	lines := lineNumbers(content, starts)
	if len(starts) == 1 {
		return Result{Content: fmt.Sprintf("edited %s: replaced 1 occurrence at line %d", in.Path, lines[0])}
	}
	return Result{Content: fmt.Sprintf("edited %s: replaced %d occurrences, at %s", in.Path, len(starts), lineList(lines))}
}

// occurrences returns the byte offsets of the non-overlapping occurrences of
// sub in s, the ones strings.ReplaceAll replaces.
func occurrences(s, sub string) []int {
	var out []int
	for i := 0; ; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			return out
		}
		out = append(out, i+j)
		i += j + len(sub)
	}
}

// lineNumbers maps byte offsets in s, in increasing order, to 1-based lines.
func lineNumbers(s string, offsets []int) []int {
	out := make([]int, len(offsets))
	line, prev := 1, 0
	for i, off := range offsets {
		line += strings.Count(s[prev:off], "\n")
		prev = off
		out[i] = line
	}
	return out
}

// lineList formats line numbers for a message: "line 4" or "lines 4, 9 and
// 12", listing at most maxListedLines of them.
func lineList(lines []int) string {
	if len(lines) == 1 {
		return "line " + strconv.Itoa(lines[0])
	}
	shown := lines[:min(len(lines), maxListedLines)]
	parts := make([]string, len(shown))
	for i, l := range shown {
		parts[i] = strconv.Itoa(l)
	}
	if len(lines) > len(shown) {
		return fmt.Sprintf("lines %s and %d more", strings.Join(parts, ", "), len(lines)-len(shown))
	}
	return "lines " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// fuzzyLines returns the lines where sub occurs in s when every run of
// whitespace in both counts as one space and sub's outer whitespace is
// ignored.
func fuzzyLines(s, sub string) []int {
	want, _ := squeeze(strings.TrimSpace(sub))
	if want == "" {
		return nil
	}
	have, origin := squeeze(s)
	var offs []int
	for _, at := range occurrences(have, want) {
		offs = append(offs, origin[at])
	}
	return lineNumbers(s, offs)
}

// squeeze replaces each run of ASCII whitespace in s with one space.
// origin[i] is the offset in s of the byte at i in the result.
func squeeze(s string) (string, []int) {
	b := make([]byte, 0, len(s))
	origin := make([]int, 0, len(s))
	inSpace := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
			if !inSpace {
				b = append(b, ' ')
				origin = append(origin, i)
			}
			inSpace = true
			continue
		}
		inSpace = false
		b = append(b, c)
		origin = append(origin, i)
	}
	return string(b), origin
}
