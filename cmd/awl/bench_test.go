package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/internal/peakrss"
	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/session"
)

// buildAwl builds the real binary once for a benchmark.
func buildAwl(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "awl")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func benchEnv(b *testing.B, url string) []string {
	return append(os.Environ(),
		"ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL="+url,
		"AWL_SESSION_DIR="+filepath.Join(b.TempDir(), "sessions"),
		"XDG_CONFIG_HOME="+b.TempDir())
}

// floorProgram is the least a Go program can do to send a request: the
// platform's floor for BenchmarkStartToFirstRequest.
const floorProgram = `package main

import (
	"net/http"
	"os"
	"strings"
)

func main() {
	resp, err := http.Post(os.Getenv("ANTHROPIC_BASE_URL")+"/v1/messages", "application/json", strings.NewReader("{}"))
	if err == nil {
		resp.Body.Close()
	}
}
`

// buildFloor builds floorProgram.
func buildFloor(b *testing.B) string {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(floorProgram), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module floor\n\ngo 1.26\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "floor")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// BenchmarkStartToFirstRequest measures the time from starting the awl
// process to its first model request arriving at the fake provider: flag
// parsing, stdin check, session creation (header, context and prompt
// entries, each fsync'd), request projection and the HTTP connection. The
// go-floor case runs a Go program that only sends one request, to show
// what process start costs on the machine.
func BenchmarkStartToFirstRequest(b *testing.B) {
	b.Run("awl", func(b *testing.B) { benchFirstRequest(b, buildAwl(b), "run", "--no-stdin", "hello") })
	b.Run("go-floor", func(b *testing.B) { benchFirstRequest(b, buildFloor(b)) })
}

func benchFirstRequest(b *testing.B, bin string, args ...string) {
	arrived := make(chan time.Time, 1)
	body := providertest.Text("anthropic", "hi").Body
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- time.Now()
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body)
	}))
	defer srv.Close()
	env := benchEnv(b, srv.URL)
	dir := b.TempDir()
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = env, dir
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		at := <-arrived
		total += at.Sub(start)
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/first-request")
}

// BenchmarkPeakRSS runs a 50-turn bash tool loop in the real binary and
// reports the process's peak resident set size.
func BenchmarkPeakRSS(b *testing.B) {
	bin := buildAwl(b)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := n.Add(1)
		resp := providertest.ToolCall("anthropic", fmt.Sprintf("c%d", k), "bash", `{"command":"true"}`)
		if k%50 == 0 {
			resp = providertest.Text("anthropic", "done")
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(resp.Body)
	}))
	defer srv.Close()
	env := benchEnv(b, srv.URL)
	dir := b.TempDir()
	var peak int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin, "run", "--no-stdin", "loop")
		cmd.Env, cmd.Dir = env, dir
		// The process's own peak (internal/peakrss): ru_maxrss would be
		// this test binary's resident set whenever that is larger.
		m, err := peakrss.Run(cmd)
		if err != nil {
			b.Fatal(err)
		}
		if !m.Status.Exited() || m.Status.ExitStatus() != 0 {
			b.Fatalf("awl run: %v", m.Status)
		}
		peak = max(peak, m.PeakBytes)
	}
	b.ReportMetric(float64(peak)/(1<<20), "MiB-peak-rss")
}

// BenchmarkRunInProcess calls Main for one text prompt against the fake
// provider, in process: awl's own work per run without process start-up
// (flags, session creation with its fsyncs, context, projection, the HTTP
// exchange, the final append).
func BenchmarkRunInProcess(b *testing.B) {
	srv := providertest.New()
	defer srv.Close()
	b.Setenv("ANTHROPIC_API_KEY", "k")
	b.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	b.Setenv("AWL_SESSION_DIR", b.TempDir())
	b.Setenv("XDG_CONFIG_HOME", b.TempDir())
	b.Chdir(b.TempDir())
	for b.Loop() {
		srv.Enqueue(providertest.Text("anthropic", "hi"))
		if c := Main(context.Background(), []string{"run", "--no-stdin", "hello"}, strings.NewReader(""), io.Discard, io.Discard); c != 0 {
			b.Fatalf("exit %d", c)
		}
	}
}

// BenchmarkLargePrompt runs a 50 MB prompt from stdin (a reader that is not
// a file, as a pipe) with -o json, in process; BenchmarkLargeResume resumes
// such a session. Their ratio is issue 27's "within 2× of a resume".
func BenchmarkLargePrompt(b *testing.B) {
	benchLarge(b, false)
}

func BenchmarkLargeResume(b *testing.B) {
	benchLarge(b, true)
}

