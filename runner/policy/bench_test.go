package policy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/awlrun/awl/internal/cputime"
	"mvdan.cc/sh/v3/syntax"
)

// twentyRules are twenty bash rules of a CI job, allow and deny.
var twentyRules = Options{
	Allow: []string{
		"bash(git status),bash(git diff *),bash(git log *),bash(git show *),bash(go test ./...),bash(go vet ./...)",
		"bash(go build *),bash(npm test),bash(npm run lint),bash(echo *),bash(ls *),bash(cat *),bash(grep *)",
		"bash(head *),bash(tail *),bash(wc *),bash(sort *),bash(find . -name *)",
	},
	Deny: []string{"bash(git push *),bash(rm *)"},
}

// command4K is a 4 KB command of the kinds a model writes: pipes, lists,
// substitutions, a loop and a here-document.
func command4K() string {
	var b strings.Builder
	for i := 0; b.Len() < 4096-200; i++ {
		fmt.Fprintf(&b, "git diff --stat HEAD~%d -- src/pkg%d | grep -n 'func ' | sort | head -n 20 && echo \"$(git log -1 --format=%%H)\" >> src/out%d.txt\n", i, i, i)
		if i%5 == 4 {
			fmt.Fprintf(&b, "for f in a%d b%d; do cat \"$f\" | wc -l; done\n", i, i)
		}
	}
	b.WriteString("cat <<EOF\nsummary $(git status)\nEOF\n")
	return b.String()
}

// BenchmarkJudge4K judges a 4 KB command against twenty bash rules
// (target: under 100 µs an operation; docs/performance.md), and with a
// write rule besides, which judges its 27 redirections where they lead.
func BenchmarkJudge4K(b *testing.B) {
	b.Run("bash-rules", func(b *testing.B) { benchJudge(b, twentyRules) })
	withWrite := twentyRules
	withWrite.Allow = append(slices.Clone(withWrite.Allow), "write(src/**)")
	b.Run("and-write-rule", func(b *testing.B) { benchJudge(b, withWrite) })
	// The floor: mvdan.cc/sh's parse of the same command, nothing judged.
	b.Run("parse-only", func(b *testing.B) {
		cmd := command4K()
		parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
		b.SetBytes(int64(len(cmd)))
		b.ReportAllocs()
		cpu0 := cputime.Process()
		for b.Loop() {
			if _, err := parser.Parse(strings.NewReader(cmd), ""); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	})
}

func benchJudge(b *testing.B, o Options) {
	p := mustNew(b, o)
	cmd := command4K()
	if d := p.Bash(cmd); d != nil {
		b.Fatalf("the command is denied: %v", d)
	}
	in, _ := json.Marshal(map[string]string{"command": cmd})
	b.SetBytes(int64(len(cmd)))
	b.ReportAllocs()
	cpu0 := cputime.Process()
	for b.Loop() {
		if p.Check("bash", in) != nil {
			b.Fatal("denied")
		}
	}
	// On a shared machine wall time also counts the wait for a core.
	b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkJudgeNoRules: with no rules a call is never parsed.
func BenchmarkJudgeNoRules(b *testing.B) {
	p := mustNew(b, Options{Allow: []string{"bash,read"}})
	in, _ := json.Marshal(map[string]string{"command": command4K()})
	b.ReportAllocs()
	for b.Loop() {
		if p.Check("bash", in) != nil {
			b.Fatal("denied")
		}
	}
}

// TestNoRulesNeverParses: a run with no bash rule and no write rule does
// not parse a command at all, nor allocate for it.
func TestNoRulesNeverParses(t *testing.T) {
	in, _ := json.Marshal(map[string]string{"command": command4K() + " $(("})
	for _, o := range []Options{{}, {Allow: []string{"bash,read(src/**)"}}, {Deny: []string{"edit"}}} {
		p := mustNew(t, o)
		allocs := testing.AllocsPerRun(100, func() {
			if d := p.Check("bash", in); d != nil {
				t.Fatalf("%+v: denied: %v", o, d)
			}
		})
		if allocs != 0 {
			t.Errorf("%+v: %v allocations a call: the command was parsed", o, allocs)
		}
	}
}
