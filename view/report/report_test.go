package report

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/awlrun/awl/session"
)

// writePath writes the page of the session file at path to w.
func writePath(w io.Writer, path string) error {
	s, err := session.OpenWalk(path)
	if err != nil {
		return err
	}
	defer s.Close()
	return Write(w, s)
}

func render(t *testing.T, path string) string {
	t.Helper()
	var b bytes.Buffer
	if err := writePath(&b, path); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// testdata/hostile.jsonl holds markup and workflow commands in every place
// a model or a tool can put them: the prompt, the answer, a tool input, a
// tool output, the summary, a run's error, the cwd; and an image whose type
// is not an image's.
func TestHostileTextIsEscaped(t *testing.T) {
	page := render(t, "testdata/hostile.jsonl")
	for _, bad := range []string{"<script", "<img src=x", "<b>bold", "</div><b>", "data:text/html", "<the>", "onerror=console.error(1)>"} {
		if strings.Contains(page, bad) {
			t.Errorf("unescaped %q in the page", bad)
		}
	}
	for _, want := range []string{
		"&lt;script&gt;console.error(&#34;tool&#34;)&lt;/script&gt;",
		"Fix it &lt;script&gt;console.error(&#39;prompt&#39;)&lt;/script&gt;",
		"go test ./... # &lt;img src=x onerror=console.error(1)&gt;",
		"I&#39;ll run the tests &lt;/div&gt;&lt;b&gt;bold?&lt;/b&gt;",
		"\n::set-output name=pwned::1\n", // as text, inside a <pre>
		"/home/ci/&lt;repo&gt;",
		"image of type text/html not shown",
		"go test ./...: exit code 1 &lt;b&gt;",
		"1. Task: fix &lt;the&gt; test",
		// What a pre-tool hook decided, its command, reason and input.
		`<div class="hook deny"><b>hook deny</b> · <code>&lt;b&gt;hook&lt;/b&gt; &amp;&amp; echo</code> · &lt;script&gt;console.error(&#34;hook&#34;)&lt;/script&gt;`,
		`{&#34;command&#34;:&#34;&lt;img src=x onerror=console.error(4)&gt;&#34;}`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("missing %q", want)
		}
	}
	// The only elements are the page's own: no script, no style but the
	// head's, nothing loaded from elsewhere.
	if n := strings.Count(page, "<style>"); n != 1 {
		t.Errorf("%d style elements", n)
	}
	for _, bad := range []string{"<script", "<iframe", "<link rel=\"stylesheet\"", "http://", "https://", "src=\"//"} {
		if bad == "http://" {
			// The SVG namespace is a name, not a resource.
			if strings.Count(page, bad) != strings.Count(page, `xmlns="http://www.w3.org/2000/svg"`) {
				t.Errorf("a URL in the page")
			}
			continue
		}
		if strings.Contains(page, bad) {
			t.Errorf("%q in the page", bad)
		}
	}
	for _, m := range regexp.MustCompile(`src="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "data:image/png;base64,") {
			t.Errorf("an image from elsewhere: %s", m[1])
		}
	}
}

func TestStructure(t *testing.T) {
	page := render(t, "testdata/hostile.jsonl")
	for _, want := range []string{
		// totals: 3 turns, input 900+1200+18111+300, the compaction's
		// summary request included; cost summed.
		"<td>3</td><td>20511</td><td>180</td><td>4096</td><td>1024</td><td>$0.0882</td><td>16.0 %</td><td>2</td><td>1</td><td>1</td><td>1</td><td>1</td><td>1</td>",
		`<section class="msg assistant" id="turn-1"><h3>turn 1 · claude-sonnet-4-5 · 900 in · 40 out · cache 4096 read, 1024 written · $0.0123`,
		`<details class="thinking"><summary>thinking</summary>`,
		`<div class="tool error"><div class="call"><b>bash</b>`,
		`<details class="out"><summary>error · 5.0 KiB</summary>`,
		`… 162 more lines</span></pre><details class="all"><summary>show all (5.0 KiB)</summary>`,
		`<div class="mark prune"><b>prune</b>`,
		`<div class="mark compaction"><b>compaction</b> (threshold) · 16105 → 2579 tokens`,
		`<section class="msg check"><h3>check feedback</h3>`,
		`<div class="mark run fail"><b>end of run</b> · exit 8 check_failed · 3 turns · $0.0882 · 48.2s`,
		`<details class="msg system"><summary>system prompt</summary>`,
		`<details class="msg context"><summary>context shown to the model</summary>`,
		`<img alt="image" src="data:image/png;base64,iVBOR`,
		`<svg role="img"`,
		`<a href="#turn-3">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("missing %q", want)
		}
	}
	// The tool results are shown with their calls, not again on their own.
	if strings.Contains(page, "result of <code>") {
		t.Error("a tool result shown apart from its call")
	}
	if n := strings.Count(page, `<section class="msg user">`); n != 1 {
		t.Errorf("%d prompt sections, want 1 (the tool results are not prompts)", n)
	}
	// Each tool's output is shown once cut (with the whole under show all):
	// the first line is there twice, the last once.
	if n := strings.Count(page, "line 1 of the build log\n"); n != 2 {
		t.Errorf("first line %d times", n)
	}
	if n := strings.Count(page, "line 200 of the build log"); n != 1 {
		t.Errorf("last line %d times", n)
	}
}

func TestHeadOf(t *testing.T) {
	if got := headOf("a\nb\n"); got != "a\nb\n" {
		t.Errorf("short text cut: %q", got)
	}
	long := strings.Repeat("é", cutBytes) // 2 bytes a rune, no line break
	h := headOf(long)
	if len(h) > cutBytes || !strings.HasPrefix(long, h) || len(h)%2 != 0 {
		t.Errorf("cut inside a character or over the limit: %d bytes", len(h))
	}
	lines := strings.Repeat("x\n", 100)
	if got := headOf(lines); got != strings.Repeat("x\n", cutLines) {
		t.Errorf("cut to %d lines", strings.Count(got, "\n"))
	}
}

func TestEscControlCharacters(t *testing.T) {
	var b bytes.Buffer
	r := &renderer{}
	r.w = newWriter(&b)
	r.esc("a\x00b\x1b[31mc\td\ne\x7f")
	r.w.Flush()
	if got := b.String(); got != "ab[31mc\td\ne" {
		t.Errorf("%q", got)
	}
}
