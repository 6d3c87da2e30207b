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
