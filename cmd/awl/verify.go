package main

import (
	"encoding/json"
	"fmt"

	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/session"
)

// sessionsVerifyCmd checks sessions fully. The listing checks only the
// shape of middle lines, for speed; this is the check a CI job runs on a
// downloaded session before resuming it.
type sessionsVerifyCmd struct {
	Refs []string `arg:"" optional:"" help:"Session ids, unique prefixes, or paths (default: this directory's sessions)." placeholder:"REF"`
	All  bool     `name:"all" short:"a" help:"Verify the sessions of every directory."`
	JSON bool     `name:"json" help:"Print a JSON array, one object per session."`
}

// verifyJSON is one object of `awl sessions verify --json`.
type verifyJSON struct {
	Path     string          `json:"path"`
	ID       string          `json:"id"`
	OK       bool            `json:"ok"`
	Torn     bool            `json:"torn_last_line"`
	Problems []verifyProblem `json:"problems"`
}

type verifyProblem struct {
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

func (c *sessionsVerifyCmd) Run(a *app, store *session.Store) error {
	if c.All && len(c.Refs) > 0 {
		return runner.Usagef("verify takes session references or --all, not both")
	}
	paths, errs := resolveAll(a, store, c.Refs)
	if len(c.Refs) == 0 {
		infos, err := listScoped(store, c.All)
		if err != nil {
			return err
		}
		for _, in := range infos {
			paths = append(paths, in.Path)
		}
	}
	broken := 0
	out := make([]verifyJSON, 0, len(paths))
	for _, p := range paths {
		v := session.Verify(p)
		if len(v.Problems) > 0 {
			broken++
		}
		if c.JSON {
			j := verifyJSON{Path: p, ID: session.SessionIDFromPath(p), OK: len(v.Problems) == 0, Torn: v.Torn, Problems: []verifyProblem{}}
			for _, pr := range v.Problems {
				j.Problems = append(j.Problems, verifyProblem{Line: pr.Line, Message: pr.Msg})
			}
			out = append(out, j)
			continue
		}
		var err error
		switch {
		case len(v.Problems) > 0:
			for _, pr := range v.Problems {
				if _, err = fmt.Fprintln(a.stdout, pr.Msg); err != nil {
					break
				}
			}
		case v.Torn:
			_, err = fmt.Fprintf(a.stdout, "%s: ok (its torn last line is dropped on resume)\n", p)
		default:
			_, err = fmt.Fprintf(a.stdout, "%s: ok\n", p)
		}
		if err != nil {
			return quietPipe(err)
		}
	}
	if c.JSON {
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return err
		}
		if _, err := a.stdout.Write(append(b, '\n')); err != nil {
			return quietPipe(err)
		}
	}
	if broken == 0 && len(errs) == 0 {
		return nil
	}
	msg := fmt.Sprintf("%d of %d sessions broken", broken, len(paths))
	if len(errs) > 0 {
		msg += fmt.Sprintf(", %d not resolved", len(errs))
	}
	return &session.Error{Kind: session.KindCorrupt, Msg: msg}
}
