package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"

	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/projection"
	"github.com/awlrun/awl/session"
	"github.com/tidwall/gjson"
)

// sessionsVerifyCmd checks sessions fully. The listing checks only the
// shape of middle lines, for speed; this is the check a CI job runs on a
// downloaded session before resuming it.
type sessionsVerifyCmd struct {
	Refs []string `arg:"" optional:"" placeholder:"REF"`
	All  bool     `name:"all" short:"a"`
	JSON bool     `name:"json"`
}

// verifyJSON is one object of `awl sessions verify --json`.
type verifyJSON struct {
	Path     string          `json:"path"`
	ID       string          `json:"id"`
	OK       bool            `json:"ok"`
	Torn     bool            `json:"torn_last_line"`
	Problems []verifyProblem `json:"problems"`
	// Notes are boundary entries a resume does not apply; they do not
	// make the session broken.
	Notes []verifyProblem `json:"notes"`
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
		notes := boundaryNotes(p, v)
		if c.JSON {
			j := verifyJSON{Path: p, ID: cmp.Or(v.ID, session.SessionIDFromPath(p)), OK: len(v.Problems) == 0, Torn: v.Torn, Problems: []verifyProblem{}, Notes: notes}
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
		for _, n := range notes {
			if err == nil {
				_, err = fmt.Fprintln(a.stdout, n.Message)
			}
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

// boundaryNotes lists, as "path:line: note: …", the prune and compaction
// entries of a sound session that a resume does not apply. A session with
// problems gets none: its problems come first.
func boundaryNotes(path string, v session.Verification) []verifyProblem {
	out := []verifyProblem{}
	if len(v.Problems) > 0 {
		return out
	}
	s, err := session.Load(path)
	if err != nil {
		return out
	}
	notes := projection.BoundaryNotes(s.ActivePath())
	if len(notes) == 0 {
		return out
	}
	lines := map[string]int{}
	if data, err := os.ReadFile(path); err == nil {
		n := 0
		for line := range bytes.Lines(data) {
			n++
			if id := gjson.GetBytes(line, "id").String(); id != "" {
				lines[id] = n
			}
		}
	}
	for _, n := range notes {
		out = append(out, verifyProblem{Line: lines[n.ID], Message: fmt.Sprintf("%s:%d: note: %s entry %s is not in force: %s; requests show the conversation as if it were not there", path, lines[n.ID], n.Type, n.ID, n.Reason)})
	}
	return out
}
