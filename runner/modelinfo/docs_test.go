package modelinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDocsTableIsTheEmbeddedTable checks that docs/cost.md shows exactly
// the embedded prices. UPDATE_GOLDEN=1 rewrites the docs' table.
func TestDocsTableIsTheEmbeddedTable(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "cost.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- prices:begin -->\n", "<!-- prices:end -->"
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/cost.md lacks the %q … %q markers", begin, end)
	}
	want := table(Default())
	if got := doc[i+len(begin) : j]; got != want {
		if os.Getenv("UPDATE_GOLDEN") == "1" {
			if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("docs/cost.md's price table is not models.json's; run UPDATE_GOLDEN=1 go test ./runner/modelinfo")
	}
	if !strings.Contains(doc, "Checked on "+Default().Updated) {
		t.Errorf("docs/cost.md does not give the table's date %s", Default().Updated)
	}
}

func table(t *Table) string {
	var b strings.Builder
	b.WriteString("| provider | model (aliases) | input | output | cache read | cache write | cache write 1h | over N prompt tokens | context | source |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, m := range t.Models() {
		name := "`" + m.Name + "`"
		if len(m.Aliases) > 0 {
			name += " (`" + strings.Join(m.Aliases, "`, `") + "`)"
		}
		long := ""
		if l := m.LongContext; l != nil {
			long = fmt.Sprintf("> %d: %s / %s / %s / %s", l.Above, num(l.Input), num(l.Output), num(l.CacheRead), num(l.CacheWrite))
		}
		src, note, _ := strings.Cut(m.Source, " ")
		link := "[" + strings.TrimPrefix(strings.TrimPrefix(src, "https://"), "www.") + "](" + src + ")"
		if note != "" {
			link += " " + note
		}
		write1h := ""
		if m.Provider == "anthropic" {
			write1h = num(m.Write1h())
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %d | %s |\n", m.Provider, name,
			num(m.Input), num(m.Output), num(m.CacheRead), num(m.CacheWrite), write1h, long, m.ContextWindow, link)
	}
	return b.String()
}
