package session

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awlrun/awl/conv"
)

// verifiedFixture is a store with one good session of /w and a counter of
// the files the listing verifies in full.
func verifiedFixture(t *testing.T) (st *Store, path string, judged *atomic.Int32) {
	t.Helper()
	st = testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("first prompt")})
	mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: &conv.Message{Role: conv.RoleAssistant, Content: []conv.Block{conv.TextBlock("an answer")}, StopReason: conv.StopEnd}})
	s.Close()
	judged = new(atomic.Int32)
	testHookJudge = func(string) { judged.Add(1) }
	t.Cleanup(func() { testHookJudge = nil })
	return st, s.Path, judged
}

// listOne lists /w and returns its one session.
func listOne(t *testing.T, st *Store) Info {
	t.Helper()
	infos, err := st.List("/w")
	if err != nil || len(infos) != 1 {
		t.Fatalf("List: %d sessions, %v", len(infos), err)
	}
	return infos[0]
}

// settled waits until files written now are older than settle, and a
// clock tick of the file system's timestamps has passed.
func settled() { time.Sleep(settle + 20*time.Millisecond) }

// TestVerifiedKept: a listing keeps its verdict on a settled file, the next
// listing of the file in the same state uses it without reading the file
// again, and Verify never does: a verdict of the verified file that names
// a problem the file does not have is what the listing shows (the file is
// the directory owner's to keep), while Verify still finds the file sound.
func TestVerifiedKept(t *testing.T) {
	defer setSettle(30 * time.Millisecond)()
	st, path, judged := verifiedFixture(t)
	settled()
	if in := listOne(t, st); in.Err != nil || judged.Load() != 1 {
		t.Fatalf("first listing: %v, %d files verified", in.Err, judged.Load())
	}
	vf := filepath.Join(filepath.Dir(path), VerifiedName)
	kept := readFile(t, vf)
	before, err := os.Stat(vf)
	if err != nil {
		t.Fatal(err)
	}
	if in := listOne(t, st); in.Err != nil || judged.Load() != 1 {
		t.Fatalf("second listing: %v, %d files verified, want the kept verdict used", in.Err, judged.Load())
	}
	// A rewrite is a rename over the file, even with the same bytes: a
	// listing that found nothing new must cost no write and no fsync.
	if after, err := os.Stat(vf); err != nil || !os.SameFile(before, after) || !bytes.Equal(readFile(t, vf), kept) {
		t.Error("a listing that found nothing new rewrote the verified file")
	}
	writeFile(t, vf, regexp.MustCompile(`\tok(\t[^\n]*)?\n`).ReplaceAll(kept, []byte("\tcorrupt\t2\t\":2: planted\"\n")))
	if in := listOne(t, st); in.Err == nil || in.Err.Error() != path+":2: planted" {
		t.Errorf("listing with a planted verdict: %v", in.Err)
	}
	if v := Verify(path); len(v.Problems) != 0 {
		t.Errorf("Verify read the verified file: %v", v.Problems[0])
	}
}

