package modelinfo

import (
	"regexp"
	"testing"
)

// undated strips what the regexp it replaced stripped.
func TestUndated(t *testing.T) {
	re := regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2})$`)
	for _, m := range []string{
		"claude-sonnet-4-5-20250929", "gpt-5-2025-08-07", "gpt-5", "m-1", "x-2025080", "x-202508071",
		"x-2025-8-07", "x-2025-08-0a", "x-20250a29", "gpt-4o-2024-11-20-preview", "a-2025-08-07-20250929",
		"x2025-08-07", "x_20250929", "-", "", "a-00000000", "a-0000-00-00", "a--2025-08-07",
	} {
		want := re.ReplaceAllString(m, "")
		if got := undated(m); got != want {
			t.Errorf("undated(%q) = %q, want %q", m, got, want)
		}
	}
}
