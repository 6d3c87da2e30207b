// Package provider talks to models over their wire APIs. It projects a neutral
// conversation (package conv) into a request for one wire API, streams the
// answer, and returns only a completed assistant message. It never opens files
// and knows nothing of sessions or tools.
package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/internal/jsonstr"
)

// Provider streams one model response. Stream may retry transient failures
// internally; it reports each retry as an EventRetry and returns only a
// completed message, so a caller never sees a partial answer. Deltas that
// an abandoned attempt emitted before its EventRetry are void: the next
// attempt streams its answer from the start. Stream is safe to call from
// one goroutine at a time per Provider value.
type Provider interface {
	// Name is the provider's name as recorded in sessions: one of
	// Names ("anthropic", "openai", "openai-chat", "openrouter", …).
	Name() string
	// Stream sends req and calls emit for each streamed event, in order,
	// from the calling goroutine. emit may be nil.
	Stream(ctx context.Context, req Request, emit func(Event)) (conv.Message, error)
}

// ErrInterrupted is what a recorded model (replay) answers a request that
// an interrupt message ended in the recording: the runner ends the turn as
// the recording's was, with nothing appended.
var ErrInterrupted = errors.New("the recorded request was interrupted (an interrupt message)")

// Tool is a tool the model may call.
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage // JSON Schema of the input object
}

// Request is one model request: the conversation as the session holds it
// (system messages included, in place) and the options.
type Request struct {
	Model    string
	Messages []conv.Message
	Tools    []Tool
	// MaxTokens caps output tokens; 0 means the provider's default.
	MaxTokens int
	// Reasoning is the thinking/reasoning effort: "", "low", "medium", "high".
	Reasoning string
	// Thinking is how the model takes Reasoning, from the model table
	// (ThinkingAdaptive, ThinkingBudget, ThinkingEffort, ThinkingNone); ""
	// for a model the table does not know, which gets each API's older
	// form: a token budget on Anthropic's, an effort on OpenAI's.
	Thinking string
	// OutputSchema, when set, is a JSON Schema (compact JSON) that the
	// final text answer must match, sent with the API's native structured
	// output parameter. Tool calls keep working. See RejectsOutputSchema.
	OutputSchema json.RawMessage
	// ToolChoice "none" forbids tool calls in the answer while the tools
	// stay defined (a history with tool calls needs them on some APIs);
	// "" leaves the choice to the model.
	ToolChoice string
	// StablePrefix is how many leading Messages the next requests will
	// also begin with, unchanged, when later messages change (a prune):
	// Anthropic Messages marks a cache breakpoint at their end, so that
	// such a request reads them from the cache. 0 marks nothing.
	StablePrefix int
	// SharedPrefix is how many leading Messages the requests before the
	// latest prune began with too, when that prune changed the messages
	// after them (the stable prefix those requests marked): Anthropic
	// Messages marks their end as well, in place of the breakpoint after
	// the tools, so that the request reads them from the cache however
	// many blocks the prune's stubs take after them (its lookback is 20
	// blocks). 0, or not less than StablePrefix, marks nothing.
	SharedPrefix int
	// CacheTTL is how long the prompt cache keeps what this request
	// writes: "" or "5m" the API's default; "1h" Anthropic's extended
	// TTL on every breakpoint; "24h" OpenAI's extended retention
	// (prompt_cache_retention). ExtendedCache tells which a provider and
	// model take.
	CacheTTL string
	// CacheKey, when set, is OpenAI Responses' prompt_cache_key: requests
	// with the same key are routed to the same cache.
	CacheKey string
	// ServiceTier is --service-tier: "" sends none (the API's default);
	// "auto", "default", "flex", "priority" as OpenAI names them;
	// Anthropic takes "auto" and "default" (its standard_only).
	// ServiceTierOffered tells which a provider takes.
	ServiceTier string
	// Memo, when set, holds the JSON form of long strings already written
	// elsewhere (the session's lines): the body takes those bytes, the same
	// ones escaping would make, instead of escaping the strings again, and
	// then sweeps from Memo what it did not use (jsonstr.Memo.Sweep).
	Memo *jsonstr.Memo
}

