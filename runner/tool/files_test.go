package tool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestRead(t *testing.T) {
	long := strings.Repeat("é", MaxLineBytes) // 2 bytes each: cut mid-line
	dir := tree(t, map[string]string{
		"ten.txt":      numbered(1, 10),
		"noeol.txt":    "a\nb",
		"empty.txt":    "",
		"long.txt":     "short\n" + long + "\nafter\n",
		"big.txt":      numbered(1, 2500),
		"bin.dat":      "abc\x00def",
		"latin1.txt":   "caf\xe9\n",
		"shot.png":     "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"sub/x.txt":    "x\n",
		"late-bad.txt": strings.Repeat("a", 9000) + "\n\xff\n",
	})
	cases := []struct {
		name  string
		input map[string]any
		isErr bool
		want  []string
	}{
		{"whole file", map[string]any{"path": "ten.txt"}, false, []string{"     1\tline 1\n", "    10\tline 10\n", "[end of file: 10 lines]"}},
		{"offset and limit", map[string]any{"path": "ten.txt", "offset": 3, "limit": 2}, false, []string{"     3\tline 3\n     4\tline 4\n[more lines follow; read on with offset 5]"}},
		{"limit to the end", map[string]any{"path": "ten.txt", "offset": 9, "limit": 2}, false, []string{"     9\tline 9\n    10\tline 10\n[end of file: 10 lines]"}},
		{"no final newline", map[string]any{"path": "noeol.txt"}, false, []string{"     2\tb\n[end of file: 2 lines]"}},
		{"absolute path", map[string]any{"path": "ABS/ten.txt"}, false, []string{"line 10"}},
		{"subdir", map[string]any{"path": "sub/x.txt"}, false, []string{"     1\tx\n"}},
		{"empty file", map[string]any{"path": "empty.txt"}, false, []string{"empty.txt is empty"}},
		{"default limit", map[string]any{"path": "big.txt"}, false, []string{"  2000\tline 2000\n[more lines follow; read on with offset 2001]"}},
		{"long line cut", map[string]any{"path": "long.txt"}, false, []string{"line cut at 2000 bytes", "     3\tafter"}},
		{"late invalid UTF-8 shown", map[string]any{"path": "late-bad.txt"}, false, []string{"     2\t\uFFFD\n"}},
		{"offset past end", map[string]any{"path": "ten.txt", "offset": 11}, true, []string{"offset 11 is past the end of ten.txt, which has 10 lines"}},
		{"zero offset", map[string]any{"path": "ten.txt", "offset": 0}, true, []string{"offset is a 1-based line number"}},
		{"zero limit", map[string]any{"path": "ten.txt", "limit": 0}, true, []string{"limit must be at least 1"}},
		{"missing", map[string]any{"path": "nope.txt"}, true, []string{"read: nope.txt: no such file or directory"}},
		{"directory", map[string]any{"path": "sub"}, true, []string{"sub is a directory; use ls"}},
		{"binary", map[string]any{"path": "bin.dat"}, true, []string{"bin.dat is a binary file (7 bytes)"}},
		{"invalid UTF-8", map[string]any{"path": "latin1.txt"}, true, []string{"binary file"}},
		{"image", map[string]any{"path": "shot.png"}, true, []string{"shot.png is an image (image/png)", "use view_image"}},
		{"empty path", map[string]any{"path": ""}, true, []string{"path is empty"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if p, ok := c.input["path"].(string); ok && strings.HasPrefix(p, "ABS/") {
				c.input["path"] = filepath.Join(dir, p[4:])
			}
			res := call(t, Env{Dir: dir}, "read", args(t, c.input))
			want(t, res, c.isErr, c.want...)
		})
	}
	// The long line is cut on a character boundary.
	res := call(t, Env{Dir: dir}, "read", `{"path":"long.txt","offset":2,"limit":1}`)
	if strings.ContainsRune(res.Content, '\uFFFD') || !strings.Contains(res.Content, strings.Repeat("é", MaxLineBytes/2)+" [… line cut") {
		t.Errorf("long line not cut cleanly at %d bytes:\n%.100s", MaxLineBytes, res.Content)
	}
}

