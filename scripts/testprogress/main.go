// Command testprogress runs `go test -json` with the arguments it is given
// and prints, as each package finishes, one line for it (ok, FAIL, or no
// test files, with its time), the output of each test as soon as it fails,
// and once a minute of silence the packages still running: `make test` on
// a loaded 2-core machine is never quiet for long, and a failure is seen
// when it happens, not at the end. It exits with go test's exit status, so
// that make, whose shell has no pipefail, sees a failure.
//
// Run from the repository root: go run ./scripts/testprogress -race ./...
// GO names the go command (default go).
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

func main() {
	os.Exit(run(cmp.Or(os.Getenv("GO"), "go"), os.Args[1:], os.Stdout, time.Minute))
}

// event is a line of `go test -json` (cmd/test2json).
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string // build-output and build-fail
	FailedBuild string
}

// run runs goCmd test -json args, writing the progress to out; heartbeat is
// how long a silence lasts before the still-running packages are listed.
// It returns go test's exit status (1 when it could not be run, or when it
// exited 0 though a package failed).
func run(goCmd string, args []string, out io.Writer, heartbeat time.Duration) int {
	cmd := exec.Command(goCmd, append([]string{"test", "-json"}, args...)...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(out, "testprogress:", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(out, "testprogress:", err)
		return 1
	}
	p := newPrinter(out)
	fmt.Fprintf(p, "%s test %s: a line per package as each finishes\n", goCmd, strings.Join(args, " "))
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(heartbeat / 4)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				p.heartbeat(heartbeat)
			}
		}
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		p.line(sc.Bytes())
	}
	close(stop)
	<-done
	werr := cmd.Wait()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(werr, &ee) {
		code = ee.ExitCode()
	} else if werr != nil {
		fmt.Fprintln(p, "testprogress:", werr)
		code = 1
	}
	if code == 0 && p.failed > 0 {
		code = 1
	}
	p.summary(code)
	return code
}

// printer turns events into progress lines. Its methods may be called from
// the reading goroutine and the heartbeat's at once.
type printer struct {
	mu      sync.Mutex
	out     io.Writer
	start   time.Time
	last    time.Time            // when a line was last printed
	running map[string]time.Time // package → when its tests started
	output  map[[2]string][]string
	ok      int
	failed  int
	none    int
}

func newPrinter(out io.Writer) *printer {
	now := time.Now()
	return &printer{out: out, start: now, last: now, running: map[string]time.Time{}, output: map[[2]string][]string{}}
}

// Write prints b as is (p is an io.Writer for the lines run prints itself).
func (p *printer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = time.Now()
	return p.out.Write(b)
}

func (p *printer) printf(format string, args ...any) {
	p.last = time.Now()
	fmt.Fprintf(p.out, format, args...)
}

// line handles one line of go test's standard output: an event, or text
// that is not one (printed as it is).
func (p *printer) line(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var e event
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &e) != nil {
		p.printf("%s\n", b)
		return
	}
	key := [2]string{e.Package, e.Test}
	switch e.Action {
	case "build-output":
		p.printf("%s", e.Output)
	case "start":
		p.running[e.Package] = time.Now()
	case "output":
		p.output[key] = append(p.output[key], e.Output)
	case "fail":
		p.failure(e, key)
	case "pass", "skip":
		if e.Test != "" {
			delete(p.output, key)
			return
		}
		p.finish(e)
	}
}

// failure prints what a failed test or package wrote: a test's output at
// once, and a package's own (a build failure, a panic, a timeout) with its
// line.
func (p *printer) failure(e event, key [2]string) {
	if e.Test != "" {
		p.printf("--- FAIL: %s %s (%.2fs)\n", e.Package, e.Test, e.Elapsed)
		for _, l := range p.output[key] {
			p.printf("    %s", l)
		}
		delete(p.output, key)
		return
	}
	for _, l := range p.output[key] {
		if !strings.HasPrefix(l, "FAIL") && !strings.HasPrefix(l, "ok ") {
			p.printf("    %s", l)
		}
	}
	p.finish(e)
}

// finish prints a package's line.
func (p *printer) finish(e event) {
	delete(p.running, e.Package)
	for k := range p.output {
		if k[0] == e.Package {
			delete(p.output, k)
		}
	}
	switch {
	case e.Action == "fail":
		p.failed++
		why := ""
		if e.FailedBuild != "" {
			why = " [build failed]"
		}
		p.printf("FAIL %s %.1fs%s\n", e.Package, e.Elapsed, why)
	case e.Action == "skip":
		p.none++
		p.printf("?    %s [no test files]\n", e.Package)
	default:
		p.ok++
		p.printf("ok   %s %.1fs\n", e.Package, e.Elapsed)
	}
}

// heartbeat lists the packages still running once the output has been
// quiet for every, or says that go test is still building.
func (p *printer) heartbeat(every time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.last) < every {
		return
	}
	var names []string
	for pkg, since := range p.running {
		names = append(names, fmt.Sprintf("%s (%s)", pkg, now.Sub(since).Round(time.Second)))
	}
	slices.Sort(names)
	elapsed := now.Sub(p.start).Round(time.Second)
	if len(names) == 0 {
		p.printf("… %s: building test binaries\n", elapsed)
		return
	}
	p.printf("… %s: running %s\n", elapsed, strings.Join(names, ", "))
}

func (p *printer) summary(code int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	verdict := "ok"
	if code != 0 {
		verdict = fmt.Sprintf("FAIL (exit %d)", code)
	}
	p.printf("%s: %d packages ok, %d failed, %d without tests, in %s\n", verdict, p.ok, p.failed, p.none, time.Since(p.start).Round(time.Second))
}