func benchLarge(b *testing.B, resume bool) {
	// Every request gets an answer: a resume of 50 MB may compact first.
	benchSetup(b)
	prompt := strings.Repeat("0123456789 the quick brown fox jumps over the lazy dog\n", 50<<20/55)
	run := func() {
		if c := Main(context.Background(), []string{"run", "-o", "json", "summarise"}, strings.NewReader(prompt), io.Discard, io.Discard); c != 0 {
			b.Fatalf("exit %d", c)
		}
	}
	if resume {
		run()
	}
	b.SetBytes(int64(len(prompt)))
	for b.Loop() {
		if !resume {
			run()
			continue
		}
		if c := Main(context.Background(), []string{"run", "-o", "json", "-c", "--no-stdin", "again"}, strings.NewReader(""), io.Discard, io.Discard); c != 0 {
			b.Fatalf("exit %d", c)
		}
	}
}

// largeSessionFile writes a session of about mb MB for cwd in dir, in the
// shape of a long coding run: a prompt (with promptMB MB of log appended),
// then rounds of an assistant bash call and its 8 KiB result, ending with
// an answer. It returns its path.
func largeSessionFile(b *testing.B, dir, cwd string, mb, promptMB int) string {
	b.Helper()
	st := &session.Store{Dir: dir}
	s, err := st.Create(cwd, "anthropic", "claude-sonnet-4-5")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	out := strings.Repeat("ok  github.com/awlrun/awl/session 1.234s coverage: 81.2% of statements\n", 8<<10/72)
	user := func(blocks ...conv.Block) session.Entry {
		return session.Entry{Type: session.TypeMessage, Provider: "anthropic", Model: "claude-sonnet-4-5", Message: &conv.Message{Role: conv.RoleUser, Content: blocks}}
	}
	prompt := "Make the tests pass." + strings.Repeat("\nFAIL github.com/awlrun/awl/session 0.123s: want 2, got 3", promptMB<<20/58)
	es := []session.Entry{user(conv.TextBlock(prompt))}
	size := len(prompt)
	for i := 0; size < mb<<20; i++ {
		id := fmt.Sprintf("toolu_%020d", i)
		es = append(es,
			session.Entry{Type: session.TypeMessage, Message: &conv.Message{Role: conv.RoleAssistant, Provider: "anthropic", Model: "claude-sonnet-4-5", StopReason: conv.StopToolUse,
				Content: []conv.Block{conv.TextBlock("Running the tests again."), {Type: conv.BlockToolUse, ID: id, Name: "bash", Input: `{"command":"go test ./..."}`}}}},
			user(conv.Block{Type: conv.BlockToolResult, ToolUseID: id, Content: out}))
		size += len(out) + 400
		if len(es) >= 200 {
			if _, err := s.AppendAll(es); err != nil {
				b.Fatal(err)
			}
			es = es[:0]
		}
	}
	es = append(es, session.Entry{Type: session.TypeMessage, Message: &conv.Message{Role: conv.RoleAssistant, Provider: "anthropic", Model: "claude-sonnet-4-5", StopReason: conv.StopEnd, Content: []conv.Block{conv.TextBlock("All tests pass.")}}})
	if _, err := s.AppendAll(es); err != nil {
		b.Fatal(err)
	}
	return s.Path
}