// TestVerifiedNotFooled: a file changed behind the kept verdict's back is
// verified again: the same size, its modification time set back to the
// old one (the change time still moves), and replaced by another file
// renamed over it (another inode).
func TestVerifiedNotFooled(t *testing.T) {
	defer setSettle(30 * time.Millisecond)()
	for _, how := range []string{"same size, mtime set back", "renamed over it"} {
		t.Run(how, func(t *testing.T) {
			st, path, judged := verifiedFixture(t)
			settled()
			if in := listOne(t, st); in.Err != nil {
				t.Fatal(in.Err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			bad := bytes.Replace(readFile(t, path), []byte(`"text":"first prompt"`), []byte(`"text":12345678901234`), 1)
			if len(bad) != int(fi.Size()) {
				t.Fatalf("the change is %d bytes, want the same size %d", len(bad), fi.Size())
			}
			switch how {
			case "same size, mtime set back":
				f, err := os.OpenFile(path, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.WriteAt(bad, 0); err != nil {
					t.Fatal(err)
				}
				f.Close()
				if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
					t.Fatal(err)
				}
				if now, _ := os.Stat(path); !now.ModTime().Equal(fi.ModTime()) || now.Size() != fi.Size() {
					t.Fatalf("mtime %v size %d, want %v %d", now.ModTime(), now.Size(), fi.ModTime(), fi.Size())
				}
			case "renamed over it":
				tmp := path + ".tmp"
				writeFile(t, tmp, bad)
				if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, path); err != nil {
					t.Fatal(err)
				}
			}
			in := listOne(t, st)
			v := Verify(path)
			if len(v.Problems) == 0 || in.Err == nil || in.Err.Error() != v.Problems[0].Msg {
				t.Fatalf("listed with %v; Verify says %v", in.Err, v.Problems)
			}
			if judged.Load() != 2 {
				t.Errorf("%d files verified, want the changed one again", judged.Load())
			}
		})
	}
}

// TestVerifiedAppends: a torn last line is sound (a resume drops it) and
// its verdict is kept; once the line is completed as something that is not
// an entry, the file's state is another and the listing says what Verify
// says. A verdict is never kept for a file that changed while it was read,
// nor for one changed within settle.
func TestVerifiedAppends(t *testing.T) {
	defer setSettle(30 * time.Millisecond)()
	st, path, judged := verifiedFixture(t)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(`{"type":"message","id":"torn","parentId":`); err != nil {
		t.Fatal(err)
	}
	if in := listOne(t, st); in.Err != nil {
		t.Fatalf("a torn last line listed as %v", in.Err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), VerifiedName)); err == nil {
		t.Error("a verdict was kept on a file changed within settle")
	}
	settled()
	listOne(t, st)
	listOne(t, st)
	if judged.Load() != 2 {
		t.Fatalf("%d files verified, want 2: once unsettled, once kept", judged.Load())
	}
	if _, err := f.WriteString("5}\n"); err != nil {
		t.Fatal(err)
	}
	in := listOne(t, st)
	v := Verify(path)
	if len(v.Problems) == 0 || in.Err == nil || in.Err.Error() != v.Problems[0].Msg {
		t.Fatalf("listed with %v; Verify says %v", in.Err, v.Problems)
	}
}

// TestVerifiedWhileAppending lists while another goroutine appends a long
// line in pieces: every listing is sound or shows a torn line as sound,
// and what the listings keep is never taken for the finished file.
func TestVerifiedWhileAppending(t *testing.T) {
	defer setSettle(0)()
	st, path, _ := verifiedFixture(t)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := `{"type":"message","id":"late","parentId":"` + "x" + `","message":{"role":"user","content":[{"type":"text","text":"` + strings.Repeat("y", 1<<20) + `"}]}}` + "\n"
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < len(line); i += 4096 {
			f.WriteString(line[i:min(i+4096, len(line))])
		}
	}()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		in := listOne(t, st)
		if in.Err != nil && !strings.Contains(in.Err.Error(), `parentId "x" names no earlier entry`) {
			t.Fatalf("listed while appending with %v", in.Err)
		}
	}
	// The finished line names no parent: Verify refuses the file, and so
	// must the listing, whatever the listings before it kept.
	in := listOne(t, st)
	v := Verify(path)
	if len(v.Problems) == 0 || in.Err == nil || in.Err.Error() != v.Problems[0].Msg {
		t.Fatalf("listed with %v; Verify says %v", in.Err, v.Problems)
	}
}

