package policy

import (
	"reflect"
	"testing"
)

// TestPlainWords: the usual rules' patterns are split without the shell's
// parser, as the parser splits them; a pattern the shell could read
// otherwise (a quote, an expansion, an operator, an assignment, a
// reserved word first) is left to it.
func TestPlainWords(t *testing.T) {
	for _, p := range []string{"git diff *", "go test ./...", "npm run lint:fix", "make -C build all", "ls\t-la", "x a=b", "*", "x *", "git log --format=%H@%s^ +1,2"} {
		if !checkPlainWords(t, p) {
			t.Errorf("plainWords(%q) leaves it to the shell", p)
		}
	}
	others := []string{"", " ", "a=b", "echo 'a b'", `echo "a"`, `echo \*`, "echo $HOME", "a=b c", "echo a; rm x", "echo a|b", "echo {a,b}",
		"echo a?", "echo [ab]", "! x", "# x", "echo ~", "echo a\nb", "echo (a)", "echo a&", "echo a>b", "echo é"}
	others = append(others, reservedWords...)
	for _, w := range reservedWords {
		others = append(others, w+" x")
	}
	for _, p := range others {
		if checkPlainWords(t, p) {
			t.Errorf("plainWords(%q) splits it", p)
		}
	}
}

// checkPlainWords tells whether plainWords splits p, and checks that
// what it makes of it is the shell parser's pattern.
func checkPlainWords(t *testing.T, p string) bool {
	t.Helper()
	words, ok := plainWords(p)
	if !ok {
		return false
	}
	want, err := shellPattern(p)
	if err != nil {
		t.Fatalf("plainWords splits %q, which the shell's parser refuses: %v", p, err)
	}
	if got := newCmdPattern(words); !reflect.DeepEqual(got, want) {
		t.Fatalf("plainWords(%q) gives %+v, the shell's parser %+v", p, got, want)
	}
	return true
}

// FuzzPlainWordsAreTheShells: whatever plainWords splits, mvdan.cc/sh
// parses to the same pattern.
func FuzzPlainWordsAreTheShells(f *testing.F) {
	for _, s := range []string{"git diff *", "go test ./...", "a b=c", "for", "x\ty  z", "*", "a *", "-x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		checkPlainWords(t, p)
	})
}
