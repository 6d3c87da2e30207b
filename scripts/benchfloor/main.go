// Command benchfloor measures awl as a whole process against the floor of
// the platform: a bare Go program that makes the same one request. It runs
// the two in turn (A, B, A, B, …) against one fake model on 127.0.0.1, so
// both see the same machine load, and reports medians:
//
//   - start: process start to the first request arriving, for the floor and
//     for a text run of awl, and their ratio;
//   - rss: peak resident set size of a text run and of a 10-turn bash loop;
//   - turn: the CPU time of one extra turn of that loop, over the floor's
//     CPU time (a ratio, so that a slower machine does not look like a
//     slower awl);
//   - version: `awl --version` over the floor.
//
// With -large it also feeds a 50 MB prompt on stdin and resumes the session
// it made, reporting peak RSS and awl's own CPU time for both. With -long
// it runs 300 steps in a 20,000-token window (a read of a 6.6 KB file each,
// so the run prunes and compacts), reporting peak RSS, CPU time and the
// requests, prunes and compactions.
//
// With -base BIN it measures another awl binary in the same rounds, in
// turn with the first (which goes first alternates), and exits 1 when a
// figure of the first is more than -tolerance worse than the base's: the
// CI guard against the next start-up regression (scripts/perf-guard.sh
// builds the base from a pinned commit). With -check FILE it compares with
// committed figures instead; -write FILE records them.
//
// With -config N it also runs N paired rounds of a text run's start in a
// repository holding one .awl/config.toml and ten skills against one in an
// empty repository (the floor, then the two, the first of them
// alternating), reports both medians, the spread and the median of the
// rounds' ratios, and exits 1 when the files make the start more than 10 %
// slower (issue 45's goal).
//
// With -serve it only serves the fake model and prints its URL, for
// profiling one run by hand (ANTHROPIC_BASE_URL=URL awl run …).
//
// Run from the repository root: go run ./scripts/benchfloor [-n 15].
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/awlrun/awl/internal/peakrss"
)

// floorProgram is the least a Go program can do to send a request.
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

// Figures are the medians one invocation measured.
type Figures struct {
	Date string `json:"date,omitempty"`
	Runs int    `json:"runs"`
	// FloorStartMs and AwlStartMs: process start to the first request.
	FloorStartMs float64 `json:"floorStartMs"`
	AwlStartMs   float64 `json:"awlStartMs"`
	// StartRatio is AwlStartMs / FloorStartMs.
	StartRatio float64 `json:"startRatio"`
	// VersionRatio is the wall time of `awl --version` over the floor's
	// whole run.
	VersionRatio float64 `json:"versionRatio"`
	// FloorRSSMiB, TextRSSMiB and LoopRSSMiB: peak RSS of the floor, of a
	// text run and of a 10-turn bash loop.
	FloorRSSMiB float64 `json:"floorRssMiB"`
	TextRSSMiB  float64 `json:"textRssMiB"`
	LoopRSSMiB  float64 `json:"loopRssMiB"`
	// TurnMs is the wall time of one extra turn of the loop (bash `true`
	// included); TurnCPUMs its CPU time (awl's and its children's), which
	// load disturbs less; TurnRatio is TurnCPUMs over the floor's CPU time.
	TurnMs     float64 `json:"turnMs"`
	TurnCPUMs  float64 `json:"turnCpuMs"`
	FloorCPUMs float64 `json:"floorCpuMs"`
	TurnRatio  float64 `json:"turnRatio"`
	// Large input (with -large): a 50 MB prompt on stdin, then a resume of
	// that session.
	LargeRSSMiB       float64 `json:"largeRssMiB,omitempty"`
	LargeCPUMs        float64 `json:"largeCpuMs,omitempty"`
	LargeResumeRSSMiB float64 `json:"largeResumeRssMiB,omitempty"`
	LargeResumeCPUMs  float64 `json:"largeResumeCpuMs,omitempty"`
	// Config (with -config N): a text run's start with one configuration
	// file and ten skills against none.
	Config *ConfigFigures `json:"config,omitempty"`
	// A 300-step run in a 20,000-token window (with -long): peak RSS, CPU
	// time, and what the fake model and the events saw.
	LongRSSMiB      float64 `json:"longRssMiB,omitempty"`
	LongCPUMs       float64 `json:"longCpuMs,omitempty"`
	LongRequests    int     `json:"longRequests,omitempty"`
	LongCompactions int     `json:"longCompactions,omitempty"`
	LongPrunes      int     `json:"longPrunes,omitempty"`
}