func TestReadOutputCap(t *testing.T) {
	line := strings.Repeat("x", 1000) + "\n"
	dir := tree(t, map[string]string{"wide.txt": strings.Repeat(line, 1000)})
	res := call(t, Env{Dir: dir}, "read", `{"path":"wide.txt"}`)
	want(t, res, false, "[more lines follow; read on with offset")
	if len(res.Content) > MaxReadBytes+2*len(line) {
		t.Errorf("read returned %d bytes, over the %d cap", len(res.Content), MaxReadBytes)
	}
}

func TestWrite(t *testing.T) {
	dir := tree(t, map[string]string{"old.txt": "old", "afile": "x"})
	cases := []struct {
		name, path, content string
		isErr               bool
		want                string
	}{
		{"new file", "new.txt", "hello", false, "created new.txt: wrote 5 bytes"},
		{"parents", "a/b/c/deep.txt", "deep\n", false, "created a/b/c/deep.txt: wrote 5 bytes"},
		{"overwrite", "old.txt", "newer", false, "overwrote old.txt: wrote 5 bytes"},
		{"empty content", "blank.txt", "", false, "created blank.txt: wrote 0 bytes"},
		{"directory", "a", "x", true, "write: a is a directory"},
		{"parent is a file", "afile/x.txt", "x", true, "write:"},
		{"empty path", "", "x", true, "path is empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := call(t, Env{Dir: dir}, "write", args(t, map[string]any{"path": c.path, "content": c.content}))
			want(t, res, c.isErr, c.want)
			if c.isErr {
				return
			}
			got, err := os.ReadFile(filepath.Join(dir, c.path))
			if err != nil || string(got) != c.content {
				t.Errorf("file holds %q, %v; want %q", got, err, c.content)
			}
		})
	}
	want(t, call(t, Env{Dir: dir}, "write", `{"path":"x"}`), true, `missing required argument "content"`)
}

func TestEdit(t *testing.T) {
	const src = "package p\n\nfunc a() {\n\treturn\n}\n\nfunc b() {\n\treturn\n}\n\nfunc c() {\n\treturn\n}\n"
	cases := []struct {
		name     string
		input    map[string]any
		isErr    bool
		want     []string
		wantFile string // "" means unchanged
	}{
		{"once", map[string]any{"old_string": "func b() {\n\treturn", "new_string": "func b() {\n\treturn // b"},
			false, []string{"edited f.go: replaced 1 occurrence at line 7"}, strings.Replace(src, "func b() {\n\treturn", "func b() {\n\treturn // b", 1)},
		{"many", map[string]any{"old_string": "\treturn\n", "new_string": "\treturn 1\n"},
			true, []string{"old_string matches 3 times in f.go, at lines 4, 8 and 12", "replace_all"}, ""},
		{"replace all", map[string]any{"old_string": "\treturn\n", "new_string": "\treturn 1\n", "replace_all": true},
			false, []string{"replaced 3 occurrences, at lines 4, 8 and 12"}, strings.ReplaceAll(src, "\treturn\n", "\treturn 1\n")},
		{"none", map[string]any{"old_string": "func d()", "new_string": "func e()"},
			true, []string{"old_string was not found in f.go; read the file"}, ""},
		{"whitespace hint", map[string]any{"old_string": "func c() {\n    return\n}", "new_string": "x"},
			true, []string{"not found in f.go; text that differs only in whitespace is at line 11"}, ""},
		{"whitespace hint many", map[string]any{"old_string": "  return ", "new_string": "x"},
			true, []string{"differs only in whitespace is at lines 4, 8 and 12"}, ""},
		{"empty old", map[string]any{"old_string": "", "new_string": "x"}, true, []string{"old_string is empty; to create a file"}, ""},
		{"no change", map[string]any{"old_string": "func a", "new_string": "func a"}, true, []string{"the same; nothing to change"}, ""},
		{"missing file", map[string]any{"path": "nope.go", "old_string": "a", "new_string": "b"}, true, []string{"edit: nope.go: no such file or directory"}, ""},
		{"binary file", map[string]any{"path": "bin", "old_string": "a", "new_string": "b"}, true, []string{"binary file"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := tree(t, map[string]string{"f.go": src, "bin": "a\x00b"})
			if _, ok := c.input["path"]; !ok {
				c.input["path"] = "f.go"
			}
			res := call(t, Env{Dir: dir}, "edit", args(t, c.input))
			want(t, res, c.isErr, c.want...)
			got, _ := os.ReadFile(filepath.Join(dir, "f.go"))
			wantFile := c.wantFile
			if wantFile == "" {
				wantFile = src
			}
			if string(got) != wantFile {
				t.Errorf("file now:\n%s\nwant:\n%s", got, wantFile)
			}
		})
	}
}

