package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/awlrun/awl/internal/report"
	"github.com/awlrun/awl/session"
)

// sessionsReportCmd writes a session as an HTML page (docs/report.md).
type sessionsReportCmd struct {
	Ref  string `arg:"" placeholder:"REF"`
	HTML string `name:"html" required:"" placeholder:"FILE"`
}

func (c *sessionsReportCmd) Run(a *app, store *session.Store) error {
	_, s, err := loadRef(store, c.Ref)
	if err != nil {
		return err
	}
	if c.HTML == "-" {
		return quietPipe(report.Write(a.stdout, s))
	}
	// Written beside the target and renamed: a reader (a browser, an
	// artifact upload) never sees half a page.
	dir := filepath.Dir(c.HTML)
	f, err := os.CreateTemp(dir, ".awl-report-*.html")
	if err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	defer os.Remove(f.Name())
	if err := report.Write(f, s); err != nil {
		f.Close()
		return fmt.Errorf("--html %s: %w", c.HTML, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("--html %s: %w", c.HTML, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--html %s: %w", c.HTML, err)
	}
	if err := os.Rename(f.Name(), c.HTML); err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	return nil
}