func main() {
	n := flag.Int("n", 15, "runs of each case")
	awlBin := flag.String("awl", "", "the awl binary to measure (default: go build ./cmd/awl)")
	baseBin := flag.String("base", "", "another awl binary (say, a build of the merge base) measured in the same runs, in turn")
	large := flag.Bool("large", false, "also measure a 50 MB prompt on stdin and its resume")
	long := flag.Bool("long", false, "also measure a 300-step run in a 20,000-token window")
	check := flag.String("check", "", "baseline file to compare with; exit 1 on a regression")
	tolerance := flag.Float64("tolerance", 0.15, "with -check: how much worse a figure may be")
	write := flag.String("write", "", "write the figures to this baseline file")
	configRounds := flag.Int("config", 0, "also run this many paired rounds of a start with one configuration file and ten skills against none")
	serve := flag.Bool("serve", false, "only serve the fake model: print its URL, serve until killed (to profile one run by hand)")
	flag.Parse()
	if *serve {
		srv, err := startServer()
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchfloor:", err)
			os.Exit(1)
		}
		fmt.Println(srv.url)
		select {}
	}
	if err := run(*n, *awlBin, *baseBin, *large, *long, *configRounds, *check, *tolerance, *write); err != nil {
		fmt.Fprintln(os.Stderr, "benchfloor:", err)
		os.Exit(1)
	}
}

