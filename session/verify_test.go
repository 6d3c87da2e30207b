package session

import (
	"os"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
)

// TestVerifyAgreesWithLoad: Verify finds a problem exactly when a resume
// (Load) refuses the file, its first problem is the resume's error, and it
// goes on to report the later ones.
func TestVerifyAgreesWithLoad(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "anthropic", "m")
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"one", "two"} {
		mustAppend(t, s, Entry{Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock(text)}}})
	}
	s.Close()
	good, _ := os.ReadFile(s.Path)
	cases := map[string]struct {
		data     string
		problems int
		torn     bool
	}{
		"good":           {string(good), 0, false},
		"torn last line": {string(good) + `{"type":"mess`, 0, true},
		"wrong type":     {strings.Replace(string(good), `"text":"one"`, `"text":5`, 1), 1, false},
		"two bad lines":  {strings.Replace(string(good), `"text":"one"`, `"text":5`, 1) + "not json\n{}\n", 3, false},
		"no header":      {"{}\n", 1, false},
		"empty":          {"", 1, false},
		"second header":  {string(good) + strings.SplitN(string(good), "\n", 2)[0] + "\n", 1, false},
	}
	for name, c := range cases {
		if err := os.WriteFile(s.Path, []byte(c.data), 0o600); err != nil {
			t.Fatal(err)
		}
		v := Verify(s.Path)
		_, lerr := Load(s.Path)
		if len(v.Problems) != c.problems || v.Torn != c.torn {
			t.Errorf("%s: %d problems %v, torn %v; want %d, %v", name, len(v.Problems), v.Problems, v.Torn, c.problems, c.torn)
		}
		if (lerr == nil) != (len(v.Problems) == 0) || lerr != nil && lerr.Error() != v.Problems[0].Msg {
			t.Errorf("%s: Load says %v, Verify %v", name, lerr, v.Problems)
		}
	}
}

// TestInvalidUTF8Refused: lines are UTF-8. A middle line holding invalid
// bytes inside a string is refused by a resume (Open and Load) and reported
// by Verify as path:line: invalid UTF-8, like any other bad middle line;
// Verify still gives the header's id.
func TestInvalidUTF8Refused(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "anthropic", "m")
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"one", "two"} {
		mustAppend(t, s, Entry{Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock(text)}}})
	}
	s.Close()
	good, _ := os.ReadFile(s.Path)
	bad := strings.Replace(string(good), `"text":"one"`, "\"text\":\"o\xff\xfene\"", 1)
	if bad == string(good) {
		t.Fatal("the entry to spoil is missing")
	}
	if err := os.WriteFile(s.Path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	want := s.Path + ":2: invalid UTF-8"
	v := Verify(s.Path)
	if len(v.Problems) != 1 || v.Problems[0].Msg != want || v.Problems[0].Kind != KindCorrupt {
		t.Errorf("Verify: %v; want one problem %q", v.Problems, want)
	}
	if v.ID != s.Header.ID {
		t.Errorf("Verify ID = %q, want the header's %q", v.ID, s.Header.ID)
	}
	if _, err := Load(s.Path); err == nil || err.Error() != want {
		t.Errorf("Load: %v; want %q", err, want)
	}
	if o, err := Open(s.Path); err == nil || err.Error() != want {
		if o != nil {
			o.Close()
		}
		t.Errorf("Open: %v; want %q", err, want)
	}
	// In the header too.
	hbad := strings.Replace(string(good), `"cwd":"/w"`, "\"cwd\":\"/w\xff\"", 1)
	if hbad == string(good) {
		t.Fatal("the header's cwd is missing")
	}
	if err := os.WriteFile(s.Path, []byte(hbad), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(s.Path); err == nil || err.Error() != s.Path+":1: invalid UTF-8" {
		t.Errorf("Load of a header with invalid UTF-8: %v", err)
	}
}
