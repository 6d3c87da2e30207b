package session

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/awlrun/awl/conv"
)

// TestListAndVerifyAgree builds a corpus of broken session files in one
// directory's store and holds the listing (what `awl sessions` shows) and
// Verify (what `awl sessions verify` says) to the same verdict on each: a
// file the listing shows without error verifies ok, and one it shows with
// an error has that error as Verify's first problem. Verify of the
// directory checks exactly the files the listing shows: every file of
// the directory but those whose header names another one. The corpus is
// listed three times: verified now, from the verdicts the first listing
// kept, and from a verified file of another awl version.
func TestListAndVerifyAgree(t *testing.T) {
	defer setSettle(0)()
	st := testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("first prompt")})
	mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: &conv.Message{Role: conv.RoleAssistant, Content: []conv.Block{conv.TextBlock("an answer")}, StopReason: conv.StopEnd}})
	mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("second prompt")})
	s.Close()
	good := readFile(t, s.Path)
	dir := filepath.Dir(s.Path)
	lines := bytes.SplitAfter(good, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty piece after the last newline
	header := lines[0]
	join := func(ls ...[]byte) []byte { return bytes.Join(ls, nil) }
	replace := func(b []byte, old, new string) []byte {
		if !bytes.Contains(b, []byte(old)) {
			t.Fatalf("no %q in %q", old, b)
		}
		return bytes.Replace(b, []byte(old), []byte(new), 1)
	}
	other := testStore(t)
	elsewhere, _ := other.Create("/elsewhere", "p", "m")
	elsewhere.Close()
	otherHeader := bytes.SplitAfter(readFile(t, elsewhere.Path), []byte("\n"))[0]

	corpus := map[string][]byte{
		"good":                   good,
		"torn header":            header[:len(header)/2],
		"torn header then lines": join(header[:len(header)/2], []byte("\n"), lines[1], lines[2]),
		"torn middle":            join(header, lines[1][:len(lines[1])/2], []byte("\n"), lines[2], lines[3]),
		"torn last line":         join(header, lines[1], lines[2], lines[3][:len(lines[3])/2]),
		"torn last line newline": join(header, lines[1], lines[2], lines[3][:len(lines[3])/2], []byte("\n")),
		"NUL tail":               join(good, bytes.Repeat([]byte{0}, 4096)),
		"invalid UTF-8 middle":   join(header, replace(lines[1], "first prompt", "first \xff\xfe prompt"), lines[2], lines[3]),
		"invalid UTF-8 last":     join(header, lines[1], lines[2], replace(lines[3], "second prompt", "second \xff prompt")),
		"invalid UTF-8 header":   join(replace(header, `"model":"m"`, "\"model\":\"m\xc3\""), lines[1]),
		"cut rune middle":        join(header, replace(lines[1], "first prompt", "first \xe2\x82 prompt"), lines[2]),
		"good non-ASCII":         join(header, replace(lines[1], "first prompt", "first — prompt ✓"), lines[2]),
		"newer version":          replace(good, `"version":1`, `"version":2`),
		"version zero":           replace(good, `"version":1`, `"version":0`),
		"empty file":             {},
		"0-byte header":          join([]byte("\n"), lines[1], lines[2]),
		"blank middle line":      join(header, lines[1], []byte("\n"), lines[2]),
		"second header":          join(header, lines[1], header, lines[2]),
		"not json middle":        join(header, []byte("garbage\n"), lines[2]),
		"not a session":          []byte("{\"name\":\"notes\"}\n"),
		"header of another cwd":  join(otherHeader, lines[1]),
		"CRLF":                   bytes.ReplaceAll(good, []byte("\n"), []byte("\r\n")),
		"header only":            header,
		"header without newline": header[:len(header)-1],
	}
	// A line that spans the listing's read chunks, a rune cut by the
	// chunk's end: valid, and then with an invalid byte right after the cut.
	long := func(mid string) []byte {
		pre := join(header, replace(lines[1], "first prompt", "first prompt "))
		at := bytes.Index(pre, []byte("first prompt ")) + len("first prompt ")
		pad := strings.Repeat("x", scanChunk-1-at)
		return join(pre[:at], []byte(pad+mid+strings.Repeat("y", 5000)), pre[at:], lines[2])
	}
	corpus["rune across chunks"] = long("—")
	corpus["invalid UTF-8 across chunks"] = long("\xe2\x82\xff")
	corpus["invalid UTF-8 after chunks"] = long("—" + strings.Repeat("z", scanChunk) + "\xff")
	// Right shape, wrong contents: the line's shape is awl's, only
	// decoding it finds the fault.
	corpus["text not a string"] = join(header, replace(lines[1], `"text":"first prompt"`, `"text":5`), lines[2])
	corpus["role not a string"] = join(header, lines[1], replace(lines[2], `"role":"assistant"`, `"role":7`), lines[3])
	corpus["stop reason a number"] = join(header, lines[1], replace(lines[2], `"stopReason":"stop"`, `"stopReason":3`), lines[3])
	corpus["parent names nothing"] = join(header, lines[1], replace(lines[2], `"parentId":"`, `"parentId":"x`), lines[3])
	// The same session re-serialised, keys sorted (jq -cS .), and then
	// one of its lines made wrong.
	sorted := resorted(t, good)
	corpus["re-serialised"] = sorted
	corpus["re-serialised, text a number"] = replace(sorted, `"text":"second prompt"`, `"text":2`)
	names := map[string]string{} // file name → corpus case
	for name, data := range corpus {
		file := strings.ReplaceAll(name, " ", "-") + ".jsonl"
		writeFile(t, filepath.Join(dir, file), data)
		names[file] = name
	}
	// A directory named like a session, a symlink to a good session, one to
	// a directory, and one to nothing.
	if err := os.Mkdir(filepath.Join(dir, "a-directory.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"link-to-good.jsonl": "good.jsonl", "link-to-dir.jsonl": "a-directory.jsonl", "dangling.jsonl": "nothing-here"} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
		names[link] = link
	}

	if err := os.Symlink("good.jsonl", filepath.Join(dir, "link\tto\ngood.jsonl")); err != nil {
		t.Fatal(err)
	}
	names["link\tto\ngood.jsonl"] = "a name a verified file cannot hold"
	for _, round := range []string{"verified now", "from the verdicts kept", "after another version's verified file"} {
		t.Run(round, func(t *testing.T) {
			if round == "after another version's verified file" {
				vf := filepath.Join(dir, VerifiedName)
				writeFile(t, vf, bytes.Replace(readFile(t, vf), []byte(verifiedVersion), []byte("awl verified 0"), 1))
			}
			agree(t, st, names)
		})
	}
	kept, err := parseVerified(readFile(t, filepath.Join(dir, VerifiedName)))
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) < len(corpus)-2 {
		t.Errorf("%d verdicts kept for a corpus of %d", len(kept), len(corpus))
	}
	if _, ok := kept["good.jsonl"]; !ok {
		t.Errorf("no verdict kept for good.jsonl: %v", kept)
	}
}

