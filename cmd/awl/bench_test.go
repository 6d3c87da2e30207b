package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/awlrun/awl/provider/providertest"
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

// BenchmarkStartToFirstRequest measures the time from starting the awl
// process to its first model request arriving at the fake provider: flag
// parsing, stdin check, session creation (header, context and prompt
// entries, each fsync'd), request projection and the HTTP connection.
func BenchmarkStartToFirstRequest(b *testing.B) {
	bin := buildAwl(b)
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
		cmd := exec.Command(bin, "run", "--no-stdin", "hello")
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
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > peak {
			peak = ru.Maxrss
		}
	}
	b.ReportMetric(float64(peak)/1024, "MB-peak-rss")
}
