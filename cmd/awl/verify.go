package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"

	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/projection"
	"github.com/awlrun/awl/session"
)

// sessionsVerifyCmd checks sessions fully, every time: this is the check a
// CI job runs on a downloaded session before resuming it. (The listing
// reaches the same verdicts, but takes those an earlier listing kept for
// files it has not seen change.)
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
	if err := noEmptyRef(c.Refs...); err != nil {
		return err
	}
	paths, errs := resolveAll(a, store, c.Refs)
	if len(c.Refs) == 0 {
		infos, err := scanScoped(store, c.All)
		if err != nil {
			return err
		}
		for _, in := range infos {
			paths = append(paths, in.Path)
		}
	}
	broken := 0
	out := make([]verifyJSON, 0, len(paths))
	vs := verifyAll(paths)
	for i, p := range paths {
		v := vs[i]
		if len(v.Problems) > 0 {
			broken++
		}
		notes := boundaryNotes(p, v)
		vs[i].Session = nil // done with it: let the collector have it
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

// verifyAll verifies paths, as many at once as there are cores, in a
// window of a few files so that only a few sessions are in memory at once.
// The results are in the order of paths.
func verifyAll(paths []string) []session.Verification {
	out := make([]session.Verification, len(paths))
	workers := min(runtime.GOMAXPROCS(0), len(paths))
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				out[i] = session.Verify(paths[i])
				if len(out[i].Problems) == 0 && !hasBoundary(out[i].Session) {
					out[i].Session = nil // no notes to find in it
				}
			}
		})
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// hasBoundary reports whether s has a prune or compaction entry, which
// boundaryNotes looks at.
func hasBoundary(s *session.Session) bool {
	if s == nil {
		return false
	}
	for i := range s.Entries {
		if t := s.Entries[i].Type; t == session.TypePrune || t == session.TypeCompaction {
			return true
		}
	}
	return false
}

// boundaryNotes lists, as "path:line: note: …", the prune and compaction
// entries of a sound session that a resume does not apply. A session with
// problems gets none: its problems come first.
func boundaryNotes(path string, v session.Verification) []verifyProblem {
	out := []verifyProblem{}
	s := v.Session
	if len(v.Problems) > 0 || s == nil {
		return out
	}
	notes := projection.BoundaryNotes(s.ActivePath())
	if len(notes) == 0 {
		return out
	}
	lines := map[string]int{} // entry i is on line i+2, after the header
	for i := range s.Entries {
		if id := s.Entries[i].ID; id != "" {
			lines[id] = i + 2
		}
	}
	for _, n := range notes {
		out = append(out, verifyProblem{Line: lines[n.ID], Message: fmt.Sprintf("%s:%d: note: %s entry %s is not in force: %s; requests show the conversation as if it were not there", path, lines[n.ID], n.Type, n.ID, n.Reason)})
	}
	return out
}
