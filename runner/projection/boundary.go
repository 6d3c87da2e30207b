package projection

import (
	"strings"

	"github.com/awlrun/awl/session"
)

// BoundaryNote is a prune or compaction entry on a session's path that
// Project does not apply, and why. Such a session still resumes: its
// requests show the conversation as if the entry were not there.
type BoundaryNote struct {
	ID     string
	Type   string
	Reason string
}

// BoundaryNotes lists the prune and compaction entries of path that are
// not in force (edited by hand, or a compaction cut short when awl was
// killed while writing it).
func BoundaryNotes(path []session.Entry) []BoundaryNote {
	var out []BoundaryNote
	ids := locator{path: path}
	for i, e := range path {
		switch e.Type {
		case session.TypeCompaction:
			if _, _, ok := CompactionAt(path, i); ok {
				continue
			}
			var f session.Compaction
			reason := "the context rebuilt after it is incomplete (awl was stopped while writing it); the next request that passes the threshold compacts again"
			switch {
			case e.Decode(&f) != nil:
				reason = "its members do not parse"
			case strings.TrimSpace(f.Summary) == "":
				reason = "its summary is missing or blank"
			}
			out = append(out, BoundaryNote{ID: e.ID, Type: e.Type, Reason: reason})
		case session.TypePrune:
			var f session.Prune
			if e.Decode(&f) != nil {
				out = append(out, BoundaryNote{ID: e.ID, Type: e.Type, Reason: "its members do not parse"})
			} else if _, ok := ids.find(f.UpToID); !ok {
				out = append(out, BoundaryNote{ID: e.ID, Type: e.Type, Reason: "its upToId " + f.UpToID + " names no entry on the path"})
			}
		}
	}
	return out
}
