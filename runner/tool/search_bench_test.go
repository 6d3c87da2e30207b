package tool

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/internal/cputime"
)

// The search benchmarks run over Go's own source tree, which every machine
// with Go has, and run ripgrep on the same tree in the same run when it is
// installed, so the two figures are taken under the same load:
//
//	go test -run '^$' -bench 'Grep|Glob' -benchmem ./runner/tool/
//
// Compare each awl sub-benchmark with the rg one next to it: ns/op is wall
// time, cpu-ns/op the CPU time (user and system, all threads) per search,
// which a loaded machine disturbs less.

func goSrc(b *testing.B) string {
	b.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "src")
	if _, err := os.Stat(filepath.Join(dir, "go", "ast")); err != nil {
		b.Skipf("no Go source tree at %s", dir)
	}
	return dir
}

// runRg runs ripgrep with args in dir b.N times, or skips when it is not
// installed.
func runRg(b *testing.B, dir string, args ...string) {
	b.Helper()
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("rg is not installed")
	}
	args = append([]string{"--no-config", "--hidden"}, args...)
	var cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		cmd := exec.Command(rg, args...)
		cmd.Dir = dir
		cmd.Stdout = io.Discard
		if err := cmd.Run(); err != nil {
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				b.Fatalf("rg %s: %v", strings.Join(args, " "), err)
			}
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func runTool(b *testing.B, dir, name string, in map[string]any) {
	b.Helper()
	tl := builtinNamed(b, Env{Dir: dir}, name)
	input, err := json.Marshal(in)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	start := cputime.Process()
	for b.Loop() {
		if res := tl.Run(ctx, input); res.IsError {
			b.Fatal(res.Content)
		}
	}
	b.ReportMetric(float64((cputime.Process()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func BenchmarkGrep(b *testing.B) {
	cases := []struct {
		name string
		in   map[string]any
		rg   []string
	}{
		// A literal, in Go files only.
		{"literal", map[string]any{"pattern": `func NewReader\(`, "glob": "*.go"}, []string{"-c", "-g", "*.go", `func NewReader\(`}},
		// A literal in every file.
		{"literal-all", map[string]any{"pattern": `TODO\(rsc\)`}, []string{"-c", `TODO\(rsc\)`}},
		// A literal followed by a class: literal-prefixed.
		{"prefixed", map[string]any{"pattern": `func \(\w+ \*Reader\) Read\w*\(`}, []string{"-c", `func \(\w+ \*Reader\) Read\w*\(`}},
		// Case-insensitive literal.
		{"ignore-case", map[string]any{"pattern": `newreader`, "ignore_case": true}, []string{"-c", "-i", `newreader`}},
		// No literal at all.
		{"no-literal", map[string]any{"pattern": `[A-Z]{3}[0-9]{2}\(`}, []string{"-c", `[A-Z]{3}[0-9]{2}\(`}},
	}
	dir := goSrc(b)
	for _, c := range cases {
		b.Run(c.name+"/awl", func(b *testing.B) { runTool(b, dir, "grep", c.in) })
		b.Run(c.name+"/rg", func(b *testing.B) { runRg(b, dir, c.rg...) })
	}
}

func BenchmarkGlob(b *testing.B) {
	dir := goSrc(b)
	b.Run("test-files/awl", func(b *testing.B) { runTool(b, dir, "glob", map[string]any{"pattern": "**/*_test.go"}) })
	b.Run("test-files/rg", func(b *testing.B) { runRg(b, dir, "--files", "-g", "*_test.go") })
	b.Run("all-files/awl", func(b *testing.B) { runTool(b, dir, "glob", map[string]any{"pattern": "**"}) })
	b.Run("all-files/rg", func(b *testing.B) { runRg(b, dir, "--files") })
}

// BenchmarkGrepHugeFile searches a 1 GiB file: text at both ends and a
// sparse hole of NUL bytes between, which reads as one line of nearly
// 1 GiB. B/op stays at the fixed buffers whatever the file's size.
func BenchmarkGrepHugeFile(b *testing.B) {
	dir := b.TempDir()
	f, err := os.Create(filepath.Join(dir, "huge.txt"))
	if err != nil {
		b.Fatal(err)
	}
	text := []byte(strings.Repeat("some text line\n", 1000) + "needle at the start\n")
	const size = 1 << 30
	if _, err := f.Write(text); err != nil {
		b.Fatal(err)
	}
	if _, err := f.WriteAt(append([]byte("\nneedle at the end\n"), text...), size-int64(len(text))-19); err != nil {
		b.Fatal(err)
	}
	f.Close()
	b.SetBytes(size)
	tl := builtinNamed(b, Env{Dir: dir}, "grep")
	for b.Loop() {
		res := tl.Run(context.Background(), json.RawMessage(`{"pattern":"needle"}`))
		if !strings.Contains(res.Content, "needle at the start") || !strings.Contains(res.Content, "needle at the end") {
			b.Fatalf("grep: %s", res.Content)
		}
	}
}

// BenchmarkSearchGenerated streams 1 GiB of generated lines through the
// searcher without a file: memory per op is the searcher's own.
func BenchmarkSearchGenerated(b *testing.B) {
	for _, expr := range []string{`needle`, `[A-Z]{3}\d{2}\(`} {
		b.Run(expr, func(b *testing.B) {
			m, err := newLineMatcher(expr)
			if err != nil {
				b.Fatal(err)
			}
			const size = 1 << 30
			b.SetBytes(size)
			for b.Loop() {
				hits := 0
				err := newSearcher(m).search(context.Background(), &genReader{left: size}, func(int, []byte) { hits++ })
				if err != nil || hits == 0 {
					b.Fatalf("hits %d, err %v", hits, err)
				}
			}
		})
	}
}

// genReader yields left bytes of source-like lines, one in 1000 with a
// match for either benchmark expression, copied from one prepared block.
type genReader struct {
	left int64
	off  int
}

var genBlock = func() []byte {
	var b []byte
	for i := 1; i <= 1000; i++ {
		if i == 1000 {
			b = append(b, "\tx := ABC12(needle)\n"...)
		} else {
			b = append(b, "\tif err := f.Close(); err != nil { return err }\n"...)
		}
	}
	return b
}()

func (g *genReader) Read(p []byte) (int, error) {
	if g.left <= 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && g.left > 0 {
		k := copy(p[n:min(len(p), n+int(min(g.left, int64(len(p)))))], genBlock[g.off:])
		g.off = (g.off + k) % len(genBlock)
		n += k
		g.left -= int64(k)
	}
	return n, nil
}
