package provider

import (
	"fmt"
	"slices"
	"strings"
)

// Wire is a wire API: the request and stream format a provider speaks.
type Wire string

// The wire APIs awl speaks, one file each.
const (
	WireAnthropic Wire = "anthropic-messages"      // anthropic.go
	WireResponses Wire = "openai-responses"        // openai_responses.go
	WireChat      Wire = "openai-chat-completions" // openai_chat.go
)

// Spec is everything awl knows about one provider name: the wire API it
// speaks and where its settings come from. The CLI, its help text and
// errors, and the list of secret variables kept from tools are all derived
// from the registry, so a provider added here is complete.
type Spec struct {
	// Name is the --provider value, recorded in sessions.
	Name string
	// Family is the vendor whose models the provider serves under their
	// own names, when it is not Name: its models are looked up in the
	// model table (prices, windows, thinking) under Family, and traces
	// name Family as gen_ai.provider.name. openai-chat is openai.
	Family string
	// Wire is the wire API.
	Wire Wire
	// KeyVar holds the API key; KeyFileVar names a file that holds it
	// (for secrets mounted as files). Both may be shared by providers
	// (openai and openai-chat).
	KeyVar, KeyFileVar string
	// BaseURLVar overrides BaseURL, the default base URL. Endpoint paths
	// are appended to it ("/v1/messages"; "/responses",
	// "/chat/completions", so OpenAI-style bases include the "/v1").
	BaseURLVar, BaseURL string
	// DefaultModel is the model used when none is chosen.
	DefaultModel string
	// KeyRequired: a run without a key fails before anything is read or
	// sent. KeylessWithBaseURL relaxes that when a base URL is given (flag
	// or BaseURLVar): a local compatible server often takes no key. A key
	// that is set is always sent.
	KeyRequired        bool
	KeylessWithBaseURL bool
	// Auto: with no provider chosen, the first Auto provider whose key is
	// set is used.
	Auto bool
	// MoreSecretVars are other variables holding this provider's
	// credentials; like KeyVar they are never passed to tools.
	MoreSecretVars []string
	// Recorded: the provider plays a recorded session (Options.Recording)
	// instead of asking a model. It takes no key and no base URL, has no
	// context window (nothing is too long for a recording, so a run never
	// prunes or compacts), cannot write a compaction's summary, and a run's
	// prompts come from the recording unless given.
	Recorded bool
	// Open builds a provider that speaks no wire API (Wire is ""): New
	// calls it instead.
	Open func(Options) (Provider, error)
	// AnthropicVersion, for a cloud that serves the Messages API under
	// its own endpoint, is the body's anthropic_version
	// ("bedrock-2023-05-31"); the model is then in the URL, not the body,
	// and OmitStream leaves "stream" out of the body too (Bedrock's
	// InvokeModelWithResponseStream refuses it).
	AnthropicVersion string
	OmitStream       bool
	// Cloud, when set, makes the provider's endpoint, credentials and
	// stream framing (cloud.go); New calls it with the options.
	Cloud func(Options) (Cloud, error)
	// TableModel, when set, maps a model id of the provider to the name
	// the model table knows it by (a Bedrock inference profile to its
	// Anthropic model); "" when it names no model the table may know.
	TableModel func(model string) string
	// ServiceTiers, for a cloud that offers its own subset of the
	// --service-tier values, says whether it takes tier and what is then
	// sent: the value of header TierHeader, or nothing for ""; the wire
	// API's service_tier is never in its body. Another value is refused
	// with NoTier's reason. nil: the wire API's own tiers. (A function,
	// not a map: a map in a Spec would be built by every start.)
	ServiceTiers func(tier string) (sent string, ok bool)
	TierHeader   string
	NoTier       string
	// CacheTTL, when set, says whether the cloud offers --cache-ttl ttl
	// ("1h", "24h") for model, the model table's name for it when the
	// table knows it, and if not, why. nil: the wire API's rule.
	CacheTTL func(model, ttl string) (bool, string)
}

// Provider names, as given to New and recorded in sessions.
const (
	NameAnthropic  = "anthropic"
	NameOpenAI     = "openai"
	NameOpenAIChat = "openai-chat"
	NameOpenRouter = "openrouter"
	NameOllama     = "ollama"
)

// DefaultsChosen is when each provider's DefaultModel was last chosen, by
// hand, as the model the provider recommends for general work when the
// caller names none: Anthropic's models overview
// (platform.claude.com/docs/en/models/overview: Claude Sonnet 5.5, "the
// best combination of speed and intelligence"; Opus is for the hardest
// work at twice the price), OpenAI's (developers.openai.com/docs/models:
// "If you're not sure where to start, use gpt-5.5"). OpenRouter serves
// Anthropic's under its own name; Ollama's is a local open model.
const DefaultsChosen = "2026-12-07"