// BenchmarkForkVersusResume runs the real binary on a session of 20 MB
// (AWL_BENCH_FORK_MB sets another size): a resume of it (-r PATH) and a
// fork of it (--fork PATH), in turn in each round, each a one-turn run,
// and reports each one's mean wall time and peak RSS (internal/peakrss).
// The goal of issue 52: a fork within 1.2x of a resume in both. With
// AWL_BENCH_BASE naming another awl binary (an older commit's), each
// round runs that one's resume and fork too, so that before and after are
// measured in the same rounds. A fork's new file is removed after it.
func BenchmarkForkVersusResume(b *testing.B) {
	bins := []struct{ prefix, path string }{{"", buildAwl(b)}}
	if base := os.Getenv("AWL_BENCH_BASE"); base != "" {
		bins = append(bins, struct{ prefix, path string }{"base-", base})
	}
	srv := providertest.New()
	defer srv.Close()
	srv.RespondWith(func(int, providertest.Request) providertest.Response { return providertest.Text("anthropic", "hi") })
	mb := 20
	if v, err := strconv.Atoi(os.Getenv("AWL_BENCH_FORK_MB")); err == nil && v > 0 {
		mb = v
	}
	sessions := filepath.Join(b.TempDir(), "sessions")
	work := b.TempDir()
	path := largeSessionFile(b, sessions, work, mb, 0)
	env := append(os.Environ(), "ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL="+srv.URL, "AWL_PROVIDER=anthropic",
		"AWL_SESSION_DIR="+sessions, "XDG_CONFIG_HOME="+b.TempDir())
	// A window no request reaches: neither run prunes nor compacts.
	common := []string{"run", "--no-stdin", "-o", "json", "--context-window", "1000000000"}
	type tally struct {
		wall time.Duration
		peak int64
	}
	tallies := map[string]*tally{}
	run := func(bin, name string, args ...string) {
		cmd := exec.Command(bin, append(append([]string{}, common...), args...)...)
		out, err := os.Create(filepath.Join(work, "..", "stdout"))
		if err != nil {
			b.Fatal(err)
		}
		defer out.Close()
		cmd.Env, cmd.Dir, cmd.Stdout = env, work, out // peakrss wants files
		t0 := time.Now()
		m, err := peakrss.Run(cmd)
		wall := time.Since(t0)
		stdout, _ := os.ReadFile(out.Name())
		if err != nil || !m.Status.Exited() || m.Status.ExitStatus() != 0 {
			b.Fatalf("%s: %v %v\n%s", name, err, m.Status, stdout)
		}
		t := tallies[name]
		if t == nil {
			t = &tally{}
			tallies[name] = t
		}
		t.wall += wall
		t.peak = max(t.peak, m.PeakBytes)
		var res struct {
			SessionPath string `json:"session_path"`
		}
		if err := json.Unmarshal(stdout, &res); err != nil || res.SessionPath == "" {
			b.Fatalf("%s: the result: %v %s", name, err, stdout)
		}
		if res.SessionPath != path {
			os.Remove(res.SessionPath)
		}
	}
	for b.Loop() {
		for _, bin := range bins {
			run(bin.path, bin.prefix+"resume", "-r", path, "go on")
			run(bin.path, bin.prefix+"fork", "--fork", path, "go on")
		}
	}
	for name, t := range tallies {
		b.ReportMetric(float64(t.wall.Milliseconds())/float64(b.N), name+"-ms")
		b.ReportMetric(float64(t.peak)/(1<<20), name+"-MiB")
	}
	// The target itself: a fork's time over a resume's, same rounds.
	for _, bin := range bins {
		b.ReportMetric(float64(tallies[bin.prefix+"fork"].wall)/float64(tallies[bin.prefix+"resume"].wall), bin.prefix+"fork/resume")
	}
	b.ReportMetric(float64(mb), "session-MB")
}

// BenchmarkShowLarge runs `awl sessions show`, `show --full`, `show
// --json` and `report --html` of a 50 MB session whose first prompt is
// 10 MB (its largest entry), through the real binary, and reports each
// one's peak RSS and mean wall time. Issue 52's goal for show and report:
// a peak under 2x the largest entry plus 30 MiB. AWL_BENCH_BASE names an
// older binary to measure in the same rounds.
func BenchmarkShowLarge(b *testing.B) {
	bins := []struct{ prefix, path string }{{"", buildAwl(b)}}
	if base := os.Getenv("AWL_BENCH_BASE"); base != "" {
		bins = append(bins, struct{ prefix, path string }{"base-", base})
	}
	sessions := filepath.Join(b.TempDir(), "sessions")
	work := b.TempDir()
	path := largeSessionFile(b, sessions, work, 50, 10)
	html := filepath.Join(b.TempDir(), "report.html")
	env := append(os.Environ(), "AWL_SESSION_DIR="+sessions, "XDG_CONFIG_HOME="+b.TempDir())
	type tally struct {
		wall time.Duration
		peak int64
	}
	tallies := map[string]*tally{}
	for b.Loop() {
		for _, bin := range bins {
			for _, c := range []struct {
				name string
				args []string
			}{
				{"show", []string{"sessions", "show", path}},
				{"show-full", []string{"sessions", "show", "--full", path}},
				{"show-json", []string{"sessions", "show", "--json", path}},
				{"report", []string{"sessions", "report", path, "--html", html}},
			} {
				out, err := os.Create(filepath.Join(work, "..", "show.out"))
				if err != nil {
					b.Fatal(err)
				}
				cmd := exec.Command(bin.path, c.args...)
				cmd.Env, cmd.Dir, cmd.Stdout = env, work, out
				t0 := time.Now()
				m, err := peakrss.Run(cmd)
				wall := time.Since(t0)
				fi, _ := out.Stat()
				out.Close()
				if err != nil || !m.Status.Exited() || m.Status.ExitStatus() != 0 || (c.name != "report" && fi.Size() < 1<<20) {
					b.Fatalf("%s%s: %v %v", bin.prefix, c.name, err, m.Status)
				}
				t := tallies[bin.prefix+c.name]
				if t == nil {
					t = &tally{}
					tallies[bin.prefix+c.name] = t
				}
				t.wall += wall
				t.peak = max(t.peak, m.PeakBytes)
			}
		}
	}
	for name, t := range tallies {
		b.ReportMetric(float64(t.wall.Milliseconds())/float64(b.N), name+"-ms")
		b.ReportMetric(float64(t.peak)/(1<<20), name+"-MiB")
	}
}
