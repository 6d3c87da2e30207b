package session

import (
	"errors"
	"os"
	"runtime"
	"testing"
)

func TestRemove(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "anthropic", "m")
	if err != nil {
		t.Fatal(err)
	}
	path := s.Path

	if runtime.GOOS != "windows" && runtime.GOOS != "plan9" {
		// In use: refused, and the file stays.
		err = Remove(path)
		var se *Error
		if !errors.As(err, &se) || se.Kind != KindLocked || se.Path != path {
			t.Fatalf("Remove of a locked session = %v, want KindLocked", err)
		}
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("locked session removed: %v", err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Remove(path); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Remove, Stat = %v", err)
	}
	err = Remove(path)
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindNotFound {
		t.Fatalf("Remove of a missing session = %v, want KindNotFound", err)
	}
}
