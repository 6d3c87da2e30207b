package session

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"testing"
)

// TestForget: a session that forgets the entries before one of its active
// path holds only that entry and what came after, its active path starts
// there, appends go on from the leaf, no new entry takes a forgotten id,
// and the file is untouched: opened again, it holds every entry.
func TestForget(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []string
	for i := range 10 {
		ids = append(ids, mustAppend(t, s, Entry{Message: userMsg(fmt.Sprint("m", i))}).ID)
	}
	// Opened again, the session has drawn no id yet: Forget must keep
	// the forgotten ones from being drawn.
	s.Close()
	if s, err = st.Open(s.Path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Forget("ffffffff"); err == nil {
		t.Error("Forget of an id that is not on the path succeeded")
	}
	before := readFile(t, s.Path)
	if err := s.Forget(ids[6]); err != nil {
		t.Fatal(err)
	}
	if len(s.Entries) != 4 || s.Entries[0].ID != ids[6] {
		t.Fatalf("after Forget the session holds %d entries from %s; want 4 from %s", len(s.Entries), s.Entries[0].ID, ids[6])
	}
	if !bytes.Equal(readFile(t, s.Path), before) {
		t.Error("Forget changed the file")
	}
	// The next id drawn is a forgotten one: it must be passed over.
	forgotten, _ := hex.DecodeString(ids[2])
	s.Rand = bytes.NewReader(append(forgotten, 0xab, 0xcd, 0xef, 0x01))
	e := mustAppend(t, s, Entry{Message: userMsg("after")})
	if e.ID != "abcdef01" || e.ParentID != ids[9] {
		t.Errorf("appended after Forget: id %s parent %s; want abcdef01 (not the forgotten %s) and %s", e.ID, e.ParentID, ids[2], ids[9])
	}
	path := s.ActivePath()
	if len(path) != 5 || path[0].ID != ids[6] || path[4].ID != e.ID {
		t.Errorf("active path after Forget: %d entries from %s to %s; want 5 from %s to %s", len(path), path[0].ID, path[len(path)-1].ID, ids[6], e.ID)
	}
	if err := s.Forget(ids[8]); err != nil || len(s.ActivePath()) != 3 {
		t.Errorf("a second Forget: %v, %d entries on the path; want 3", err, len(s.ActivePath()))
	}
	s.Close()
	again, err := Open(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if got := len(again.ActivePath()); got != 11 {
		t.Errorf("the session opened again has %d entries on its path, want 11", got)
	}
}
