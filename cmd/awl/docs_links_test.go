package main

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink matches an inline Markdown link or image, [text](target), and a
// reference definition, [name]: target.
var (
	mdLink     = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	mdRefDef   = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+.*)?$`)
	mdHeading  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	inlineCode = regexp.MustCompile("`[^`]*`")
)

// TestDocLinks checks that every relative link in README.md and docs/
// resolves to a file inside the repository, and that an anchor names a
// heading of its target: a published repository shows readers nothing
// else, so a link to ../shared or to a file never committed is a dead end.
func TestDocLinks(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(root, "README.md")}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	files = append(files, docs...)
	anchors := map[string]map[string]bool{}
	checked := 0
	for _, f := range files {
		for _, l := range docLinks(t, f) {
			checked++
			if err := checkLink(root, f, l.target, anchors); err != nil {
				t.Errorf("%s:%d: link %q: %v", rel(root, f), l.line, l.target, err)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d links: the parser is broken", checked)
	}
}

type docLink struct {
	line   int
	target string
}

// proseLines yields the lines of a Markdown text with their 0-based index,
// skipping fenced code blocks (``` or ~~~) and their fences.
func proseLines(text string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		fence := ""
		for i, line := range strings.Split(text, "\n") {
			trim := strings.TrimSpace(line)
			if fence != "" {
				if strings.HasPrefix(trim, fence) {
					fence = ""
				}
				continue
			}
			if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
				fence = trim[:3]
				continue
			}
			if !yield(i, line) {
				return
			}
		}
	}
}

// docLinks returns the links of a Markdown file outside code.
func docLinks(t *testing.T, path string) []docLink {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []docLink
	for i, line := range proseLines(string(b)) {
		line = inlineCode.ReplaceAllString(line, "")
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			out = append(out, docLink{i + 1, m[1]})
		}
		if m := mdRefDef.FindStringSubmatch(line); m != nil {
			out = append(out, docLink{i + 1, m[1]})
		}
	}
	return out
}

// checkLink resolves target, relative to the file from, inside root.
func checkLink(root, from, target string, anchors map[string]map[string]bool) error {
	if u := strings.ToLower(target); strings.Contains(u, "://") || strings.HasPrefix(u, "mailto:") {
		return nil
	}
	file, anchor, _ := strings.Cut(target, "#")
	dest := from
	if file != "" {
		if filepath.IsAbs(file) {
			return fmt.Errorf("an absolute path")
		}
		dest = filepath.Join(filepath.Dir(from), filepath.FromSlash(file))
		if r, err := filepath.Rel(root, dest); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return fmt.Errorf("points outside the repository")
		}
		if _, err := os.Stat(dest); err != nil {
			return fmt.Errorf("no such file in the repository")
		}
	}
	if anchor == "" || !strings.HasSuffix(dest, ".md") {
		return nil
	}
	if anchors[dest] == nil {
		anchors[dest] = headingAnchors(dest)
	}
	if !anchors[dest][anchor] {
		return fmt.Errorf("no heading with anchor #%s in %s", anchor, filepath.Base(dest))
	}
	return nil
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown file: lower case, punctuation dropped, spaces as hyphens, a
// repeated one suffixed -1, -2….
func headingAnchors(path string) map[string]bool {
	b, _ := os.ReadFile(path)
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range proseLines(string(b)) {
		m := mdHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := strings.Map(func(r rune) rune {
			switch {
			case r == ' ':
				return '-'
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				return unicode.ToLower(r)
			}
			return -1
		}, m[1])
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}
