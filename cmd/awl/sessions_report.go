package main

import (
	"fmt"
	"os"

	"github.com/awlrun/awl/internal/atomicfile"
	"github.com/awlrun/awl/session"
	"github.com/awlrun/awl/view/report"
)

// sessionsReportCmd writes a session as an HTML page (docs/report.md).
type sessionsReportCmd struct {
	Ref  string `arg:"" placeholder:"REF"`
	HTML string `name:"html" required:"" placeholder:"FILE"`
}

func (c *sessionsReportCmd) Run(a *app, store *session.Store) error {
	p, err := resolve(store, c.Ref)
	if err != nil {
		return err
	}
	// Read through (every line checked) before the page's file is made,
	// then again a line at a time as the page is written.
	s, err := session.OpenWalk(p)
	if err != nil {
		return err
	}
	defer s.Close()
	limitMemory(s.Largest, os.Getenv)
	if c.HTML == "-" {
		return quietPipe(report.Write(a.stdout, s))
	}
	// Written beside the target and renamed: a reader (a browser, an
	// artifact upload) never sees half a page.
	err = atomicfile.Replace(c.HTML, 0o644, func(f *os.File) error {
		err := report.Write(f, s)
		if err == nil {
			err = f.Chmod(0o644)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", c.HTML, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("--html: %w", err) // the path is in the error
	}
	return nil
}