func TestEditCRLFHint(t *testing.T) {
	dir := tree(t, map[string]string{"win.txt": "one\r\ntwo\r\nthree\r\n"})
	res := call(t, Env{Dir: dir}, "edit", `{"path":"win.txt","old_string":"two\nthree","new_string":"2\n3"}`)
	want(t, res, true, "differs only in whitespace is at line 2")
	res = call(t, Env{Dir: dir}, "edit", `{"path":"win.txt","old_string":"two\r\nthree","new_string":"2\r\n3"}`)
	want(t, res, false, "replaced 1 occurrence at line 2")
	if got, _ := os.ReadFile(filepath.Join(dir, "win.txt")); string(got) != "one\r\n2\r\n3\r\n" {
		t.Errorf("file now %q", got)
	}
}

func TestEditKeepsMode(t *testing.T) {
	dir := tree(t, map[string]string{"run.sh": "echo a\n"})
	p := filepath.Join(dir, "run.sh")
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	want(t, call(t, Env{Dir: dir}, "edit", `{"path":"run.sh","old_string":"a","new_string":"b"}`), false, "replaced 1")
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("mode after edit = %v, %v; want 0755", st.Mode(), err)
	}
}

func TestLineList(t *testing.T) {
	many := make([]int, 25)
	for i := range many {
		many[i] = i + 1
	}
	for _, c := range []struct {
		in   []int
		want string
	}{
		{[]int{7}, "line 7"},
		{[]int{1, 2}, "lines 1 and 2"},
		{[]int{1, 2, 3}, "lines 1, 2 and 3"},
		{many, "lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 and 5 more"},
	} {
		if got := lineList(c.in); got != c.want {
			t.Errorf("lineList(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLs(t *testing.T) {
	dir := tree(t, map[string]string{"b.txt": "", "a/x": "", ".hidden": "", "C.md": ""})
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		input string
		isErr bool
		want  string
	}{
		{`{}`, false, ".hidden\nC.md\na/\nb.txt\nempty/\nlink/\n"},
		{`{"path":"a"}`, false, "x\n"},
		{`{"path":"empty"}`, false, "empty is empty"},
		{`{"path":"b.txt"}`, true, "ls: b.txt is not a directory"},
		{`{"path":"nope"}`, true, "ls: nope: no such file or directory"},
	}
	for _, c := range cases {
		res := call(t, Env{Dir: dir}, "ls", c.input)
		if res.IsError != c.isErr || res.Content != c.want {
			t.Errorf("ls %s = %+v, want %q (error %v)", c.input, res, c.want, c.isErr)
		}
	}
}

func TestLsCap(t *testing.T) {
	files := map[string]string{}
	for i := range MaxLsEntries + 5 {
		files[fmt.Sprintf("f%04d", i)] = ""
	}
	res := call(t, Env{Dir: tree(t, files)}, "ls", `{}`)
	want(t, res, false, "f0999\n[showing 1000 of 1005 entries")
	if strings.Contains(res.Content, "f1000") {
		t.Error("ls listed past the cap")
	}
}
