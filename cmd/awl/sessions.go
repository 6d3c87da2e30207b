package main

import (
	"bufio"
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/alecthomas/kong"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/internal/oneline"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/modelctx"
	"github.com/awlrun/awl/session"
)

// sessionsCmd is the sessions command family. Listing is the default.
type sessionsCmd struct {
	List    sessionsListCmd    `cmd:"" default:"withargs"`
	Show    sessionsShowCmd    `cmd:""`
	Path    sessionsPathCmd    `cmd:""`
	Rm      sessionsRmCmd      `cmd:""`
	Prune   sessionsPruneCmd   `cmd:""`
	Verify  sessionsVerifyCmd  `cmd:""`
	Compact sessionsCompactCmd `cmd:""`
	Report  sessionsReportCmd  `cmd:""`
}

// age is a duration flag that also takes days: 30d, 1d12h, 24h, 90m.
type age time.Duration

// dayPrefix is the leading number of days of s (digits then "d") and the
// length of that prefix, or "", 0. By hand, not a regular expression: one
// compiled at package level costs every start of awl its compilation.
func dayPrefix(s string) (days string, n int) {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i == 0 || i == len(s) || s[i] != 'd' {
		return "", 0
	}
	return s[:i], i + 1
}

// negativeNumber is what a negative duration looks like: kong would take
// `--since -5m` for a flag named 5m.
func negativeNumber(s string) bool {
	return len(s) > 1 && s[0] == '-' && ('0' <= s[1] && s[1] <= '9' || s[1] == '.')
}

// Decode parses a Go duration, optionally led by a number of days. It takes
// a negative value given as its own argument too (--since -5m), so that it
// is refused with the same words as --since=-5m.
func (d *age) Decode(ctx *kong.DecodeContext) error {
	var t kong.Token
	if negativeNumber(ctx.Scan.Peek().String()) {
		t = ctx.Scan.Pop()
	} else {
		var err error
		if t, err = ctx.Scan.PopValue("duration"); err != nil {
			return err
		}
	}
	v, err := parseAge(t.String())
	if err != nil {
		return err
	}
	*d = age(v)
	return nil
}

