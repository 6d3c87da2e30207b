package report

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/internal/testenv"
)

// chromium returns Debian's headless Chromium (chromium-headless-shell,
// which .ci/run installs: a third less to download than the browser and
// half the CPU to start) or the browser, or skips the test where neither
// is installed; with CI=true it fails instead (internal/testenv).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Require(t, "chromium is not installed: the report's browser test needs it (.ci/run installs it: apt-get install -y --no-install-recommends chromium-headless-shell)")
	return ""
}

// load opens the pages in one headless Chromium, each in a frame of a
// page of its own (Chromium costs seconds to start; one start serves them
// all), takes a screenshot of the first, and returns the console messages
// by the page that logged them: Chromium logs each on stderr as
// `INFO:CONSOLE…] "message", source: URL (line)`.
func load(t *testing.T, bin, dir, shot string, pages []string) map[string][]string {
	t.Helper()
	var frames strings.Builder
	frames.WriteString(`<!doctype html><title>pages</title><link rel="icon" href="data:,">` +
		`<style>html{overflow:hidden}body{margin:0}iframe{border:0;display:block;width:1200px;height:2000px}</style>`)
	for _, p := range pages {
		fmt.Fprintf(&frames, "<iframe src=%q></iframe>", filepath.Base(p))
	}
	top := filepath.Join(dir, "frames.html")
	if err := os.WriteFile(top, []byte(frames.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0",
		"--screenshot="+shot, "--window-size=1200,2000", "file://"+top)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	console := map[string][]string{}
	for line := range strings.SplitSeq(stderr.String(), "\n") {
		if !strings.Contains(line, ":CONSOLE") {
			continue
		}
		from := "?"
		if i := strings.LastIndex(line, ", source: file://"); i >= 0 {
			from = filepath.Base(strings.Fields(line[i+len(", source: file://"):])[0])
		}
		console[from] = append(console[from], line)
	}
	return console
}

// The example session's report opens in a real browser with no console
// message at all (the page has no script, so any is an error), and
// renders: the screenshot is a real image. So does a session full of
// markup whose scripts would log if they ran. With AWL_UPDATE_SCREENSHOT=1
// the screenshot replaces docs/report.png.
func TestReportInChromium(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	pages := []string{}
	for _, c := range []struct{ name, session string }{
		{"example", "../../examples/summarise.jsonl"},
		{"hostile", "testdata/hostile.jsonl"},
	} {
		page := filepath.Join(dir, c.name+".html")
		f, err := os.Create(page)
		if err != nil {
			t.Fatal(err)
		}
		if err := writePath(f, c.session); err != nil {
			t.Fatal(err)
		}
		f.Close()
		pages = append(pages, page)
	}
	// The harness sees a page's console errors: one that makes one is
	// caught, or the check below would prove nothing.
	bad := filepath.Join(dir, "bad.html")
	os.WriteFile(bad, []byte(`<!doctype html><title>x</title><link rel="icon" href="data:,"><script>console.error("harness-check")</script>`), 0o644)
	pages = append(pages, bad)

	shot := filepath.Join(dir, "shot.png")
	console := load(t, bin, dir, shot, pages)
	if got := console["bad.html"]; len(got) != 1 || !strings.Contains(got[0], "harness-check") {
		t.Fatalf("chromium's log did not show a page's console error: %q", got)
	}
	delete(console, "bad.html")
	for from, msgs := range console {
		t.Errorf("%s: console messages:\n%s", from, strings.Join(msgs, "\n"))
	}
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the screenshot is no PNG: %v", err)
	}
	if r := img.Bounds(); r.Dx() != 1200 || r.Dy() != 2000 {
		t.Errorf("screenshot %v", r)
	}
	if os.Getenv("AWL_UPDATE_SCREENSHOT") == "1" {
		if err := os.WriteFile("../../docs/report.png", b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
