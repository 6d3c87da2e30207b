package main

import (
	"os"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/awlrun/awl/view/progress"
)

// progressFlush is how long the end of a run waits for a slow stderr to
// take the last progress and diagnostic lines: a blocked stderr must not
// hold the run's exit for longer.
const progressFlush = time.Second

// progress returns the printer of the run's steps on stderr
// (docs/progress.md), or nil: --quiet, or --output json or ndjson without
// --progress, leave stderr as it was. Under GitHub Actions
// (GITHUB_ACTIONS=true) it writes log groups and annotations, and with
// --quiet or --output json or ndjson still the annotations (a failed run's
// error, awl's warnings) without the step lines; on a terminal, outside
// CI, it also redraws a status line.
func (c *runCmd) progress(a *app) *progress.Printer {
	steps := !c.Quiet && (c.Output == "text" || c.Progress)
	github := a.getenv("GITHUB_ACTIONS") == "true"
	if !steps && !github {
		return nil
	}
	o := progress.Options{
		Steps:          steps,
		GitHub:         github,
		Start:          a.start,
		MaxCostUSD:     c.MaxCostUSD,
		MaxTotalTokens: c.MaxTotalTokens,
	}
	if f, ok := a.stderr.(*os.File); ok && !o.GitHub && a.getenv("CI") == "" && a.getenv("TERM") != "dumb" && isatty.IsTerminal(f.Fd()) {
		o.Live = true
		o.Width = termWidth(f)
	}
	return progress.New(a.stderr, o)
}