func parseAge(s string) (time.Duration, error) {
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("invalid duration %q: must not be negative (use e.g. 30d, 24h, 90m)", s)
	}
	var days time.Duration
	rest := s
	if m, length := dayPrefix(s); length > 0 {
		n, err := strconv.Atoi(m)
		if err != nil || n > 100_000 {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		days = time.Duration(n) * 24 * time.Hour
		rest = s[length:]
	}
	var d time.Duration
	if rest != "" {
		var err error
		if d, err = time.ParseDuration(rest); err != nil {
			return 0, fmt.Errorf("invalid duration %q (use e.g. 30d, 24h, 90m)", s)
		}
	} else if days == 0 && s != "0d" {
		return 0, fmt.Errorf("invalid duration %q (use e.g. 30d, 24h, 90m)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("invalid duration %q: must not be negative (use e.g. 30d, 24h, 90m)", s)
	}
	if d > math.MaxInt64-days {
		// The sum would wrap to a negative age, and prune would take
		// every session for older than it.
		return 0, fmt.Errorf("invalid duration %q: too large (at most about 290 years)", s)
	}
	return days + d, nil
}

// sessionsListCmd lists sessions.
type sessionsListCmd struct {
	JSON  bool `name:"json"`
	All   bool `name:"all" short:"a"`
	Limit int  `name:"limit" short:"n" placeholder:"N"`
	Since *age `name:"since" placeholder:"DURATION"`
}

// sessionJSON is one object of `awl sessions --json`.
type sessionJSON struct {
	ID             string `json:"id"`
	Path           string `json:"path"`
	Cwd            string `json:"cwd"`
	Created        string `json:"created"`
	Modified       string `json:"modified"`
	Messages       int    `json:"messages"`
	Provider       string `json:"provider"`
	Model          string `json:"model"`
	FirstPrompt    string `json:"first_prompt"`
	LastStopReason string `json:"last_stop_reason"`
	// LastText is the final answer: the last assistant message's text
	// when it ended the turn, cut to session.LastTextMax bytes; null
	// otherwise.
	LastText *string `json:"last_text"`
	// Status is how the last run ended: ok, limit, failed, killed, or ""
	// (no messages).
	Status       string       `json:"status"`
	LastRun      *lastRunJSON `json:"last_run"`
	TotalCostUSD *float64     `json:"total_cost_usd"`
	// CacheReadShare is the share of its runs' input read from the prompt
	// cache, as their run entries count it; null without.
	CacheReadShare *float64 `json:"cache_read_share"`
	// ForkedFrom is where a session made with --fork came from; null
	// for any other.
	ForkedFrom *forkJSON `json:"forked_from"`
	// Checked says how far the listing checked the file: "full", as
	// `awl sessions verify` checks it (every line's contents and the
	// entry chain), now or by an earlier listing of the file in the same
	// state. No error with "full" is a session verify finds sound.
	Checked string `json:"checked"`
	Error   string `json:"error,omitempty"`
}

// checkedFull is the listing's Checked.
const checkedFull = "full"

// forkJSON is the origin of a fork: the source session and the entry it
// was forked at.
type forkJSON struct {
	ID      string `json:"id"`
	EntryID string `json:"entry_id"`
}

// lastRunJSON is the last run entry of a session.
type lastRunJSON struct {
	ExitCode int      `json:"exit_code"`
	Reason   string   `json:"reason"`
	CostUSD  *float64 `json:"cost_usd"`
	// CacheReadShare is the run's share of input read from the cache.
	CacheReadShare *float64 `json:"cache_read_share"`
	Ended          string   `json:"ended"`
}

// jsonTime formats t as the session format does: UTC, milliseconds.
func jsonTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

func sessionsCwd() (string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	return cwd, nil
}

// listScope is the directory a listing covers: the working directory, or
// "" (every directory) with all.
func listScope(all bool) (string, error) {
	if all {
		return "", nil
	}
	return sessionsCwd()
}

// scanScoped lists the session files of the working directory, or of
// every directory with all, without verifying them (session.Store.Scan):
// for verify, which verifies each itself.
func scanScoped(store *session.Store, all bool) ([]session.Info, error) {
	scope, err := listScope(all)
	if err != nil {
		return nil, err
	}
	return store.Scan(scope)
}

// listStore returns store with IsContext set so first prompts skip context
// fragments.
func listStore(store *session.Store) *session.Store {
	s := *store
	if s.IsContext == nil {
		s.IsContext = modelctx.IsContextual
	}
	return &s
}

func (c *sessionsListCmd) Run(a *app, store *session.Store) error {
	if c.Limit < 0 {
		return runner.Usagef("--limit must not be negative")
	}
	if c.Since != nil && *c.Since == 0 {
		// Nothing is modified within no time at all: an empty list would
		// look like a bug, and "no filter" is leaving the flag out.
		return runner.Usagef("--since must be a positive duration (e.g. 30d, 24h, 90m)")
	}
	scope, err := listScope(c.All)
	if err != nil {
		return err
	}
	infos, err := listStore(store).List(scope)
	if err != nil {
		return err
	}
	// Short ids are unique among everything in scope, not only among the
	// rows kept below, so each one resolves from this directory.
	short := shortIDs(infos)
	keep := make([]int, 0, len(infos))
	var cutoff time.Time
	if c.Since != nil {
		cutoff = time.Now().Add(-time.Duration(*c.Since))
	}
	for i, in := range infos {
		if c.Since != nil && in.Modified.Before(cutoff) {
			continue
		}
		keep = append(keep, i)
	}
	if c.Limit > 0 && len(keep) > c.Limit {
		// The newest N by creation; the list stays oldest first.
		keep = keep[len(keep)-c.Limit:]
	}
	if c.JSON {
		return writeListJSON(a, infos, keep)
	}
	if len(keep) == 0 {
		if scope != "" {
			fmt.Fprintf(a.stderr, "awl: no sessions for %s (awl sessions --all lists every directory)\n", scope)
		} else {
			fmt.Fprintln(a.stderr, "awl: no sessions")
		}
		return nil
	}
	shortOf := make(map[string]string, len(infos))
	for i := range infos {
		shortOf[infos[i].ID] = short[i]
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	for _, i := range keep {
		in := &infos[i]
		var row []string
		row = append(row, short[i], in.Created.Local().Format("2006-01-02 15:04"))
		if c.All {
			row = append(row, displayTail(in.Cwd, 50))
		}
		if in.Err != nil {
			msg := in.Err.Error()
			if rest, ok := strings.CutPrefix(msg, in.Path+":"); ok {
				msg = "line " + rest // the row already says which file
			}
			row = append(row, "error: "+oneline.Cut(msg, 120))
		} else {
			msgs := strconv.Itoa(in.Messages) + " messages"
			if in.Messages == 1 {
				msgs = "1 message"
			}
			first := oneline.Cut(in.FirstPrompt, 60)
			if in.ForkedFrom != "" {
				// A fork starts with its source's history, first prompt
				// included: say whose.
				first = "(fork of " + cmp.Or(shortOf[in.ForkedFrom], oneline.Cut(in.ForkedFrom, 36)) + ") " + first
			}
			row = append(row, cmp.Or(in.Status, "-"), msgs, oneline.Cut(in.Model, 40), first)
		}
		fmt.Fprintln(tw, strings.TrimRight(strings.Join(row, "\t"), "\t "))
	}
	return quietPipe(tw.Flush())
}

// writeListJSON writes the rows keep of infos as a JSON array.
func writeListJSON(a *app, infos []session.Info, keep []int) error {
	out := make([]sessionJSON, 0, len(keep))
	for _, i := range keep {
		in := &infos[i]
		j := sessionJSON{
			ID: in.ID, Path: in.Path, Cwd: in.Cwd,
			Created: jsonTime(in.Created), Modified: jsonTime(in.Modified),
			Messages: in.Messages, Provider: in.Provider, Model: in.Model,
			FirstPrompt: in.FirstPrompt, LastStopReason: in.LastStopReason,
			Status: in.Status, TotalCostUSD: in.TotalCostUSD, CacheReadShare: in.CacheReadShare, Checked: checkedFull,
		}
		if in.ForkedFrom != "" {
			j.ForkedFrom = &forkJSON{ID: in.ForkedFrom, EntryID: in.ForkedAt}
		}
		if in.LastText != "" {
			j.LastText = &in.LastText
		}
		if r := in.LastRun; r != nil {
			j.LastRun = &lastRunJSON{ExitCode: r.ExitCode, Reason: r.Reason, CostUSD: r.CostUSD, CacheReadShare: r.CacheReadShare, Ended: jsonTime(r.Ended)}
		}
		if in.Err != nil {
			j.Error = in.Err.Error()
		}
		out = append(out, j)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = a.stdout.Write(append(b, '\n'))
	return quietPipe(err)
}

// quietPipe returns nil for a broken pipe on stdout: the reader has seen
// all it wants (`awl sessions | head -1`), which is a successful end, not an
// error to print. awl catches SIGPIPE, so such writes fail with EPIPE.
func quietPipe(err error) error {
	if errors.Is(err, syscall.EPIPE) {
		return nil
	}
	return err
}

// minShortID is the shortest prefix the listing shows.
const minShortID = 8

// shortIDs returns, for each session, the shortest prefix of its id (at
// least 8 characters, never ending in a dash) shared with no other session
// of the list. A session that cannot be read shows its full id: its header
// may not say which directory it belongs to, so only the full id is sure to
// resolve.
func shortIDs(infos []session.Info) []string {
	out := make([]string, len(infos))
	ids := make([]string, 0, len(infos))
	for _, in := range infos {
		ids = append(ids, strings.ToLower(in.ID))
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	for i, in := range infos {
		id := ids[i]
		switch {
		case id == "":
			out[i] = filepath.Base(in.Path)
			continue
		case in.Err != nil:
			out[i] = in.ID
			continue
		}
		k, _ := slices.BinarySearch(sorted, id)
		need := 0
		if k > 0 {
			need = commonPrefix(sorted[k-1], id)
		}
		if k+1 < len(sorted) {
			need = max(need, commonPrefix(sorted[k+1], id))
		}
		n := max(minShortID, need+1)
		for n < len(id) && id[n-1] == '-' {
			n++
		}
		out[i] = in.ID[:min(n, len(id))]
	}
	return out
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// displayTail is oneline.Cut keeping the end of s: for paths, whose last
// elements say the most.
func displayTail(s string, n int) string {
	s = oneline.Cut(s, len(s))
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

// resolve turns a reference into a session file path, narrowing an
// ambiguous prefix to the working directory's sessions. An empty one is a
// usage error (exit 2), as for `run --resume ""`: an unset $ID names no
// session.
func resolve(store *session.Store, ref string) (string, error) {
	if err := noEmptyRef(ref); err != nil {
		return "", err
	}
	cwd, err := sessionsCwd()
	if err != nil {
		return "", err
	}
	p, err := store.Resolve(ref, cwd)
	var se *session.Error
	if errors.As(err, &se) && se.Kind == session.KindNotFound && se.Path == "" {
		return "", &session.Error{Kind: se.Kind, Err: err,
			Msg: se.Msg + " (awl sessions lists this directory's sessions, awl sessions --all every directory's)"}
	}
	return p, err
}

// noEmptyRef is a usage error when one of refs is empty.
func noEmptyRef(refs ...string) error {
	if slices.Contains(refs, "") {
		return runner.Usagef("the session reference is empty")
	}
	return nil
}

// sessionsPathCmd prints a session file's path.
type sessionsPathCmd struct {
	Ref string `arg:"" placeholder:"REF"`
}

func (c *sessionsPathCmd) Run(a *app, store *session.Store) error {
	p, err := resolve(store, c.Ref)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(a.stdout, p)
	return quietPipe(err)
}

// sessionsShowCmd shows one session.
type sessionsShowCmd struct {
	Ref  string `arg:"" placeholder:"REF"`
	JSON bool   `name:"json"`
	Full bool   `name:"full"`
}

// Run shows the session a line at a time (session.Walk): what it holds is
// the largest entry, whatever the session's size.
func (c *sessionsShowCmd) Run(a *app, store *session.Store) error {
	p, err := resolve(store, c.Ref)
	if err != nil {
		return err
	}
	s, err := session.OpenWalk(p)
	if err != nil {
		return err
	}
	defer s.Close()
	// A session's largest entry passes through two buffers of its size:
	// collect sooner than at twice what is live.
	limitMemory(s.Largest, os.Getenv)
	w := bufio.NewWriterSize(a.stdout, 64<<10)
	if c.JSON {
		hdr, err := headerLine(p)
		if err != nil {
			return err
		}
		w.Write(hdr)
		w.WriteByte('\n')
		err = s.Lines(func(line []byte) error {
			w.Write(line)
			return w.WriteByte('\n')
		})
		if err != nil {
			return quietPipe(err)
		}
		return quietPipe(w.Flush())
	}
	v := viewer{w: w, full: c.Full}
	if err := v.session(s); err != nil {
		return quietPipe(err)
	}
	return quietPipe(w.Flush())
}

// headerLine returns the first line of the file at path, as stored.
func headerLine(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read session header: %w", err)
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("read session header %s: %w", path, err)
	}
	return line[:len(line)-1], nil
}

// Cuts of the human view (without --full).
const (
	cutLines     = 20   // tool results, system and context messages
	cutBytes     = 2000 // the same, in bytes
	cutThinking  = 200  // characters of thinking, on one line
	cutToolInput = 500  // characters of tool-call arguments
)

// viewer renders a session for a person.
type viewer struct {
	w     *bufio.Writer
	full  bool
	tools map[string]string // tool-use id → tool name
	// provider and model are those of the conversation so far, to show
	// where a resumed run switched them.
	provider, model string
	// ended: the last entry shown was a run entry, so the next one begins
	// a step.
	ended bool
}

func (v *viewer) session(s *session.Walk) error {
	h := &s.Header
	prov, model := s.Provider, s.Model
	fmt.Fprintf(v.w, "session  %s\n", h.ID)
	fmt.Fprintf(v.w, "path     %s\n", s.Path)
	fmt.Fprintf(v.w, "cwd      %s\n", oneline.Cut(h.Cwd, 400))
	fmt.Fprintf(v.w, "created  %s\n", h.Timestamp.Local().Format("2006-01-02 15:04:05"))
	fmt.Fprintf(v.w, "model    %s\n", oneline.Cut(prov+"/"+model, 200))
	if s.Recovered {
		fmt.Fprintln(v.w, "note     the last line is incomplete (a writer may be appending it)")
	}
	v.tools = map[string]string{}
	v.provider, v.model = h.Provider, h.Model
	step := 0 // the step (the run) entries belong to, from 1; 0 before any
	return s.Entries(func(e *session.Entry) error {
		if step == 0 || v.ended {
			step++
			v.ended = false
			fmt.Fprintf(v.w, "\n══ step %d ══\n", step)
		}
		switch {
		case e.Type == session.TypeRun && v.run(e, step):
			return nil
		case e.Type == session.TypePrune && v.prune(e):
			return nil
		case e.Type == session.TypeCompaction && v.compaction(e):
			return nil
		case e.Type != session.TypeMessage || e.Message == nil:
			fmt.Fprintf(v.w, "\n· %s %s\n", oneline.Cut(e.Type, 40), oneline.Cut(string(e.Fields), 200))
			return nil
		}
		v.switched(e)
		v.message(e)
		return nil
	})
}

// switched prints a line when the user message e was sent with another
// provider or model than the conversation before it (a run resumed with
// --provider or --model).
func (v *viewer) switched(e *session.Entry) {
	if e.Message.Role != conv.RoleUser || (e.Provider == "" && e.Model == "") {
		return
	}
	if e.Provider == v.provider && e.Model == v.model {
		return
	}
	v.provider, v.model = strings.Clone(e.Provider), strings.Clone(e.Model) // e is valid during its call only
	fmt.Fprintf(v.w, "\n── now %s / %s ──\n", oneline.Cut(e.Provider, 40), oneline.Cut(e.Model, 60))
}

func (v *viewer) section(title string) {
	fmt.Fprintf(v.w, "\n── %s ──\n", title)
}

func (v *viewer) message(e *session.Entry) {
	m := e.Message
	switch {
	case m.Role == conv.RoleAssistant:
		title := []string{"assistant"}
		if m.Model != "" {
			title = append(title, oneline.Cut(m.Model, 60))
		}
		if m.StopReason != "" {
			title = append(title, oneline.Cut(string(m.StopReason), 20))
		}
		if u := m.Usage; u != nil {
			t := fmt.Sprintf("%d in, %d out", u.Input, u.Output)
			if u.CacheRead > 0 || u.CacheWrite > 0 {
				t += fmt.Sprintf(", cache %d read, %d written", u.CacheRead, u.CacheWrite)
			}
			title = append(title, t)
		}
		v.section(strings.Join(title, " · "))
	case m.Role == conv.RoleUser && modelctx.IsContextualMessage(*m):
		v.section("user · context")
		for _, b := range m.Content {
			v.text(b.Text, true)
		}
		return
	case modelctx.IsGateFeedback(*m):
		v.section("user · gate feedback")
	case m.Role == conv.RoleUser && !hasNonResult(m):
		// Only tool results: each gets its own section below.
	default:
		v.section(oneline.Cut(string(m.Role), 20))
	}
	cut := m.Role == conv.RoleSystem
	for _, b := range m.Content {
		switch b.Type {
		case conv.BlockText:
			v.text(b.Text, cut)
		case conv.BlockThinking:
			switch {
			case b.Redacted != "":
				fmt.Fprintln(v.w, "[thinking: redacted]")
			case strings.TrimSpace(b.Thinking) == "" && b.Signature != "":
				// OpenAI's encrypted reasoning without a summary: say it is
				// there rather than print an empty [thinking] line.
				fmt.Fprintf(v.w, "[thinking: not shown (encrypted, %d bytes)]\n", len(b.Signature))
			case strings.TrimSpace(b.Thinking) == "":
			case v.full:
				fmt.Fprintf(v.w, "[thinking]\n%s\n", safeText(b.Thinking))
			default:
				fmt.Fprintf(v.w, "[thinking] %s\n", oneline.Cut(b.Thinking, cutThinking))
			}
		case conv.BlockToolUse:
			v.tools[strings.Clone(b.ID)] = strings.Clone(b.Name)
			in := oneline.Cut(b.Input, cutToolInput)
			if v.full {
				in = safeText(b.Input)
			}
			fmt.Fprintf(v.w, "→ %s %s  [%s]\n", oneline.Cut(b.Name, 60), in, oneline.Cut(b.ID, 80))
		case conv.BlockToolResult:
			title := "tool result"
			if name := v.tools[b.ToolUseID]; name != "" {
				title += " · " + oneline.Cut(name, 60)
			}
			title += " · " + oneline.Cut(b.ToolUseID, 80)
			if b.IsError {
				title += " · error"
			}
			v.section(title)
			if b.Hook != nil {
				fmt.Fprintln(v.w, v.hookLine(b.Hook))
			}
			v.text(b.Content, true)
			for _, at := range b.Attachments {
				fmt.Fprintln(v.w, imageMeta(at.Type, at.MimeType, at.Data))
			}
		case conv.BlockImage:
			fmt.Fprintln(v.w, imageMeta("image", b.MimeType, b.Data))
		default:
			fmt.Fprintf(v.w, "[%s block]\n", oneline.Cut(string(b.Type), 40))
		}
	}
}

// hookLine says what the pre-tool hooks decided about a call
// (--tool-hook): the hook that decided, allow or deny, why it denied, and
// the input it gave the call in place of the model's.
func (v *viewer) hookLine(h *conv.HookRecord) string {
	line := "[hook " + oneline.Cut(h.Hook, 200) + " · " + oneline.Cut(h.Decision, 20)
	if h.Reason != "" {
		line += " · " + oneline.Cut(h.Reason, 500)
	}
	if h.Input != "" {
		in := oneline.Cut(h.Input, cutToolInput)
		if v.full {
			in = safeText(h.Input)
		}
		line += " · input changed to " + in
	}
	return line + "]"
}

// hasNonResult reports whether m has a block that is not a tool result.
func hasNonResult(m *conv.Message) bool {
	for _, b := range m.Content {
		if b.Type != conv.BlockToolResult {
			return true
		}
	}
	return false
}

// text writes s, cut to cutLines lines and cutBytes bytes when cut is set
// (and --full is not).
func (v *viewer) text(s string, cut bool) {
	s = safeText(strings.TrimRight(s, "\n"))
	if cut && !v.full {
		var dropped int
		s, dropped = cutText(s, cutLines, cutBytes)
		if dropped > 0 {
			s += fmt.Sprintf("\n… (%d more lines; --full shows everything)", dropped)
		}
	}
	if s != "" {
		fmt.Fprintln(v.w, s)
	}
}

// cutText keeps the first lines of s and at most maxBytes bytes, and
// returns how many lines it dropped (a partly kept line counts).
func cutText(s string, lines, maxBytes int) (string, int) {
	total := strings.Count(s, "\n") + 1
	end := 0
	for k := 0; k < lines && end < len(s); k++ {
		i := strings.IndexByte(s[end:], '\n')
		if i < 0 {
			end = len(s)
			break
		}
		end += i + 1
	}
	if end > maxBytes {
		end = maxBytes
		for end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
	}
	if end >= len(s) {
		return s, 0
	}
	kept := strings.TrimRight(s[:end], "\n")
	return kept, total - strings.Count(kept, "\n") - boolInt(strings.HasSuffix(s[:end], "\n"))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// safeText drops control characters other than newline and tab, so stored
// text cannot drive the terminal.
func safeText(s string) string {
	clean := true
	for _, r := range s {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}

// imageMeta describes an image by its metadata, never its bytes: the same
// mime type, size and sha256 the NDJSON events show.
func imageMeta(kind, mime, data string) string {
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return fmt.Sprintf("[%s %s, %d bytes of invalid base64]", oneline.Cut(kind, 20), oneline.Cut(mime, 60), len(data))
	}
	sum := sha256.Sum256(raw)
	return fmt.Sprintf("[%s %s, %d bytes, sha256 %s]", oneline.Cut(kind, 20), oneline.Cut(mime, 60), len(raw), hex.EncodeToString(sum[:]))
}

// sessionsRmCmd removes sessions.
type sessionsRmCmd struct {
	Refs []string `arg:"" placeholder:"REF"`
}

func (c *sessionsRmCmd) Run(a *app, store *session.Store) error {
	if err := noEmptyRef(c.Refs...); err != nil {
		return err
	}
	paths, errs := resolveAll(a, store, c.Refs)
	return removeAll(a, paths, false, time.Time{}, errs)
}

// resolveAll resolves refs to distinct paths, in order, saying on stderr
// why each one that does not resolve fails.
func resolveAll(a *app, store *session.Store, refs []string) (paths []string, errs []error) {
	for _, ref := range refs {
		p, err := resolve(store, ref)
		if err != nil {
			fmt.Fprintf(a.stderr, "awl: %v\n", err)
			errs = append(errs, err)
			continue
		}
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	return paths, errs
}

// removeAll removes paths, printing each removed path on stdout. With
// dryRun it removes nothing and says exactly what it would do: each path
// it would remove on stdout, each refusal on stderr. Refusals and failures are reported on stderr as
// they happen, after the earlier ones in errs; a *session.Error sums them
// up, for exit code 3. With skipInUse, a session in use is reported as
// skipped and is no failure: prune meets one whenever a run is active.
// A non-zero cutoff is prune's: each file's age is checked again under its
// lock, and one modified at or after cutoff (a run resumed it after the
// listing) is skipped too. Prune skips sessions in use.
func removeAll(a *app, paths []string, dryRun bool, cutoff time.Time, errs []error) error {
	removed := 0
	rm, skipped, notRemoved := session.Remove, "skipped", "not removed"
	if dryRun {
		rm, skipped, notRemoved = session.CheckRemove, "would skip", "would not remove"
	}
	skipInUse := !cutoff.IsZero()
	if skipInUse {
		rm = func(p string) error { return session.RemoveOlder(p, cutoff) }
		if dryRun {
			rm = func(p string) error { return session.CheckRemoveOlder(p, cutoff) }
		}
	}
	for _, p := range paths {
		if err := rm(p); err != nil {
			if skipInUse && (isKind(err, session.KindLocked) || isKind(err, session.KindModified)) {
				fmt.Fprintf(a.stderr, "awl: %s: %v\n", skipped, err)
				continue
			}
			if isKind(err, session.KindLocked) {
				fmt.Fprintf(a.stderr, "awl: %s: %v\n", notRemoved, err)
			} else {
				fmt.Fprintf(a.stderr, "awl: %v\n", err)
			}
			errs = append(errs, err)
			continue
		}
		removed++
		fmt.Fprintln(a.stdout, p)
	}
	if len(errs) == 0 {
		return nil
	}
	kind := session.KindNotFound
	locked := 0
	for _, err := range errs {
		var se *session.Error
		if errors.As(err, &se) && kind == session.KindNotFound {
			kind = se.Kind
		}
		if isKind(err, session.KindLocked) {
			locked++
		}
	}
	msg := fmt.Sprintf("%d removed, %d not", removed, len(errs))
	if locked > 0 {
		kind = session.KindLocked
		msg += fmt.Sprintf(" (%d in use)", locked)
	}
	return &session.Error{Kind: kind, Msg: msg, Err: errors.Join(errs...)}
}

func isKind(err error, k session.ErrorKind) bool {
	var se *session.Error
	return errors.As(err, &se) && se.Kind == k
}

// sessionsPruneCmd removes old sessions, and the temporary files of
// creations that were killed.
type sessionsPruneCmd struct {
	OlderThan age  `name:"older-than" required:"" placeholder:"DURATION"`
	DryRun    bool `name:"dry-run"`
	All       bool `name:"all" short:"a"`
}

func (c *sessionsPruneCmd) Run(a *app, store *session.Store) error {
	if c.OlderThan == 0 {
		// Every session is older than no time at all: almost surely a
		// mistake (an empty variable), and never the way to remove one.
		return runner.Usagef("--older-than must be a positive duration (e.g. 30d, 24h, 90m); to remove sessions by id, use awl sessions rm ID")
	}
	scope, err := listScope(c.All)
	if err != nil {
		return err
	}
	infos, err := store.Scan(scope)
	if err != nil {
		return err
	}
	cutoff := time.Now().Add(-time.Duration(c.OlderThan))
	var paths []string
	for _, in := range infos {
		// A file that is not a session (notes someone left in a sessions
		// directory) is never a candidate.
		if in.IsSession && !in.Modified.IsZero() && in.Modified.Before(cutoff) {
			paths = append(paths, in.Path)
		}
	}
	// What creations killed before their rename left, as old.
	temps, err := store.StaleTemps(scope, cutoff)
	if err != nil {
		return err
	}
	paths = append(paths, temps...)
	if testHookPruneChosen != nil {
		testHookPruneChosen(paths)
	}
	return removeAll(a, paths, c.DryRun, cutoff, nil)
}

// testHookPruneChosen, when set by a test, runs once prune has chosen the
// sessions to remove by the ages it listed, before it removes them: the
// window in which a run may resume one.
var testHookPruneChosen func(paths []string)