// registry is the one table of providers, in the order Auto is tried and
// help lists them.
var registry = []Spec{
	{
		Name: NameAnthropic, Wire: WireAnthropic,
		KeyVar: "ANTHROPIC_API_KEY", KeyFileVar: "ANTHROPIC_API_KEY_FILE",
		BaseURLVar: "ANTHROPIC_BASE_URL", BaseURL: "https://api.anthropic.com",
		DefaultModel: "claude-sonnet-5-5", KeyRequired: true, Auto: true,
		MoreSecretVars: []string{"ANTHROPIC_AUTH_TOKEN"},
	},
	{
		Name: NameOpenAI, Wire: WireResponses,
		KeyVar: "OPENAI_API_KEY", KeyFileVar: "OPENAI_API_KEY_FILE",
		BaseURLVar: "OPENAI_BASE_URL", BaseURL: "https://api.openai.com/v1",
		DefaultModel: "gpt-5.5", KeyRequired: true, Auto: true,
	},
	{
		Name: NameOpenAIChat, Wire: WireChat, Family: NameOpenAI,
		KeyVar: "OPENAI_API_KEY", KeyFileVar: "OPENAI_API_KEY_FILE",
		BaseURLVar: "OPENAI_BASE_URL", BaseURL: "https://api.openai.com/v1",
		DefaultModel: "gpt-5.5", KeyRequired: true, KeylessWithBaseURL: true,
	},
	{
		Name: NameOpenRouter, Wire: WireChat,
		KeyVar: "OPENROUTER_API_KEY", KeyFileVar: "OPENROUTER_API_KEY_FILE",
		BaseURLVar: "OPENROUTER_BASE_URL", BaseURL: "https://openrouter.ai/api/v1",
		DefaultModel: "anthropic/claude-sonnet-5.5", KeyRequired: true, Auto: true,
	},
	{
		Name: NameOllama, Wire: WireChat,
		KeyVar: "OLLAMA_API_KEY", KeyFileVar: "OLLAMA_API_KEY_FILE",
		BaseURLVar: "OLLAMA_BASE_URL", BaseURL: "http://localhost:11434/v1",
		DefaultModel: "gpt-oss:20b",
	},
}

// Register adds a provider that lives in a package of its own (replay) to
// the registry, after the built-in ones. It panics on a name taken: a
// program bug.
func Register(s Spec) {
	if _, ok := Lookup(s.Name); ok || s.Name == "" {
		panic(fmt.Sprintf("provider: %q registered twice", s.Name))
	}
	// A recorded provider (replay) stays last, whatever the order the
	// packages that register are initialised in.
	i := len(registry)
	for i > 0 && registry[i-1].Recorded && !s.Recorded {
		i--
	}
	registry = slices.Insert(registry, i, s)
}

// Specs returns the registry, in order. The slice is a copy.
func Specs() []Spec {
	out := make([]Spec, len(registry))
	copy(out, registry)
	for i := range out {
		out[i].MoreSecretVars = append([]string(nil), out[i].MoreSecretVars...)
	}
	return out
}

// Lookup returns the spec of the provider called name.
func Lookup(name string) (Spec, bool) {
	for _, s := range registry {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Names lists the provider names New accepts, in registry order.
func Names() []string {
	out := make([]string, len(registry))
	for i, s := range registry {
		out[i] = s.Name
	}
	return out
}

// TableModel returns the name the model table knows provider name's model
// by: the spec's mapping of cloud model ids, or model itself.
func TableModel(name, model string) string {
	if s, ok := Lookup(strings.ToLower(strings.TrimSpace(name))); ok && s.TableModel != nil {
		return s.TableModel(model)
	}
	return model
}

// DefaultModel returns the model a provider uses when the request names none,
// or "" for an unknown provider.
func DefaultModel(name string) string {
	s, _ := Lookup(name)
	return s.DefaultModel
}

// Family returns the vendor whose model names provider name serves
// (Spec.Family): name itself unless the registry says otherwise. Case and
// surrounding space do not matter.
func Family(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	if s, ok := Lookup(n); ok && s.Family != "" {
		return s.Family
	}
	return n
}

// DefaultBaseURL returns a provider's default base URL, or "" for an
// unknown provider.
func DefaultBaseURL(name string) string {
	s, _ := Lookup(name)
	return s.BaseURL
}

// SecretVars lists every variable that holds a provider credential, each
// once, in registry order. Tools never see them.
func SecretVars() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range registry {
		for _, v := range append([]string{s.KeyVar}, s.MoreSecretVars...) {
			if v != "" && !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// CloudSecretVars lists the credential variables of the cloud providers
// (Spec.Cloud): what --share-cloud-credentials passes to tools.
func CloudSecretVars() []string {
	var out []string
	for _, s := range registry {
		if s.Cloud != nil {
			for _, v := range append([]string{s.KeyVar}, s.MoreSecretVars...) {
				if v != "" && !slices.Contains(out, v) {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// AutoKeyVars lists, in the order they are tried, the key variables that
// choose a provider when none is named.
func AutoKeyVars() []string {
	var out []string
	for _, s := range registry {
		if s.Auto {
			out = append(out, s.KeyVar)
		}
	}
	return out
}

// unknownProvider is the error for a name the registry lacks.
func unknownProvider(name string) *Error {
	return &Error{Kind: KindConfig, Provider: name,
		Message: fmt.Sprintf("unknown provider %q (want one of %s)", name, strings.Join(Names(), ", "))}
}

// MinOutputTokens is the least output cap the API of provider name takes:
// 16 on OpenAI's Responses API, 1 elsewhere.
func MinOutputTokens(name string) int {
	if s, _ := Lookup(name); s.Wire == WireResponses {
		return 16
	}
	return 1
}