// The forms of Request.Thinking.
const (
	// ThinkingAdaptive: Anthropic's {"type":"adaptive"} with
	// output_config.effort; the model decides how much to think.
	ThinkingAdaptive = "adaptive"
	// ThinkingBudget: Anthropic's {"type":"enabled","budget_tokens":N}.
	ThinkingBudget = "budget"
	// ThinkingEffort: OpenAI's reasoning effort.
	ThinkingEffort = "effort"
	// ThinkingNone: the model does not reason; Reasoning is not sent.
	ThinkingNone = "none"
)

// ToolChoiceNone is Request.ToolChoice that forbids tool calls.
const ToolChoiceNone = "none"

// EventKind discriminates an Event.
type EventKind int

// Event kinds.
const (
	EventTextDelta EventKind = iota + 1
	EventThinkingDelta
	EventToolCallStart
	EventToolCallDelta
	EventToolCallEnd
	EventUsage
	EventRetry
)

// Event is one streamed occurrence.
type Event struct {
	Kind EventKind
	// Index is the content block index within the message being built.
	Index int
	// Text is the delta for text, thinking and tool argument deltas.
	Text string
	// ToolID and ToolName identify a tool call (start, delta, end).
	ToolID   string
	ToolName string
	// Usage is set on EventUsage.
	Usage conv.Usage
	// Retry fields: the attempt about to be made (1 = first retry), the
	// HTTP status that caused it (0 for network errors), the wait before it
	// and the error text.
	Attempt int
	Status  int
	Wait    time.Duration
	Err     string
}

// ErrorKind classifies a provider failure for exit codes.
type ErrorKind int

// Error kinds.
const (
	// KindConfig: no API key, unknown provider, bad base URL.
	KindConfig ErrorKind = iota + 1
	// KindAuth: 401/403, or 404/400 for an unknown model: retrying won't help
	// and the user must change configuration.
	KindAuth
	// KindRequest: any other non-retryable 4xx.
	KindRequest
	// KindTransient: retries exhausted on 408/409/429/5xx/529, network
	// failures, stalls and incomplete streams.
	KindTransient
)

// Error is a provider failure. Message is the server's own error message
// where there is one. It never contains an API key.
type Error struct {
	Kind     ErrorKind
	Provider string
	Status   int // HTTP status, 0 if none
	Message  string
	Attempts int
}

func (e *Error) Error() string {
	s := ""
	if e.Provider != "" {
		s = e.Provider + ": "
	}
	if e.Status != 0 {
		s += StatusText(e.Status) + " (" + strconv.Itoa(e.Status) + "): "
	}
	return s + e.Message
}

// ExitCode is awl's exit code for the error: 4 for a configuration that
// cannot work (KindConfig, KindAuth), 5 for a provider that failed.
func (e *Error) ExitCode() int {
	if e.Kind == KindConfig || e.Kind == KindAuth {
		return 4
	}
	return 5
}

// ExitReason is "provider_config" or "provider_error", as ExitCode.
func (e *Error) ExitReason() string {
	if e.ExitCode() == 4 {
		return "provider_config"
	}
	return "provider_error"
}

// extraStatusText names statuses net/http does not: ones providers and the
// proxies in front of them send.
func extraStatusText(code int) string {
	switch code {
	case 499:
		return "Client Closed Request"
	case 520:
		return "Unknown Origin Error"
	case 521:
		return "Origin Down"
	case 522:
		return "Origin Connection Timed Out"
	case 523:
		return "Origin Unreachable"
	case 524:
		return "Origin Timeout"
	case 529:
		return "Overloaded"
	}
	return ""
}

// StatusText is a readable text for any HTTP status: net/http's, a known
// provider or proxy status's (529 Overloaded), or else the status class's
// ("Server Error" for an unknown 5xx).
func StatusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return t
	}
	if t := extraStatusText(code); t != "" {
		return t
	}
	switch code / 100 {
	case 1:
		return "Informational"
	case 2:
		return "Success"
	case 3:
		return "Redirection"
	case 4:
		return "Client Error"
	case 5:
		return "Server Error"
	}
	return "HTTP Status"
}

