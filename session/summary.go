package session

import (
	"encoding/json"
	"errors"
	"time"
	"unicode/utf8"
)

// LastTextMax is the most bytes of a final answer a listing shows
// (Info.LastText): a longer one is cut there, between characters.
const LastTextMax = 16 << 10

// listSummary is what a listing shows of a sound session file, kept with
// its verdict in the directory's verified file, so that a listing of the
// file in the same state reads none of it.
type listSummary struct {
	ID             string    `json:"id"`
	Cwd            string    `json:"cwd"`
	Created        time.Time `json:"created"`
	Messages       int       `json:"messages"`
	Provider       string    `json:"provider,omitempty"`
	Model          string    `json:"model,omitempty"`
	ForkedFrom     string    `json:"forkedFrom,omitempty"`
	ForkedAt       string    `json:"forkedAt,omitempty"`
	FirstPrompt    string    `json:"firstPrompt,omitempty"`
	LastStopReason string    `json:"lastStopReason,omitempty"`
	LastText       string    `json:"lastText,omitempty"`
	LastRun        *runSum   `json:"lastRun,omitempty"`
	Status         string    `json:"status,omitempty"`
	TotalCostUSD   *float64  `json:"totalCostUsd,omitempty"`
	CacheReadShare *float64  `json:"cacheReadShare,omitempty"`
}

// runSum is a RunInfo in a listSummary.
type runSum struct {
	ExitCode       int       `json:"exitCode"`
	Reason         string    `json:"reason"`
	CostUSD        *float64  `json:"costUsd,omitempty"`
	CacheReadShare *float64  `json:"cacheReadShare,omitempty"`
	Ended          time.Time `json:"ended"`
}

// summaryOf is what in, the listing of a sound session file, shows.
func summaryOf(in *Info) *listSummary {
	s := &listSummary{ID: in.ID, Cwd: in.Cwd, Created: in.Created, Messages: in.Messages, Provider: in.Provider, Model: in.Model,
		ForkedFrom: in.ForkedFrom, ForkedAt: in.ForkedAt, FirstPrompt: in.FirstPrompt, LastStopReason: in.LastStopReason,
		LastText: in.LastText, Status: in.Status, TotalCostUSD: in.TotalCostUSD, CacheReadShare: in.CacheReadShare}
	if r := in.LastRun; r != nil {
		s.LastRun = &runSum{ExitCode: r.ExitCode, Reason: r.Reason, CostUSD: r.CostUSD, CacheReadShare: r.CacheReadShare, Ended: r.Ended}
	}
	return s
}

// info is the listing of the file at path, modified at mod, that s
// summarises.
func (s *listSummary) info(path string, mod time.Time) Info {
	in := Info{ID: s.ID, Path: path, Cwd: s.Cwd, Created: s.Created, Modified: mod, Messages: s.Messages,
		Provider: s.Provider, Model: s.Model, ForkedFrom: s.ForkedFrom, ForkedAt: s.ForkedAt,
		FirstPrompt: s.FirstPrompt, LastStopReason: s.LastStopReason, LastText: s.LastText,
		Status: s.Status, TotalCostUSD: s.TotalCostUSD, CacheReadShare: s.CacheReadShare, IsSession: true}
	if r := s.LastRun; r != nil {
		in.LastRun = &RunInfo{ExitCode: r.ExitCode, Reason: r.Reason, CostUSD: r.CostUSD, CacheReadShare: r.CacheReadShare, Ended: r.Ended}
	}
	return in
}

// encode is s as one line of JSON: no tab or newline outside a string,
// none inside (encoding/json escapes them).
func (s *listSummary) encode() []byte {
	b, err := json.Marshal(s)
	if err != nil {
		return nil // only NaN or Inf costs, which a listing never sums
	}
	return b
}

// parseSummary parses a listSummary that encode wrote.
func parseSummary(field string) (*listSummary, error) {
	if field == "" || field[0] != '{' {
		return nil, errors.New("not a summary")
	}
	s := &listSummary{}
	if err := json.Unmarshal([]byte(field), s); err != nil {
		return nil, err
	}
	if s.ID == "" || s.Cwd == "" || s.Messages < 0 {
		return nil, errors.New("an incomplete summary")
	}
	return s, nil
}

// cutText is text cut to at most max bytes, between characters.
func cutText(text string, max int) string {
	if len(text) <= max {
		return text
	}
	i := max
	for i > 0 && !utf8.RuneStart(text[i]) {
		i--
	}
	return text[:i]
}
