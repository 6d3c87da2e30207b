package runner

import (
	"errors"
	"fmt"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/projection"
	"github.com/awlrun/awl/session"
)

// pruneGain is the least a prune must free, in percent of the window, to
// be written: each prune changes the request from its boundary on, so
// the provider's cache of what follows is lost, and a prune that frees
// little would come again a turn later.
const pruneGain = 20

// keepTurns is how many of the latest assistant turns keep their tool
// results whole when older ones are pruned: the latest one, whose results
// the model has not yet answered. Every result a prune leaves whole
// after its first stub is sent again as a cache write in the next
// request, so a prune that kept the turn before too would pay for that
// turn's results a second time; the latest results are new to the cache
// either way (docs/compaction.md, "What a prune costs").
const keepTurns = 1

// errNotShorter: nothing is left to prune; the caller's error stands.
var errNotShorter = errors.New("nothing left to prune")

// sayPruningAlone turns threshold compaction off for the rest of the run
// after ns, and says so (a notice event and a note).
func (r *run) sayPruningAlone(ns *errNoSummary) {
	r.summaryOff = true
	r.notice(ns.err.Message + "; going on with pruning alone")
}

// notice reports what the run did instead of what was asked: a notice
// event and a note.
func (r *run) notice(note string) {
	em := r.cfg.Events
	em.Emit(event.Notice{Base: em.Stamp("notice", r.res.SessionID), Message: note})
	if r.cfg.Notes != nil {
		fmt.Fprintln(r.cfg.Notes, "awl:", note)
	}
}

// pruneAlone goes on without a summary after ns: it says so (a notice
// event and a note), turns threshold compaction off for the rest of the
// run, and prunes the tool results of all but the last keep assistant
// turns, whatever that frees. It reports whether it pruned.
func (r *run) pruneAlone(ns *errNoSummary, before, overhead int64, keep int) (bool, error) {
	r.sayPruningAlone(ns)
	return r.prune(before, overhead, keep, true)
}

// prune appends a prune entry that stubs the tool results of all but the
// last keep assistant turns, if that frees pruneGain percent of the
// window, or anything at all when force is set. overhead is the tokens of
// the request besides its messages.
func (r *run) prune(before, overhead int64, keep int, force bool) (bool, error) {
	path := r.sess.ActivePath()
	// The boundary: the last tool-result message before the keepTurns-th
	// latest assistant message, and after the latest compaction and prune.
	floor := -1
	for i, e := range path {
		if projection.InForce(path, i) {
			floor = i
		}
		if e.Type == session.TypePrune {
			var pf session.Prune
			if e.Decode(&pf) == nil {
				for j := range path[:i] {
					if path[j].ID == pf.UpToID && j > floor {
						floor = j
					}
				}
			}
		}
	}
	seen, upTo := 0, -1
	for i := len(path) - 1; i > floor; i-- {
		m := path[i].Message
		if m == nil {
			continue
		}
		if m.Role == conv.RoleAssistant {
			seen++
			continue
		}
		if seen >= keep && projection.LargeResult(m) {
			upTo = i
			break
		}
	}
	if upTo < 0 {
		return false, nil
	}
	fields := session.Prune{UpToID: path[upTo].ID, TokensBefore: before}
	after := projection.Project(append(path[:len(path):len(path)], session.Entry{Type: session.TypePrune, Fields: mustJSON(fields)}))
	fields.TokensAfter = projection.Estimate(after) + overhead
	if gain := projection.Estimate(projection.Project(path)) + overhead - fields.TokensAfter; gain <= 0 || !force && gain*100 < pruneGain*r.cfg.Window.Tokens {
		return false, nil
	}
	if err := r.appendEntry(session.Entry{Type: session.TypePrune, Fields: mustJSON(fields)}); err != nil {
		return false, err
	}
	r.window = windowState{}
	em := r.cfg.Events
	em.Emit(event.Prune{Base: em.Stamp("prune", r.res.SessionID), UpToID: fields.UpToID, TokensBefore: fields.TokensBefore, TokensAfter: fields.TokensAfter})
	return true, nil
}
