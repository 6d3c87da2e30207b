package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// helpMarker opens the block of docs/cli.md that is `awl run --help`'s
// output; the next fenced block is that output.
const helpMarker = "<!-- the output of `awl run --help`, written by TestCLIDocHelp: AWL_UPDATE_DOCS=1 go test ./cmd/awl -run TestCLIDocHelp -->"

// TestCLIDocHelp holds the last section of docs/cli.md to what `awl run
// --help` prints, byte for byte; with AWL_UPDATE_DOCS=1 it rewrites that
// block instead.
func TestCLIDocHelp(t *testing.T) {
	t.Setenv("COLUMNS", "80") // kong wraps the help at COLUMNS
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"run", "--help"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("awl run --help exited %d: %s", code, stderr.String())
	}
	help := stdout.String()
	if !strings.Contains(help, "--resume=REF") || !strings.HasPrefix(help, "Usage: awl run") {
		t.Fatalf("awl run --help printed no flags:\n%s", help)
	}
	data, err := os.ReadFile(cliDoc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, helpMarker)
	if i < 0 {
		t.Fatalf("docs/cli.md lacks the line %s", helpMarker)
	}
	start := i + len(helpMarker) + len("\n```text\n")
	if !strings.HasPrefix(text[i+len(helpMarker):], "\n```text\n") {
		t.Fatal("docs/cli.md: the generated help is not a ```text block right after its marker")
	}
	end := strings.Index(text[start:], "```\n")
	if end < 0 {
		t.Fatal("docs/cli.md: the generated help block never ends")
	}
	if got := text[start : start+end]; got != help {
		if os.Getenv("AWL_UPDATE_DOCS") == "1" {
			if err := os.WriteFile(cliDoc, []byte(text[:start]+help+text[start+end:]), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Log("rewrote the help block of docs/cli.md")
			return
		}
		t.Errorf("docs/cli.md's help block is not what `awl run --help` prints: run AWL_UPDATE_DOCS=1 go test ./cmd/awl -run TestCLIDocHelp, and update the flag table above it\n--- docs/cli.md\n%s\n--- awl run --help\n%s", got, help)
	}
}

// TestReadmeShape holds README.md to what it is for, read in two minutes:
// under 160 lines, the sections a newcomer needs, and a map from which
// every page of docs/ is reached, directly or through another page.
func TestReadmeShape(t *testing.T) {
	root := filepath.Join("..", "..")
	readme := filepath.Join(root, "README.md")
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if n := strings.Count(text, "\n"); n >= 160 {
		t.Errorf("README.md has %d lines; keep it under 160, and move reference material to docs/", n)
	}
	for _, h := range []string{"## Install", "## The two commands", "## Real use", "## Chaining steps", "## Exit codes", "## Documentation"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(h) + `\b`).MatchString(text) {
			t.Errorf("README.md lacks the section %q", h)
		}
	}
	two := docSection(t, readme, "The two commands (from a clone, no API key)")
	for _, want := range []string{"make demo", "make test", "MCP_NPM_OFFLINE=1", "Go 1.26", "min"} {
		if !strings.Contains(two, want) {
			t.Errorf("README.md's two commands do not say %q (what each takes and needs)", want)
		}
	}
	// Every docs page is reached from README.md by following relative
	// links between Markdown files.
	reached := map[string]bool{}
	queue := []string{readme}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		for _, l := range docLinks(t, f) {
			file, _, _ := strings.Cut(l.target, "#")
			if file == "" || strings.Contains(file, "://") || !strings.HasSuffix(file, ".md") {
				continue
			}
			dest := filepath.Clean(filepath.Join(filepath.Dir(f), file))
			if !reached[dest] {
				reached[dest] = true
				queue = append(queue, dest)
			}
		}
	}
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if len(pages) < 10 {
		t.Fatalf("found %d pages in docs/", len(pages))
	}
	for _, p := range pages {
		if !reached[filepath.Clean(p)] {
			t.Errorf("%s is reached from no link of README.md's map or of the pages it links: add it to the map", rel(root, p))
		}
	}
}

// TestDocsNeedNoUuidgen: no example runs uuidgen, which Debian's images
// and many CI runners lack.
func TestDocsNeedNoUuidgen(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	files = append(files, filepath.Join("..", "..", "README.md"), filepath.Join("..", "..", "examples", "README.md"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte("uuidgen")) {
			t.Errorf("%s names uuidgen, which many runners lack: use $(cat /proc/sys/kernel/random/uuid) or a session id awl printed", f)
		}
	}
}