// Options configures a provider.
type Options struct {
	APIKey     string
	BaseURL    string // "" for the provider's default (or its env var, resolved by the caller)
	HTTPClient *http.Client
	// MaxRetries is the number of retries after the first attempt.
	MaxRetries int
	// IdleTimeout is how long a stream may go without a byte before the
	// attempt counts as stalled and is retried. 0 means 90s.
	IdleTimeout time.Duration
	// StallBudget bounds, for one request, the time its attempts spend
	// stalled plus the waits after those stalls: once spent, a stall is
	// not retried, and an attempt's idle timeout never outlasts what is
	// left. 0 means 3m.
	StallBudget time.Duration
	// Sleep waits between retries; nil means a context-aware time.Sleep.
	// Tests pass a fake.
	Sleep func(ctx context.Context, d time.Duration) error
	// Getenv reads the environment a cloud's credentials come from (nil:
	// the process's own).
	Getenv func(string) string
	// OnSecret, when set, is told each credential value a cloud provider
	// obtains beyond its variables (a session token STS gave, an OAuth
	// access token), once per value, when it obtains it: at start and at
	// every refresh during the run, from whichever goroutine refreshed.
	// The run's redactor learns them through it.
	OnSecret func(Secret)
	// Recording is the session file a Recorded provider plays. With
	// Lenient, a divergence from it is written to Warn and the run goes on.
	Recording string
	Lenient   bool
	Warn      io.Writer
}

// ExtendedCache says whether --cache-ttl ttl ("5m", "1h", "24h") is a
// cache lifetime provider's API offers for model, and if not, why. "5m"
// is every API's default (OpenAI's in-memory retention keeps a prefix 5
// to 10 minutes). Anthropic offers "1h" on every model; OpenAI offers
// "24h" (extended prompt cache retention) on gpt-4.1, gpt-5 and its
// versions and codex models, the only retention of gpt-5.5 and later; a
// model of an OpenAI-compatible server is given the parameter as asked.
// A cloud with its own rule (Spec.CacheTTL) is asked that.
func ExtendedCache(provider, model, ttl string) (bool, string) {
	spec, _ := Lookup(provider)
	switch {
	case ttl == "" || ttl == "5m":
		return true, ""
	case spec.CacheTTL != nil:
		return spec.CacheTTL(model, ttl)
	case Family(provider) == NameAnthropic:
		if ttl == "1h" {
			return true, ""
		}
		return false, "Anthropic's prompt cache keeps a prefix 5 minutes or 1 hour (--cache-ttl 5m or 1h)"
	case ttl != "24h":
		return false, "OpenAI's prompt cache keeps a prefix in memory (5 to 10 minutes, --cache-ttl 5m) or 24 hours (--cache-ttl 24h)"
	}
	m := model
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, p := range []string{"gpt-4o", "gpt-4.1-", "gpt-5-mini", "gpt-5-nano", "gpt-5.4-mini", "gpt-5.4-nano", "o1", "o3", "o4"} {
		if strings.HasPrefix(m, p) {
			return false, fmt.Sprintf("OpenAI offers 24-hour prompt cache retention on gpt-4.1, gpt-5 and later models and their codex versions, not on %s", model)
		}
	}
	return true, ""
}

// ServiceTierOffered says whether provider's API takes --service-tier
// tier, and if not, why. OpenAI (Responses and Chat Completions) takes
// auto, default, flex and priority as its service_tier; Anthropic's
// service_tier is auto (its Priority Tier capacity when the organisation
// has it, else standard) or standard_only, which awl calls default. A
// cloud with tiers of its own (Spec.ServiceTiers) takes those.
func ServiceTierOffered(provider, tier string) (bool, string) {
	if spec, _ := Lookup(provider); spec.ServiceTiers != nil && tier != "" {
		if _, ok := spec.ServiceTiers(tier); ok {
			return true, ""
		}
		if ok, _ := ServiceTierOffered(NameOpenAI, tier); ok {
			return false, spec.NoTier
		}
	}
	switch tier {
	case "", "auto", "default":
		return true, ""
	case "flex", "priority":
		if Family(provider) != NameAnthropic {
			return true, ""
		}
		return false, "Anthropic's API takes service_tier auto (Priority Tier capacity when your organisation has it) or standard_only (--service-tier default); it has no " + tier + " tier"
	}
	return false, "want auto, default, flex or priority"
}

// CloudTiers says whether provider is a cloud that sells service tiers of
// its own (Spec.ServiceTiers): its flex and priority requests are priced
// only at prices the table lists for them (modelinfo.Terms.ListedTiers).
func CloudTiers(provider string) bool {
	spec, _ := Lookup(provider)
	return spec.ServiceTiers != nil
}

// anthropicTier is --service-tier as Anthropic's service_tier.
func anthropicTier(tier string) string {
	if tier == "default" {
		return "standard_only"
	}
	return tier
}
