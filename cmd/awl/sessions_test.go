package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/session"
)

// TestShortIDsResolve checks the promise of the table: every short id is at
// least 8 characters, unique among the sessions listed, and resolves to its
// session from the listed directory (or from anywhere, for --all), even when
// the sessions were created in the same millisecond.
func TestShortIDsResolve(t *testing.T) {
	base := time.Date(2026, 4, 25, 17, 40, 15, 0, time.UTC)
	now := base
	store := &session.Store{
		Dir:  filepath.Join(t.TempDir(), "sessions"),
		Now:  func() time.Time { return now },
		Rand: rand.NewChaCha8([32]byte{7}),
	}
	// "/work/a-b" and "/work/a/b" share a directory name.
	dirs := []string{"/work/a", "/work/b", "/work/a-b", "/work/a/b"}
	for i := range 40 {
		// Bursts within one millisecond, then a few seconds apart.
		if i%4 == 0 {
			now = now.Add(1500 * time.Millisecond)
		}
		s, err := store.Create(dirs[i%len(dirs)], "anthropic", "m")
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	for _, scope := range append([]string{""}, dirs...) {
		infos, err := store.List(scope)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 40, false: 10}[scope == ""]; len(infos) != want {
			t.Fatalf("List(%q): %d sessions, want %d", scope, len(infos), want)
		}
		short := shortIDs(infos)
		seen := map[string]bool{}
		from := scope
		if scope == "" {
			from = "/somewhere/else"
		}
		for i, id := range short {
			if len(id) < minShortID || strings.HasSuffix(id, "-") || !strings.HasPrefix(infos[i].ID, id) {
				t.Errorf("scope %q: short id %q of %s", scope, id, infos[i].ID)
			}
			for p := range seen {
				if strings.HasPrefix(p, id) || strings.HasPrefix(id, p) {
					t.Errorf("scope %q: short ids %q and %q overlap", scope, p, id)
				}
			}
			seen[id] = true
			got, err := store.Resolve(id, from)
			if err != nil || got != infos[i].Path {
				t.Errorf("scope %q: Resolve(%q, %q) = %q, %v; want %s", scope, id, from, got, err, infos[i].Path)
			}
		}
	}
}

func TestShortIDs(t *testing.T) {
	infos := []session.Info{
		{ID: "019dc5ba-53f6-71a5-ab8f-b1f8709c2572"},
		{ID: "019dc5ba-53f7-71a5-ab8f-b1f8709c2572"},
		{ID: "019dc5bb-0000-7000-8000-000000000000"},
		{ID: "02000000-0000-7000-8000-000000000000", Err: errTest},
		{ID: "", Path: "/s/x/odd.jsonl", Err: errTest},
	}
	want := []string{"019dc5ba-53f6", "019dc5ba-53f7", "019dc5bb", "02000000-0000-7000-8000-000000000000", "odd.jsonl"}
	got := shortIDs(infos)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("shortIDs[%d] = %q, want %q", i, got[i], want[i])
		}
	}
	// Sharing exactly 8 characters: the dash is skipped.
	got = shortIDs([]session.Info{{ID: "01234567-89ab-7000-8000-000000000000"}, {ID: "01234567-99ab-7000-8000-000000000000"}})
	if got[0] != "01234567-8" || got[1] != "01234567-9" {
		t.Errorf("shortIDs = %q", got)
	}
}

type testError string

func (e testError) Error() string { return string(e) }

