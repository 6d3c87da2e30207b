package policy

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestIntersect: a project's list narrows the user's by what the rules
// mean, not by their text: a narrower rule of either list is kept where
// the other's contains it; rules neither of which contains the other are
// dropped, never widened into their union.
func TestIntersect(t *testing.T) {
	for _, tc := range []struct {
		below, above, want []string
	}{
		{[]string{"bash(git *)"}, []string{"bash(git diff *)"}, []string{"bash(git diff *)"}},
		{[]string{"bash(git diff *)"}, []string{"bash(git *)"}, []string{"bash(git diff *)"}},
		{[]string{"bash"}, []string{"bash(go test ./...)", "read"}, []string{"bash(go test ./...)"}},
		{[]string{"bash(git diff:*)"}, []string{"bash(git diff *)"}, []string{"bash(git diff *)", "bash(git diff:*)"}},
		{[]string{"bash(git diff *)"}, []string{"bash(git diff)"}, []string{"bash(git diff)"}},
		{[]string{"bash(git diff)"}, []string{"bash(git diff *)"}, []string{"bash(git diff)"}},
		{[]string{"bash(git log *)"}, []string{"bash(git diff *)"}, []string{}},
		{[]string{"bash(go test *)"}, []string{"bash(go *)", "bash(go test -run X ./...)"}, []string{"bash(go test -run X ./...)", "bash(go test *)"}},
		{[]string{"bash(npm run test*)"}, []string{"bash(npm run test:unit)", "bash(npm run t*)"}, []string{"bash(npm run test:unit)", "bash(npm run test*)"}},
		{[]string{"bash(rm \\*)"}, []string{"bash(rm x*)"}, []string{}},
		{[]string{"bash(git * HEAD)"}, []string{"bash(git diff HEAD)", "bash(git diff HEAD --stat)"}, []string{"bash(git diff HEAD)"}},
		{[]string{"read"}, []string{"read(src/**)"}, []string{}},
		{[]string{"*"}, []string{"read(src/**)", "mcp__gh__list"}, []string{"read(src/**)", "mcp__gh__list"}},
		{[]string{"read(src/**)"}, []string{"grep(src/a/**)", "read(**)", "ls(docs/**)"}, []string{"grep(src/a/**)", "read(src/**)"}},
		{[]string{"grep(src/**)"}, []string{"read(src/**)"}, []string{"grep(src/**)"}},
		{[]string{"grep(src/**)"}, []string{"read(src/*.go)"}, []string{}},
		{[]string{"write(src/**)"}, []string{"edit(src/*.go)", "write(src)", "edit(src/**/x)"}, []string{"edit(src/*.go)", "write(src)", "edit(src/**/x)"}},
		{[]string{"edit(src/*.go)"}, []string{"edit(src/**)"}, []string{"edit(src/*.go)"}},
		{[]string{"read(**)"}, []string{"read(../secrets/**)", "read(/etc/passwd)"}, []string{}},
		{[]string{"mcp__github__*"}, []string{"mcp__github__list_issues", "mcp__gitlab__x", "mcp__github__get_*"}, []string{"mcp__github__list_issues", "mcp__github__get_*"}},
		{[]string{"mcp__git*"}, []string{"mcp__github__*"}, []string{"mcp__github__*"}},
		{[]string{"mcp__github__?"}, []string{"mcp__github__*"}, []string{"mcp__github__?"}},
		{[]string{"mcp__github__*x"}, []string{"mcp__github__?x"}, []string{}},
		{[]string{"read", "grep"}, []string{"grep", "read", "grep"}, []string{"grep", "read"}},
		{[]string{"read,bash(echo a,b)"}, []string{"bash(echo a,b)"}, []string{"bash(echo a,b)"}},
		{[]string{"bash(a; b)"}, []string{"bash(a; b)"}, []string{"bash(a; b)"}},
		{[]string{"bash(a; b)"}, []string{"bash"}, []string{}},
		{[]string{}, []string{"read"}, []string{}},
	} {
		if got := Intersect(tc.below, tc.above); !slices.Equal(got, tc.want) {
			t.Errorf("Intersect(%q, %q) = %q, want %q", tc.below, tc.above, got, tc.want)
		}
	}
}

// TestContainsNeverWidens: for every pair of rules Contains says one holds
// the other, every call of a sample set the inner one allows, the outer
// one allows too, judged by the policy itself: a bash command word by
// word, a path where it lies.
func TestContainsNeverWidens(t *testing.T) {
	rules := []string{
		"bash", "bash(git *)", "bash(git diff *)", "bash(git diff)", "bash(git diff:*)", "bash(git * HEAD)", "bash(*)",
		"bash(go test ./...)", "bash(go *)", "bash(npm run test*)", "bash(npm run t*)", "bash(rm \\*)", "bash(rm x*)",
		"bash(\"a b\" *)", "bash(a? *)", "bash(\"a*\" *)",
		"read", "grep", "edit", "write", "*", "g*", "read(src/**)", "read(**)", "read(src/*.go)", "grep(src/**)",
		"grep(src/a/**)", "write(src/**)", "edit(src/*.go)", "edit(src/**)", "read(../**)", "read(/etc/**)", "read(*)",
		"read(src)", "ls(src/**/x)", "write(src/)",
	}
	commands := []string{
		"git diff", "git diff HEAD", "git diff HEAD --stat", "git log", "git", "go test ./...", "go build", "npm run test",
		"npm run test:unit", "npm run t", "rm *", "rm x", "rm xyz", "a b c", "'a b' c", "ab c", "ax", "git diff $X",
		"git $X HEAD", "git diff && rm -rf /", "echo hi > src/a.go", "git diff HEAD | head",
	}
	calls := [][2]string{
		{"read", "src/a.go"}, {"read", "src/b/c.go"}, {"read", "docs/x"}, {"read", "../secrets/k"}, {"read", "/etc/passwd"},
		{"read", "src"}, {"grep", "src/a/b"}, {"grep", "src/x"}, {"ls", "src/q/x"}, {"glob", "."}, {"edit", "src/a.go"},
		{"edit", "src/a/b.go"}, {"write", "src/n.txt"}, {"write", "x"}, {"view_image", "src/i.png"},
	}
	dir := t.TempDir()
	judge := func(rule string) *Policy {
		p, err := New(Options{Allow: []string{rule}, Dir: dir})
		if err != nil {
			t.Fatalf("%s: %v", rule, err)
		}
		return p
	}
	pairs := 0
	for _, a := range rules {
		ra, _ := ParseRule(a)
		pa := judge(a)
		for _, b := range rules {
			rb, _ := ParseRule(b)
			if !Contains(ra, rb) {
				continue
			}
			pairs++
			pb := judge(b)
			for _, cmd := range commands {
				in, _ := json.Marshal(map[string]string{"command": cmd})
				if pb.Check("bash", in) == nil && pa.Check("bash", in) != nil {
					t.Errorf("Contains(%s, %s), but %q is allowed by the inner one only", a, b, cmd)
				}
			}
			for _, c := range calls {
				in, _ := json.Marshal(map[string]string{"path": c[1]})
				if pb.Check(c[0], in) == nil && pa.Check(c[0], in) != nil {
					t.Errorf("Contains(%s, %s), but %s %s is allowed by the inner one only", a, b, c[0], c[1])
				}
			}
		}
	}
	if pairs < 3*len(rules) {
		t.Errorf("only %d pairs contained: the sample says too little", pairs)
	}
}