func run(n int, awlBin, baseBin string, large, long bool, configRounds int, check string, tolerance float64, write string) error {
	work, err := os.MkdirTemp("", "benchfloor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	awlBin, baseBin, floor, err := programs(work, awlBin, baseBin)
	if err != nil {
		return err
	}
	srv, err := startServer()
	if err != nil {
		return err
	}
	defer srv.Close()
	env := append(os.Environ(),
		"ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL="+srv.url,
		"AWL_SESSION_DIR="+filepath.Join(work, "sessions"),
		"XDG_CONFIG_HOME="+filepath.Join(work, "config"),
		"HOME="+work)
	// The runs share one working directory with nothing in it to gather.
	dir := filepath.Join(work, "cwd")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	r := &runner{srv: srv, env: env, dir: dir}

	// One warm-up of each, unmeasured: the page cache and the build.
	for _, c := range [][]string{{floor}, {awlBin, "run", "--no-stdin", "hello"}} {
		if _, err := r.once(c, nil); err != nil {
			return err
		}
	}
	var floorS series
	awl, base := &series{}, &series{}
	for i := 0; i < n; i++ {
		f, err := r.once([]string{floor}, nil)
		if err != nil {
			return err
		}
		if f.rss, err = r.peakOf([]string{floor}); err != nil {
			return err
		}
		floorS.add(f, result{}, result{})
		// awl and the base in turn, the first of the pair alternating.
		bins := []struct {
			bin string
			s   *series
		}{{awlBin, awl}, {baseBin, base}}
		if i%2 == 1 {
			bins[0], bins[1] = bins[1], bins[0]
		}
		for _, b := range bins {
			if b.bin == "" {
				continue
			}
			if err := r.measure(b.bin, b.s); err != nil {
				return err
			}
		}
	}
	fig := awl.figures(&floorS, n)
	var bfig *Figures
	if baseBin != "" {
		f := base.figures(&floorS, n)
		bfig = &f
		out, _ := json.MarshalIndent(bfig, "", "  ")
		fmt.Fprintf(os.Stderr, "base %s, measured in the same runs:\n%s\n", baseBin, out)
	}
	if err := r.extras(awlBin, floor, work, large, long, configRounds, &fig); err != nil {
		return err
	}
	out, _ := json.MarshalIndent(fig, "", "  ")
	fmt.Println(string(out))
	if write != "" {
		if err := os.WriteFile(write, append(out, '\n'), 0o644); err != nil {
			return err
		}
	}
	if check != "" {
		base, err := readFigures(check)
		if err != nil {
			return err
		}
		if err := compare(check, base, fig, tolerance); err != nil {
			return err
		}
	}
	if bfig != nil {
		if err := compare(baseBin, *bfig, fig, tolerance); err != nil {
			return err
		}
	}
	if c := fig.Config; c != nil && c.Rise > configGoal {
		return fmt.Errorf("one configuration file and ten skills make the start %.1f%% slower, over the %.0f%% goal", c.Rise*100, configGoal*100)
	}
	return nil
}

// extras runs what -large, -long and -config ask for beyond the rounds,
// on awlBin alone.
func (r *runner) extras(awlBin, floor, work string, large, long bool, configRounds int, fig *Figures) error {
	if large {
		if err := r.large(awlBin, work, fig); err != nil {
			return err
		}
	}
	if long {
		if err := r.long(awlBin, work, fig); err != nil {
			return err
		}
	}
	if configRounds > 0 {
		var err error
		if fig.Config, err = r.config(awlBin, floor, work, configRounds); err != nil {
			return err
		}
	}
	return nil
}

// programs builds awl (when awlBin is "") and the floor in work, and
// returns the three programs to measure (base "" when there is none).
func programs(work, awlBin, baseBin string) (string, string, string, error) {
	if awlBin == "" {
		awlBin = filepath.Join(work, "awl")
		if out, err := buildCmd(awlBin, "./cmd/awl").CombinedOutput(); err != nil {
			return "", "", "", fmt.Errorf("go build ./cmd/awl: %v\n%s", err, out)
		}
	}
	floor, err := buildFloor(work)
	if err != nil {
		return "", "", "", err
	}
	// Each program is measured as a fresh copy written with write(2), as
	// an installed binary is: a file the Go linker just wrote (through a
	// memory mapping) is in the page cache in small pages and takes more
	// page faults to start. Ten runs of one binary against its own copy
	// found the linker's file 1-49% slower to start, every time.
	bins := map[string]*string{"awl": &awlBin, "base": &baseBin, "floor": &floor}
	for _, name := range []string{"awl", "base", "floor"} {
		if *bins[name] == "" {
			continue
		}
		if *bins[name], err = copyProgram(*bins[name], filepath.Join(work, name+"-copy")); err != nil {
			return "", "", "", err
		}
	}
	return awlBin, baseBin, floor, nil
}

// measure runs bin once for each figure (a text run, its peak RSS, a
// tool loop of ten turns and its peak RSS, --version) and adds them to s.
func (r *runner) measure(bin string, s *series) error {
	t, err := r.once([]string{bin, "run", "--no-stdin", "hello"}, nil)
	if err != nil {
		return err
	}
	if t.rss, err = r.peakOf([]string{bin, "run", "--no-stdin", "hello"}); err != nil {
		return err
	}
	l, err := r.once([]string{bin, "run", "--no-stdin", "loop 10"}, nil)
	if err != nil {
		return err
	}
	if l.rss, err = r.peakOf([]string{bin, "run", "--no-stdin", "loop 10"}); err != nil {
		return err
	}
	v, err := r.once([]string{bin, "--version"}, nil)
	if err != nil {
		return err
	}
	s.add(t, l, v)
	return nil
}

func readFigures(path string) (Figures, error) {
	var f Figures
	data, err := os.ReadFile(path)
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("%s: %v", path, err)
	}
	return f, nil
}

// compare fails when a figure is more than tol worse than the base's
// (a baseline file, or a base binary measured in the same runs). Ratios
// and RSS are compared, never raw milliseconds: those follow the machine.
func compare(name string, base, got Figures, tol float64) error {
	fmt.Fprintf(os.Stderr, "compared with %s:\n", name)
	var bad []string
	for _, c := range []struct {
		name      string
		base, got float64
	}{
		{"start ratio (awl text run / Go floor)", base.StartRatio, got.StartRatio},
		{"peak RSS of a text run (MiB)", base.TextRSSMiB, got.TextRSSMiB},
		{"peak RSS of a 10-turn loop (MiB)", base.LoopRSSMiB, got.LoopRSSMiB},
		{"turn ratio (CPU of one extra turn / Go floor)", base.TurnRatio, got.TurnRatio},
	} {
		status := "ok"
		if c.base > 0 && c.got > c.base*(1+tol) {
			status = "REGRESSION"
			bad = append(bad, c.name)
		}
		fmt.Fprintf(os.Stderr, "%-42s baseline %7.2f  now %7.2f  (%+.0f%%)  %s\n", c.name, c.base, c.got, (c.got/c.base-1)*100, status)
	}
	if len(bad) > 0 {
		return fmt.Errorf("over %.0f%% worse than %s: %s", tol*100, name, strings.Join(bad, ", "))
	}
	return nil
}