// agree lists st's sessions of /w and checks the verdict on each file of
// names (file name → corpus case) against Verify's.
func agree(t *testing.T, st *Store, names map[string]string) {
	t.Helper()
	infos, err := st.List("/w")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]Info{}
	for _, in := range infos {
		listed[filepath.Base(in.Path)] = in
	}
	for file, name := range names {
		in, ok := listed[file]
		if name == "header of another cwd" {
			if ok {
				t.Errorf("%s: listed for /w: %+v", name, in)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: not listed for /w, so verify of the directory skips it", name)
			continue
		}
		v := Verify(in.Path)
		switch {
		case in.Err == nil && len(v.Problems) > 0:
			t.Errorf("%s: listed without error, verify says %q", name, v.Problems[0].Msg)
		case in.Err != nil && len(v.Problems) == 0:
			t.Errorf("%s: listed with %q, verify says ok", name, in.Err)
		case in.Err != nil && in.Err.Error() != v.Problems[0].Msg:
			t.Errorf("%s: listed with %q, verify's first problem is %q", name, in.Err, v.Problems[0].Msg)
		}
	}
	if _, ok := listed["a-directory.jsonl"]; ok {
		t.Error("a directory named *.jsonl is listed")
	}
}

// resorted is data with each line re-serialised as jq -cS . writes it:
// the same JSON, keys sorted, no spaces.
func resorted(t *testing.T, data []byte) []byte {
	t.Helper()
	var out []byte
	for line := range bytes.Lines(data) {
		var v any
		d := json.NewDecoder(bytes.NewReader(line))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		if err := e.Encode(v); err != nil {
			t.Fatal(err)
		}
		out = append(out, b.Bytes()...)
	}
	return out
}

// setSettle sets settle for a test and returns what restores it.
func setSettle(d time.Duration) func() {
	old := settle
	settle = d
	return func() { settle = old }
}

// TestUTF8RunSplits: checking a line in pieces, cut anywhere (inside a
// rune too), says what utf8.Valid says of the whole line.
func TestUTF8RunSplits(t *testing.T) {
	for _, line := range []string{
		"plain", "a—b✓c😀d", "\xff", "a\xe2\x82", "a\xe2\x82b", "😀\xf0\x9f", "\xed\xa0\x80", "\xc0\xaf", "ok \xef\xbf\xbd ok", "",
	} {
		want := utf8.ValidString(line)
		for i := 0; i <= len(line); i++ {
			for j := i; j <= len(line); j++ {
				var u utf8Run
				u.feed([]byte(line[:i]), false)
				u.feed([]byte(line[i:j]), false)
				u.feed([]byte(line[j:]), true)
				if u.bad == want {
					t.Errorf("%q cut at %d and %d: bad=%v, want valid=%v", line, i, j, u.bad, want)
				}
			}
		}
	}
}