const errTest = testError("unreadable")

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"30d":    30 * 24 * time.Hour,
		"1d12h":  36 * time.Hour,
		"24h":    24 * time.Hour,
		"90m":    90 * time.Minute,
		"0d":     0,
		"1.5h":   90 * time.Minute,
		"2d30m0": -1,
		"":       -1,
		"d":      -1,
		"-1h":    -1,
		"3 days": -1,
		"7days":  -1,
	} {
		got, err := parseAge(in)
		if want < 0 {
			if err == nil {
				t.Errorf("parseAge(%q) = %v, want an error", in, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("parseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

func TestCutText(t *testing.T) {
	lines := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString("line")
		}
		return b.String()
	}
	for _, c := range []struct {
		in          string
		lines, max  int
		keptLines   int
		dropped     int
		keptIsWhole bool
	}{
		{lines(5), 20, 2000, 5, 0, true},
		{lines(20), 20, 2000, 20, 0, true},
		{lines(21), 20, 2000, 20, 1, false},
		{lines(100), 20, 2000, 20, 80, false},
		{strings.Repeat("x", 5000), 20, 2000, 1, 1, false},
	} {
		got, dropped := cutText(c.in, c.lines, c.max)
		if n := strings.Count(got, "\n") + 1; n != c.keptLines || dropped != c.dropped || (got == c.in) != c.keptIsWhole {
			t.Errorf("cutText(%d lines, %d bytes): kept %d lines (%d bytes), dropped %d; want %d kept, %d dropped",
				strings.Count(c.in, "\n")+1, len(c.in), n, len(got), dropped, c.keptLines, c.dropped)
		}
		if len(got) > c.max {
			t.Errorf("cutText kept %d bytes, over %d", len(got), c.max)
		}
	}
	// A cut never splits a character.
	got, _ := cutText(strings.Repeat("é", 1500), 20, 2001)
	if !strings.HasPrefix(strings.Repeat("é", 1500), got) || len(got) != 2000 {
		t.Errorf("cut in the middle of a rune: %d bytes", len(got))
	}
}

func TestViewerBlocks(t *testing.T) {
	m := &conv.Message{Role: conv.RoleAssistant, Model: "m1", StopReason: conv.StopToolUse, Content: []conv.Block{
		{Type: conv.BlockThinking, Thinking: strings.Repeat("think ", 100)},
		{Type: conv.BlockThinking, Redacted: "opaque"},
		{Type: conv.BlockThinking, Signature: "gAAAAABencrypted", ItemID: "rs_1"},
		{Type: conv.BlockThinking},
		conv.TextBlock("Hello \x1b[31mred\x1b[0m"),
		{Type: conv.BlockToolUse, ID: "t1", Name: "bash", Input: `{"command":"ls"}`},
	}}
	render := func(full bool) string {
		var b strings.Builder
		w := bufio.NewWriter(&b)
		v := viewer{w: w, full: full, tools: map[string]string{}}
		v.message(&session.Entry{Type: session.TypeMessage, Message: m})
		v.message(&session.Entry{Type: session.TypeMessage, Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{
			{Type: conv.BlockToolResult, ToolUseID: "t1", Content: "a\nb", IsError: true,
				Attachments: []conv.Attachment{{Type: "image", MimeType: "image/png", Data: "AAEC"}}},
		}}})
		w.Flush()
		return b.String()
	}
	short := render(false)
	for _, want := range []string{
		"── assistant · m1 · toolUse ──\n",
		"[thinking] think think",
		"…\n[thinking: redacted]\n[thinking: not shown (encrypted, 16 bytes)]\nHello",
		"Hello [31mred[0m\n",
		`→ bash {"command":"ls"}  [t1]` + "\n",
		"── tool result · bash · t1 · error ──\na\nb\n",
		"[image image/png, 3 bytes, sha256 ae4b3280e56e2faf83f414a6e3dabe9d5fbe18976544c05fed121accb85b53fc]\n",
	} {
		if !strings.Contains(short, want) {
			t.Errorf("view lacks %q:\n%s", want, short)
		}
	}
	if strings.Contains(short, "\x1b") || strings.Contains(short, "AAEC") {
		t.Errorf("view has an escape or image data:\n%s", short)
	}
	if full := render(true); !strings.Contains(full, "[thinking]\n"+strings.Repeat("think ", 100)) {
		t.Errorf("--full cut the thinking:\n%s", full)
	}
}

// TestViewerSwitch checks that show marks where a resumed run changed the
// provider or model, and only there.
func TestViewerSwitch(t *testing.T) {
	store := &session.Store{Dir: filepath.Join(t.TempDir(), "sessions")}
	s, err := store.Create("/w", "anthropic", "claude-a")
	if err != nil {
		t.Fatal(err)
	}
	user := func(prov, model, text string) {
		t.Helper()
		if _, err := s.Append(session.Entry{Provider: prov, Model: model, Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock(text)}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(session.Entry{Message: &conv.Message{Role: conv.RoleAssistant, Provider: prov, Model: model, Content: []conv.Block{conv.TextBlock("ok")}}}); err != nil {
			t.Fatal(err)
		}
	}
	user("anthropic", "claude-a", "one")
	user("anthropic", "claude-a", "two")
	user("openai", "gpt-b", "three")
	user("openai", "gpt-b", "four")
	user("anthropic", "claude-a", "five")
	got := closeAndView(t, s)
	if n := strings.Count(got, "── now "); n != 2 {
		t.Errorf("%d switch lines, want 2:\n%s", n, got)
	}
	for _, want := range []string{"ok\n\n── now openai / gpt-b ──\n\n── user ──\nthree\n", "ok\n\n── now anthropic / claude-a ──\n\n── user ──\nfive\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("view lacks %q:\n%s", want, got)
		}
	}
}

// closeAndView closes s and returns what awl sessions show prints for it.
func closeAndView(t *testing.T, s *session.Session) string {
	t.Helper()
	s.Close()
	walk, err := session.OpenWalk(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer walk.Close()
	var b strings.Builder
	w := bufio.NewWriter(&b)
	v := viewer{w: w}
	if err := v.session(walk); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	return b.String()
}

// benchTranscript returns the entry lines (no header) of a session of about
// size bytes, written by the session package: a context message, a prompt,
// then rounds of a bash call and its ~4 KiB output.
func benchTranscript(b *testing.B, size int) []byte {
	b.Helper()
	st := &session.Store{Dir: b.TempDir(), Rand: rand.NewChaCha8([32]byte{9})}
	s, err := st.Create("/ci/app", "anthropic", "claude-sonnet-4-5")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	user := func(blocks ...conv.Block) {
		if _, err := s.Append(session.Entry{Provider: "anthropic", Model: "claude-sonnet-4-5",
			Message: &conv.Message{Role: conv.RoleUser, Content: blocks}}); err != nil {
			b.Fatal(err)
		}
	}
	user(conv.TextBlock("<environment_context>\n  <cwd>/ci/app</cwd>\n</environment_context>"))
	user(conv.TextBlock("fix the failing test in the session package and explain the cause"))
	out := strings.Repeat("session/list.go:42: some output of a command, long enough to be typical\n", 56)
	for n := 0; ; n++ {
		id := "toolu_" + strconv.Itoa(n)
		if _, err := s.Append(session.Entry{Message: &conv.Message{Role: conv.RoleAssistant,
			Model: "claude-sonnet-4-5", StopReason: conv.StopToolUse, Usage: &conv.Usage{Input: 1200, Output: 80},
			Content: []conv.Block{conv.TextBlock("Let me look."), {Type: conv.BlockToolUse, ID: id, Name: "bash", Input: `{"command":"go test ./session/"}`}}}}); err != nil {
			b.Fatal(err)
		}
		user(conv.Block{Type: conv.BlockToolResult, ToolUseID: id, Content: out})
		if fi, err := os.Stat(s.Path); err != nil {
			b.Fatal(err)
		} else if fi.Size() >= int64(size) {
			break
		}
	}
	data, err := os.ReadFile(s.Path)
	if err != nil {
		b.Fatal(err)
	}
	return data[bytes.IndexByte(data, '\n')+1:]
}

// BenchmarkSessionsJSONAll is `awl sessions --json --all` over 1,000
// sessions of 1 MB each, in 10 directories (target: < 500 ms).
func BenchmarkSessionsJSONAll(b *testing.B) {
	const files = 1000
	dir, body := benchStore(b, files)
	var out bytes.Buffer
	args := []string{"--session-dir", dir, "sessions", "--json", "--all"}
	// A listing after the first: the files settled, their verdicts kept.
	time.Sleep(2*time.Second + 100*time.Millisecond)
	Main(context.Background(), args, strings.NewReader(""), &out, io.Discard)
	for b.Loop() {
		out.Reset()
		var errb bytes.Buffer
		if code := Main(context.Background(), args, strings.NewReader(""), &out, &errb); code != 0 {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
	}
	var list []sessionJSON
	if err := json.Unmarshal(out.Bytes(), &list); err != nil || len(list) != files || list[0].Error != "" ||
		list[0].FirstPrompt != "fix the failing test in the session package and explain the cause" {
		b.Fatalf("%d sessions, %v, first %+v", len(list), err, list[0])
	}
	b.ReportMetric(float64(len(body))/1e6, "MB/file")
}

// BenchmarkSessionsVerifyAll is `awl sessions verify --all` over 100 of
// BenchmarkSessionsJSONAll's sessions of 1 MB, in 10 directories.
func BenchmarkSessionsVerifyAll(b *testing.B) {
	const files = 100
	dir, body := benchStore(b, files)
	var out bytes.Buffer
	args := []string{"--session-dir", dir, "sessions", "verify", "--all"}
	for b.Loop() {
		out.Reset()
		var errb bytes.Buffer
		if code := Main(context.Background(), args, strings.NewReader(""), &out, &errb); code != 0 {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
	}
	if n := strings.Count(out.String(), ": ok\n"); n != files {
		b.Fatalf("%d sessions ok, want %d:\n%s", n, files, out.String())
	}
	b.SetBytes(int64(files * len(body)))
}

// benchStore writes files sessions of benchTranscript's 1 MB, in 10
// directories, and returns the sessions directory and the transcript.
func benchStore(b *testing.B, files int) (string, []byte) {
	b.Helper()
	body := benchTranscript(b, 1<<20)
	dir := filepath.Join(b.TempDir(), "sessions")
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for i := range files {
		cwd := fmt.Sprintf("/ci/app%d", i%10)
		created := t0.Add(time.Duration(i) * time.Second)
		id := fmt.Sprintf("019dc5ba-53f6-71a5-ab8f-%012x", i+1)
		hdr, err := json.Marshal(struct {
			Type      string `json:"type"`
			Version   int    `json:"version"`
			ID        string `json:"id"`
			Timestamp string `json:"timestamp"`
			Cwd       string `json:"cwd"`
			Provider  string `json:"provider"`
			Model     string `json:"model"`
		}{"session", 1, id, jsonTime(created), cwd, "anthropic", "claude-sonnet-4-5"})
		if err != nil {
			b.Fatal(err)
		}
		d := filepath.Join(dir, session.EncodeCwd(cwd))
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
		data := append(append(hdr, '\n'), body...)
		if err := os.WriteFile(filepath.Join(d, session.FileName(created, id)), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return dir, body
}

func TestParseCookbook(t *testing.T) {
	md := "# t\n\n```sh\nnot a recipe\n```\n\n### One\n\nText.\n\n```sh\necho 1\n```\n\n```text\n1\n```\n\n## Group\n\n### Two\n\n```sh\necho 2\n```\n\n```text\n2\n```\n"
	rs, err := parseCookbook(md)
	if err != nil || len(rs) != 2 || rs[0].title != "One" || rs[0].script != "echo 1\n" || rs[0].output != "1\n" || rs[1].output != "2\n" {
		t.Fatalf("parseCookbook = %+v, %v", rs, err)
	}
	for _, bad := range []string{
		"### A\n```sh\necho\n```\n",                               // no output block
		"### A\n```sh\necho\n```\n### B\n```text\nx\n```\n",       // output without recipe
		"### A\n```sh\necho\n```\n```text\nx\n```\n```text\n",     // unclosed
		"### A\n```sh\necho\n```\n```sh\necho\n```\n```text\n```", // first has no output
	} {
		if _, err := parseCookbook(bad); err == nil {
			t.Errorf("parseCookbook(%q) = nil error", bad)
		}
	}
	if got := normalizeOutput("019dc5ba-53f6-71a5-ab8f-b1f8709c2572\t2026-11-29T12:00:00.000Z\t/s/x_1.jsonl\n"); got != "<id>\t<time>\t<file>" {
		t.Errorf("normalizeOutput = %q", got)
	}
}

// TestViewerMarks: show marks prunes and compactions, with the compaction's
// summary; an entry edited by hand into something unreadable is shown raw,
// and a summary's control characters never reach the terminal.
func TestViewerMarks(t *testing.T) {
	store := &session.Store{Dir: filepath.Join(t.TempDir(), "sessions")}
	s, err := store.Create("/w", "anthropic", "claude-a")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []session.Entry{
		{Type: session.TypePrune, Fields: []byte(`{"upToId":"abc12345","tokensBefore":52400,"tokensAfter":18000}`)},
		{Type: session.TypeCompaction, Fields: []byte(`{"summary":"Task: fix it.\nState: \u001b[31mdone\u001b[0m.","firstKeptEntryId":"def67890","tokensBefore":1234567,"tokensAfter":812,"provider":"anthropic","model":"claude-a","reason":"threshold","costUsd":0.0123}`)},
		{Type: session.TypeCompaction, Fields: []byte(`{"summary":42,"tokensBefore":"many"}`)},
		{Type: session.TypeCompaction, Fields: []byte(`{"summary":"  ","reason":"manual","costUsd":null}`)},
		{Type: session.TypePrune, Fields: []byte(`{"upToId":["x"]}`)},
	} {
		if _, err := s.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	got := closeAndView(t, s)
	for _, want := range []string{
		"\n── pruned: requests show tool results up to abc12345 as stubs · tokens 52.4k → 18k ──\n",
		"\n── compacted (threshold) · anthropic / claude-a · tokens 1.2M → 812 · $0.0123 ──\n" +
			"requests show this summary in place of the conversation before it (kept whole from def67890):\nTask: fix it.\nState: [31mdone[0m.\n",
		"\n· compaction {\"summary\":42,\"tokensBefore\":\"many\"}\n",
		"\n── compacted (manual) · tokens 0 → 0 ──\nrequests show this summary in place of the conversation before it (nothing kept whole):\n[empty summary]\n",
		"\n· prune {\"upToId\":[\"x\"]}\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("view lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\x1b") {
		t.Errorf("view has an escape:\n%s", got)
	}
}