// TestVerifiedGarbage: a verified file that is garbage, of another
// version, torn, or a directory, is not trusted: the listing verifies and
// lists as Verify says, and replaces the file when it can.
func TestVerifiedGarbage(t *testing.T) {
	defer setSettle(0)()
	for name, content := range map[string][]byte{
		"garbage":       {0xff, 0x00, 'x', '\n', '\t'},
		"empty":         {},
		"other version": []byte("awl verified 99\n"),
		"torn":          []byte(verifiedVersion + "\nx.jsonl\t1\t2\t3"),
		"bad number":    []byte(verifiedVersion + "\nx.jsonl\t1\t2\t-3\t4\t5\tok\n"),
		"bad verdict":   []byte(verifiedVersion + "\nx.jsonl\t1\t2\t3\t4\t5\tfine\n"),
		"eight fields":  []byte(verifiedVersion + "\nx.jsonl\t1\t2\t3\t4\t5\tok\t\n"),
		"ten fields":    []byte(verifiedVersion + "\nx.jsonl\t1\t2\t3\t4\t5\tcorrupt\t1\t\": r\"\t\n"),
		"six fields":    []byte(verifiedVersion + "\nx.jsonl\t1\t2\t3\t4\tok\n"),
		"bad summary":   []byte(verifiedVersion + "\nx.jsonl\t1\t2\t3\t4\t5\tok\t{\"id\":\n"),
		"no id":         []byte(verifiedVersion + "\nx.jsonl\t1\t2\t3\t4\t5\tok\t{\"cwd\":\"/w\",\"messages\":2}\n"),
		"a directory":   nil,
	} {
		t.Run(name, func(t *testing.T) {
			st, path, judged := verifiedFixture(t)
			vf := filepath.Join(filepath.Dir(path), VerifiedName)
			if content == nil {
				if err := os.Mkdir(vf, 0o700); err != nil {
					t.Fatal(err)
				}
			} else {
				writeFile(t, vf, content)
			}
			if _, err := parseVerified(content); content != nil && err == nil {
				t.Fatalf("%q parses", content)
			}
			if in := listOne(t, st); in.Err != nil || judged.Load() != 1 {
				t.Fatalf("listed with %v, %d verified", in.Err, judged.Load())
			}
			if content == nil {
				return // it stays a directory; the listing went on
			}
			if _, err := parseVerified(readFile(t, vf)); err != nil {
				t.Errorf("not replaced by a good verified file: %v", err)
			}
		})
	}
}

// TestVerifiedConcurrentListings: listings at once, each verifying and
// writing the verified file, leave one that parses and holds a verdict for
// every file, and each listing says what Verify says.
func TestVerifiedConcurrentListings(t *testing.T) {
	defer setSettle(0)()
	st, path, _ := verifiedFixture(t)
	dir := filepath.Dir(path)
	good := readFile(t, path)
	bad := bytes.Replace(good, []byte(`"text":"first prompt"`), []byte(`"text":1`), 1)
	broken := map[string]bool{filepath.Base(path): false}
	for i := range 20 {
		data, name := good, strings.Repeat("f", i+1)+".jsonl"
		if i%2 == 1 {
			data = bad
		}
		broken[name] = i%2 == 1
		writeFile(t, filepath.Join(dir, name), data)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				infos, err := (&Store{Dir: st.Dir}).List("/w")
				if err != nil || len(infos) != 21 {
					t.Errorf("List: %d, %v", len(infos), err)
					return
				}
				for _, in := range infos {
					if (in.Err != nil) != broken[filepath.Base(in.Path)] {
						t.Errorf("%s listed with %v", in.Path, in.Err)
					}
				}
				// Remove the verified file now and then: listings
				// rebuild it.
				os.Remove(filepath.Join(dir, VerifiedName))
			}
		})
	}
	wg.Wait()
	if _, err := st.List("/w"); err != nil {
		t.Fatal(err)
	}
	kept, err := parseVerified(readFile(t, filepath.Join(dir, VerifiedName)))
	if err != nil || len(kept) != 21 {
		t.Fatalf("verified file: %d verdicts, %v", len(kept), err)
	}
	names, _ := os.ReadDir(dir)
	for _, n := range names {
		if strings.HasPrefix(n.Name(), "."+VerifiedName) || strings.Contains(n.Name(), ".tmp") {
			t.Errorf("left behind: %s", n.Name())
		}
	}
}

// TestVerifiedRoundTrip: what formatVerified writes, parseVerified reads
// back as it was, for every kind of verdict.
func TestVerifiedRoundTrip(t *testing.T) {
	vs := map[string]verdict{}
	for i := range 50 {
		st := fileState{dev: uint64(i), ino: 1<<63 + uint64(i), size: int64(i) << 20, mtime: 1764686400123456789 + int64(i), ctime: 1764686400987654321}
		var v verdict
		switch i % 3 {
		case 1:
			v = verdict{kind: KindCorrupt, line: i, rest: fmt.Sprintf(":%d: a \"quoted\"\tproblem\n", i)}
		case 2:
			v = verdict{kind: KindNewer, line: 1, rest: ": version 9"}
		}
		v.state = st
		vs[fmt.Sprintf("2026-12-02T14-00-00-000Z_%d.jsonl", i)] = v
	}
	got, err := parseVerified(formatVerified(vs))
	if err != nil || !maps.Equal(got, vs) {
		t.Fatalf("parsed %d of %d verdicts, %v", len(got), len(vs), err)
	}
}
