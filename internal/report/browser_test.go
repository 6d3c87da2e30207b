package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/session"
)

// chromium returns Debian's chromium, or skips the test where it is not
// installed; with CI=true it fails instead, as .ci/run installs it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed, and with CI=true the report's browser test must run (.ci/run installs it: apt-get install -y chromium)")
	}
	t.Skip("chromium is not installed: skipping the report's browser test (apt-get install chromium to run it; with CI=true it fails instead)")
	return ""
}

// load opens file in headless Chromium, takes a screenshot, and returns
// the page's console messages: Chromium logs each one on stderr as
// `INFO:CONSOLE…] "message", source: URL (line)`.
func load(t *testing.T, bin, file, shot string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0",
		"--screenshot="+shot, "--window-size=1200,2000", "file://"+file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	var console []string
	for line := range strings.SplitSeq(stderr.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") {
			console = append(console, line)
		}
	}
	return console
}

// The example session's report opens in a real browser with no console
// message at all (the page has no script, so any is an error), and
// renders: the screenshot is a real image. With AWL_UPDATE_SCREENSHOT=1 the
// screenshot replaces docs/report.png.
func TestReportInChromium(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()

	// The harness sees console errors: a page that makes one is caught.
	bad := filepath.Join(dir, "bad.html")
	os.WriteFile(bad, []byte(`<!doctype html><title>x</title><link rel="icon" href="data:,"><script>console.error("harness-check")</script>`), 0o644)
	if got := load(t, bin, bad, filepath.Join(dir, "bad.png")); len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), "harness-check") {
		t.Fatalf("chromium's log did not show a page's console error; the check below would prove nothing: %q", got)
	}

	for _, c := range []struct{ name, session string }{
		{"example", "../../examples/summarise.jsonl"},
		{"hostile", "testdata/hostile.jsonl"},
	} {
		s, err := session.Load(c.session)
		if err != nil {
			t.Fatal(err)
		}
		page := filepath.Join(dir, c.name+".html")
		f, err := os.Create(page)
		if err != nil {
			t.Fatal(err)
		}
		if err := Write(f, s); err != nil {
			t.Fatal(err)
		}
		f.Close()
		shot := filepath.Join(dir, c.name+".png")
		if msgs := load(t, bin, page, shot); len(msgs) > 0 {
			t.Errorf("%s: console messages:\n%s", c.name, strings.Join(msgs, "\n"))
		}
		b, err := os.ReadFile(shot)
		if err != nil {
			t.Fatalf("%s: no screenshot: %v", c.name, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: the screenshot is no PNG: %v", c.name, err)
		}
		if r := img.Bounds(); r.Dx() != 1200 || r.Dy() != 2000 {
			t.Errorf("%s: screenshot %v", c.name, r)
		}
		if c.name == "example" && os.Getenv("AWL_UPDATE_SCREENSHOT") == "1" {
			if err := os.WriteFile("../../docs/report.png", b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
