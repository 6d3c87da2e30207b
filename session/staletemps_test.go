package session

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A creation killed before its rename leaves .<name>.jsonl.tmp, maybe
// with half a header: StaleTemps lists those older than the cut-off, and
// RemoveOlder removes one unless a creation still holds its lock, and
// keeps every other file.
func TestStaleTempsRemoved(t *testing.T) {
	st := testStore(t)
	dir := filepath.Join(st.Dir, EncodeCwd("/w"))
	other := filepath.Join(st.Dir, EncodeCwd("/elsewhere"))
	old := time.Now().Add(-48 * time.Hour)
	write := func(dir, name string, mtime time.Time) string {
		t.Helper()
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(`{"type":"session","vers`), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := write(dir, ".2026-04-25T17-40-15-990Z_x.jsonl.tmp", old)
	held := write(dir, ".2026-04-25T17-40-16-990Z_y.jsonl.tmp", old)
	fresh := write(dir, ".2026-04-25T17-40-17-990Z_z.jsonl.tmp", time.Now())
	notes := write(dir, ".notes.tmp", old)
	elsewhere := write(other, ".2026-04-25T17-40-18-990Z_w.jsonl.tmp", old)

	cutoff := time.Now().Add(-24 * time.Hour)
	got, err := st.StaleTemps("/w", cutoff)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{stale, held}; !slices.Equal(got, want) {
		t.Fatalf("StaleTemps(/w) = %v, want %v", got, want)
	}
	all, err := st.StaleTemps("", cutoff)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(all, elsewhere) || len(all) != 3 {
		t.Fatalf("StaleTemps of every directory = %v, want %s too", all, elsewhere)
	}

	// A creation holds held: its lock is taken, so it is kept.
	f, err := os.OpenFile(held, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		t.Fatal(err)
	}
	if err := CheckRemoveOlder(stale, cutoff); err != nil {
		t.Errorf("CheckRemoveOlder(stale): %v", err)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Fatalf("the dry run removed it: %v", err)
	}
	if err := RemoveOlder(stale, cutoff); err != nil {
		t.Errorf("RemoveOlder(stale): %v", err)
	}
	if err := RemoveOlder(held, cutoff); !isKind(err, KindLocked) {
		t.Errorf("RemoveOlder(held) = %v, want KindLocked", err)
	}
	// A temporary file touched since it was listed is a creation going on.
	if err := RemoveOlder(fresh, cutoff); !isKind(err, KindModified) {
		t.Errorf("RemoveOlder(fresh) = %v, want KindModified", err)
	}
	for p, want := range map[string]bool{stale: false, held: true, fresh: true, notes: true, elsewhere: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}
