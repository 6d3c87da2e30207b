package session

import (
	"encoding/json"
	"fmt"
)

// The entry types besides the header and messages (docs/session-format.md
// has their members). Each is additive: an older reader skips them.
const (
	// TypeTurnContext records the context the model has been shown: the
	// baseline later turns send only the changes to.
	TypeTurnContext = "turnContext"
	// TypeRun records how a run ended (Run).
	TypeRun = "run"
	// TypePrune records that tool results up to an entry are shown in
	// requests as short stubs from here on (Prune).
	TypePrune = "prune"
	// TypeCompaction records a summary that stands, in requests, for the
	// conversation before it (Compaction).
	TypeCompaction = "compaction"
)

// Usage is token usage as the session format spells it.
type Usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
}

// Run is the members of a run entry, appended at the end of every run that
// holds the session's lock, whatever ended it. A run killed with SIGKILL
// has none: its absence is how a reader knows. Rebuild skips it.
type Run struct {
	ExitCode int      `json:"exitCode"`
	Reason   string   `json:"reason"`
	Error    string   `json:"error,omitempty"`
	Turns    int      `json:"turns"`
	Usage    Usage    `json:"usage"`
	CostUSD  *float64 `json:"costUsd"`
	// CacheReadShare is the share of the run's input read from the
	// prompt cache; absent without input.
	CacheReadShare *float64 `json:"cacheReadShare,omitempty"`
	DurationMS     int64    `json:"durationMs"`
	AwlVersion     string   `json:"awlVersion"`
	// Checks is each --check command's last exit code and runs.
	Checks []Check  `json:"checks,omitempty"`
	Flags  RunFlags `json:"flags"`
	// Config is the configuration files the run read, when it read any.
	Config *RunConfig `json:"config,omitempty"`
}

// RunConfig is what a run entry records of the configuration files: each
// file read, in order, with the sha256 of its bytes, and the profile.
type RunConfig struct {
	Files   []ConfigFile `json:"files"`
	Profile string       `json:"profile,omitempty"`
}

// ConfigFile is one configuration file a run read.
type ConfigFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Check is one --check command of a run entry: its last exit code (-1 when
// it did not exit on its own) and how many times it ran. Its members are
// spelt as the result event spells them.
type Check struct {
	Cmd      string `json:"cmd"`
	ExitCode int    `json:"exit_code"`
	Attempts int    `json:"attempts"`
}

// RunFlags are the settings that shaped a run. It never holds a key.
type RunFlags struct {
	Provider        string   `json:"provider"`
	Model           string   `json:"model"`
	MaxTurns        int      `json:"maxTurns,omitempty"`
	MaxOutputTokens int      `json:"maxOutputTokens,omitempty"`
	MaxCostUSD      float64  `json:"maxCostUsd,omitempty"`
	MaxTotalTokens  int64    `json:"maxTotalTokens,omitempty"`
	TimeoutMS       int64    `json:"timeoutMs,omitempty"`
	Reasoning       string   `json:"reasoning,omitempty"`
	Tools           []string `json:"tools"`
	Checks          []string `json:"checks,omitempty"`
	CheckRetries    int      `json:"checkRetries,omitempty"`
	// ContextWindow is the window in force (from the model table or
	// --context-window); PruneAt and CompactAt are the thresholds given,
	// 0 for the defaults.
	ContextWindow int64 `json:"contextWindow,omitempty"`
	PruneAt       int   `json:"pruneAt,omitempty"`
	CompactAt     int   `json:"compactAt,omitempty"`
	NoCompact     bool  `json:"noCompact,omitempty"`
	// Sandbox is the --sandbox mode, when not off.
	Sandbox string `json:"sandbox,omitempty"`
	// CacheTTL is --cache-ttl, when given.
	CacheTTL string `json:"cacheTtl,omitempty"`
	// ServiceTier is --service-tier, when given.
	ServiceTier string `json:"serviceTier,omitempty"`
	// Rules are the rules of --tools and --deny-tools (and their
	// configuration keys) the run judged calls by, when any was given.
	Rules *RunRules `json:"rules,omitempty"`
	// ToolHooks are the --tool-hook commands, in order, when any was given.
	ToolHooks []string `json:"toolHooks,omitempty"`
	// FailOnDeny is --fail-on-deny.
	FailOnDeny bool `json:"failOnDeny,omitempty"`
}

// RunRules are a run's tool rules, each as written, lists split on the
// commas outside parentheses.
type RunRules struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// Prune is the members of a prune entry.
type Prune struct {
	UpToID       string `json:"upToId"`
	TokensBefore int64  `json:"tokensBefore"`
	TokensAfter  int64  `json:"tokensAfter"`
}

// Compaction is the members of a compaction entry.
type Compaction struct {
	Summary          string `json:"summary"`
	FirstKeptEntryID string `json:"firstKeptEntryId,omitempty"`
	TokensBefore     int64  `json:"tokensBefore"`
	TokensAfter      int64  `json:"tokensAfter"`
	Provider         string `json:"provider"`
	Model            string `json:"model"`
	Reason           string `json:"reason"`
	// Usage and CostUSD are the summary request's.
	Usage   *Usage   `json:"usage,omitempty"`
	CostUSD *float64 `json:"costUsd"`
	// ContextMessages is how many message entries (the context rebuilt in
	// full) follow the compaction entry, before its turnContext baseline.
	// A compaction not followed by exactly these (awl was killed while
	// writing them) is not in force. nil, in sessions written before the
	// member existed, takes the first turnContext after the entry for the
	// baseline.
	ContextMessages *int `json:"contextMessages,omitempty"`
}

// Decode reads the members of e, an entry that is not a message, into v:
// a *Run, *Prune or *Compaction for those types. It is the one decoder of
// these members: a member of another JSON type (a hand-edited file) is an
// error, and so is an entry of another type than v is for.
func (e *Entry) Decode(v any) error {
	want := ""
	switch v.(type) {
	case *Run:
		want = TypeRun
	case *Prune:
		want = TypePrune
	case *Compaction:
		want = TypeCompaction
	}
	if want != "" && e.Type != want {
		return fmt.Errorf("a %s entry is not a %s entry", e.Type, want)
	}
	return json.Unmarshal(e.Fields, v)
}