// series holds one binary's measurements: a text run, a 10-turn loop
// and --version per round (for the floor, the first only).
type series struct {
	start, wall, rss, loopRSS, loopWall, version, cpu, loopCPU []float64
}

func (s *series) add(t, l, v result) {
	s.start, s.wall, s.rss = append(s.start, t.first), append(s.wall, t.wall), append(s.rss, t.rss)
	s.loopRSS, s.loopWall, s.version = append(s.loopRSS, l.rss), append(s.loopWall, l.wall), append(s.version, v.wall)
	s.cpu, s.loopCPU = append(s.cpu, t.cpu), append(s.loopCPU, l.cpu)
}

func (s *series) figures(floor *series, n int) Figures {
	fig := Figures{
		Date:         time.Now().UTC().Format("2006-01-02"),
		Runs:         n,
		FloorStartMs: median(floor.start),
		AwlStartMs:   median(s.start),
		FloorRSSMiB:  median(floor.rss),
		TextRSSMiB:   median(s.rss),
		LoopRSSMiB:   median(s.loopRSS),
		TurnMs:       (median(s.loopWall) - median(s.wall)) / 9,
		TurnCPUMs:    (median(s.loopCPU) - median(s.cpu)) / 9,
		FloorCPUMs:   median(floor.cpu),
	}
	fig.StartRatio = fig.AwlStartMs / fig.FloorStartMs
	fig.VersionRatio = median(s.version) / median(floor.wall)
	fig.TurnRatio = fig.TurnCPUMs / fig.FloorCPUMs
	return fig
}

type runner struct {
	srv *server
	env []string
	dir string
	// stdout, when set, receives the process's standard output.
	stdout io.Writer
	// beforeRun, when set, runs just before each process starts.
	beforeRun func()
}

type result struct {
	first, wall, rss, cpu float64 // ms, ms, MiB, ms
}

// once runs argv and measures it. first is the time from start to the
// first request the fake model received from this process (0 if none).
// Its rss is -1: peak measures that (internal/peakrss says why the
// rusage's ru_maxrss is not a child's own peak: for a bare Go program it
// gave benchfloor's own 9.7 MiB, not its 2-6 MiB).
//
// The process's standard streams are files, so that no goroutine of this
// program copies them and the process can be waited for directly.
func (r *runner) once(argv []string, stdin io.Reader) (result, error) {
	return r.run(argv, stdin, false)
}

// peak runs argv as once does, stopped at its exit to read its peak RSS:
// its rss is set, and its cpu (the child's own); its times are not a
// start's, since the stops for the signals it gets wait for this program.
func (r *runner) peak(argv []string, stdin io.Reader) (result, error) {
	return r.run(argv, stdin, true)
}

func (r *runner) run(argv []string, stdin io.Reader, trace bool) (result, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = r.env, r.dir
	files, err := r.streams(cmd, stdin)
	if err != nil {
		return result{}, err
	}
	defer func() {
		for _, f := range files {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	r.srv.reset()
	if r.beforeRun != nil {
		r.beforeRun()
	}
	start := time.Now()
	if trace {
		m, err := peakrss.Run(cmd)
		if err != nil {
			return result{}, fmt.Errorf("%s: %v", strings.Join(argv, " "), err)
		}
		return r.result(argv, files, start, m.Status, &m.Rusage, m.MiB())
	}
	if err := cmd.Start(); err != nil {
		return result{}, fmt.Errorf("%s: %v", strings.Join(argv, " "), err)
	}
	defer cmd.Process.Release()
	var ws syscall.WaitStatus
	var ru syscall.Rusage
	if _, err := syscall.Wait4(cmd.Process.Pid, &ws, 0, &ru); err != nil {
		return result{}, err
	}
	return r.result(argv, files, start, ws, &ru, -1)
}

// result reads what a finished process left: its exit status, its
// output, when its first request came.
func (r *runner) result(argv []string, files []*os.File, start time.Time, ws syscall.WaitStatus, ru *syscall.Rusage, hwm float64) (result, error) {
	wall := time.Since(start)
	if !ws.Exited() || ws.ExitStatus() != 0 {
		errOut, _ := os.ReadFile(files[len(files)-1].Name())
		return result{}, fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), ws, errOut)
	}
	if r.stdout != nil {
		out, err := os.ReadFile(files[0].Name())
		if err != nil {
			return result{}, err
		}
		r.stdout.Write(out)
	}
	res := result{wall: ms(wall), rss: hwm}
	if at, ok := r.srv.first(); ok {
		res.first = ms(at.Sub(start))
	}
	res.cpu = ms(time.Duration(ru.Utime.Nano() + ru.Stime.Nano()))
	return res, nil
}

// copyProgram copies the program at src to dst with write(2) and returns
// dst.
func copyProgram(src, dst string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(struct{ io.Writer }{out}, in); err != nil {
		out.Close()
		return "", err
	}
	return dst, out.Close()
}

// peakOf is the peak RSS of a run of argv, in MiB (peak).
func (r *runner) peakOf(argv []string) (float64, error) {
	res, err := r.peak(argv, nil)
	return res.rss, err
}

// streams gives cmd files for its standard streams: stdin's content
// written to one, stdout and stderr to be read afterwards. The files are
// returned for removal, stdout first and stderr last.
func (r *runner) streams(cmd *exec.Cmd, stdin io.Reader) ([]*os.File, error) {
	var files []*os.File
	for range 2 {
		f, err := os.CreateTemp("", "benchfloor-out-")
		if err != nil {
			return files, err
		}
		files = append(files, f)
	}
	cmd.Stdout, cmd.Stderr = files[0], files[1]
	if stdin != nil {
		f, err := os.CreateTemp("", "benchfloor-in-")
		if err != nil {
			return files, err
		}
		files = append([]*os.File{f}, files...)
		files[0], files[1] = files[1], files[0] // stdout first again
		if _, err := io.Copy(f, stdin); err != nil {
			return files, err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return files, err
		}
		cmd.Stdin = f
	}
	return files, nil
}

// largeRounds is how many times large measures, for medians: one round
// moved by a third with what the page cache was doing.
const largeRounds = 3

// large feeds a 50 MB prompt on stdin, then resumes that session, each
// largeRounds times into a new session directory, and reports medians.
// Before each measured run the machine's dirty pages are written out
// (sync), so that the run pays for its own writes only, not for the 50 MB
// the harness just wrote as its stdin or the sessions of the round before.
func (r *runner) large(awlBin, work string, fig *Figures) error {
	prompt := bytes.Repeat([]byte("0123456789 the quick brown fox jumps over the lazy dog\n"), 50<<20/55)
	var rss, cpu, resumeRSS, resumeCPU []float64
	for i := range largeRounds {
		sessions := filepath.Join(work, fmt.Sprintf("large-sessions-%d", i))
		env := append(slices.Clone(r.env), "AWL_SESSION_DIR="+sessions)
		rr := &runner{srv: r.srv, env: env, dir: r.dir, beforeRun: syscall.Sync}
		res, err := rr.peak([]string{awlBin, "run", "-o", "json", "summarise"}, bytes.NewReader(prompt))
		if err != nil {
			return err
		}
		rss, cpu = append(rss, res.rss), append(cpu, res.cpu)
		res, err = rr.peak([]string{awlBin, "run", "-c", "--no-stdin", "again"}, nil)
		if err != nil {
			return err
		}
		resumeRSS, resumeCPU = append(resumeRSS, res.rss), append(resumeCPU, res.cpu)
		if err := os.RemoveAll(sessions); err != nil {
			return err
		}
	}
	fig.LargeRSSMiB, fig.LargeCPUMs = median(rss), median(cpu)
	fig.LargeResumeRSSMiB, fig.LargeResumeCPUMs = median(resumeRSS), median(resumeCPU)
	return nil
}

// longSteps and longWindow shape the -long run.
const longSteps, longWindow = 300, 20000

// long runs longSteps steps in a longWindow-token window. The fake model
// answers each step with a read of big.txt, and a compaction's summary
// request with a summary; it reports a quarter of the body's bytes as the
// input tokens.
func (r *runner) long(awlBin, work string, fig *Figures) error {
	dir := filepath.Join(work, "long")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var big strings.Builder
	for i := range 120 {
		fmt.Fprintf(&big, "line %03d: the quick brown fox jumps over the lazy dog\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(big.String()), 0o644); err != nil {
		return err
	}
	var events bytes.Buffer
	rr := &runner{srv: r.srv, env: r.env, dir: dir, stdout: &events}
	r.srv.setLong(longSteps)
	defer r.srv.setLong(0)
	res, err := rr.peak([]string{awlBin, "run", "--no-stdin", "-o", "ndjson", "--max-turns", fmt.Sprint(longSteps + 10),
		"--context-window", fmt.Sprint(longWindow), "read big.txt again and again"}, nil)
	if err != nil {
		return err
	}
	fig.LongRSSMiB, fig.LongCPUMs = res.rss, res.cpu
	fig.LongRequests = r.srv.requests()
	for line := range strings.Lines(events.String()) {
		switch {
		case strings.HasPrefix(line, `{"type":"compaction"`):
			fig.LongCompactions++
		case strings.HasPrefix(line, `{"type":"prune"`):
			fig.LongPrunes++
		}
	}
	if r.srv.steps() != longSteps {
		return fmt.Errorf("the long run answered %d steps, want %d", r.srv.steps(), longSteps)
	}
	return nil
}

func buildFloor(work string) (string, error) {
	dir := filepath.Join(work, "floor")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(floorProgram), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module floor\n\ngo 1.26\n"), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "floor")
	cmd := buildCmd(bin, ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build floor: %v\n%s", err, out)
	}
	return bin, nil
}

// server is the fake model: a text answer, or for a prompt "loop N" a bash
// call until the request holds N-1 tool results.
type server struct {
	url string
	l   net.Listener
	mu  sync.Mutex
	at  time.Time
	// longSteps, when set, makes every request a step of the -long run;
	// n counts requests, normal the steps answered.
	longSteps, n, normal int
	// body is the last request's.
	body []byte
}

func (s *server) lastBody() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.body)
}

func (s *server) setLong(steps int) {
	s.mu.Lock()
	s.longSteps, s.n, s.normal = steps, 0, 0
	s.mu.Unlock()
}

func (s *server) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *server) steps() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.normal
}

func startServer() (*server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &server{url: "http://" + l.Addr().String(), l: l}
	go http.Serve(l, s)
	return s, nil
}

func (s *server) Close() { s.l.Close() }

func (s *server) reset() {
	s.mu.Lock()
	s.at = time.Time{}
	s.mu.Unlock()
}

func (s *server) first() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.at, !s.at.IsZero()
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	s.mu.Lock()
	if s.at.IsZero() {
		s.at = now
	}
	s.n++
	long := s.longSteps
	s.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.body = body
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	if long > 0 {
		io.WriteString(w, s.longAnswer(body, long))
		return
	}
	results := bytes.Count(body, []byte(`"tool_result"`))
	if bytes.Contains(body, []byte("loop 10")) && results < 9 {
		io.WriteString(w, toolCall(fmt.Sprintf("toolu_%02d", results)))
		return
	}
	io.WriteString(w, text)
}

// longAnswer answers a request of the -long run: a summary for a
// compaction's summary request, else a read of big.txt until the last step.
func (s *server) longAnswer(body []byte, steps int) string {
	tokens := len(body) / 4
	s.mu.Lock()
	defer s.mu.Unlock()
	if bytes.Contains(body, []byte("Stop here and write a summary of this conversation")) {
		return withUsage(textAnswer(fmt.Sprintf("Task: read big.txt many times. State: %d reads done.", s.normal)), tokens)
	}
	s.normal++
	if s.normal >= steps {
		return withUsage(text, tokens)
	}
	call := strings.Replace(toolCall(fmt.Sprintf("toolu_%03d", s.normal)), `"name":"bash"`, `"name":"read"`, 1)
	call = strings.Replace(call, `{\"command\":\"true\"}`, `{\"path\":\"big.txt\"}`, 1)
	return withUsage(call, tokens)
}

// withUsage sets the input tokens a stream reports.
func withUsage(stream string, tokens int) string {
	return strings.Replace(stream, `"input_tokens":10`, fmt.Sprintf(`"input_tokens":%d`, tokens), 1)
}

func textAnswer(t string) string {
	q, _ := json.Marshal(t)
	return strings.Replace(text, `"text":"hi"`, `"text":`+string(q), 1)
}

// The two answers, as the Anthropic Messages API streams them.
const text = `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}

event: message_stop
data: {"type":"message_stop"}

`

func toolCall(id string) string {
	return `event: message_start
data: {"type":"message_start","message":{"id":"msg_` + id + `","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"` + id + `","name":"bash","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\":\"true\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":2}}

event: message_stop
data: {"type":"message_stop"}

`
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// buildCmd builds a package as the release does (CGO_ENABLED=0, -trimpath:
// a static binary, no dynamic loader at start), the floor the same way.
func buildCmd(out, pkg string) *exec.Cmd {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd
}
