package providertest

import (
	"encoding/binary"
	"hash/fnv"
	"regexp"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// Cache is a model of the providers' prompt caches, for measuring what a
// run's requests would be billed. It reads each request body as the API
// it was written for and reports the tokens it would read from the cache,
// write to it, and take as plain input. It is this package's own model,
// built from the providers' published rules, not their code:
//
// Tokens. A request is cut into blocks: each tool definition, each system
// block, each content block of each message (a message whose content is a
// string is one block), each input item of an OpenAI request. A block's
// tokens are its JSON text (cache_control markers removed) over four
// bytes, rounded up.
//
// Anthropic ("anthropic"). The prompt is read in the order tools, system,
// messages. A cache_control marker on a block is a breakpoint: the prefix
// that ends with that block is written to the cache (when it is at least
// MinTokens long), for five minutes, or an hour with "ttl":"1h". For each
// breakpoint the cache looks for a stored prefix ending at that block or
// at one of the 19 blocks before it (20 blocks in all) and reads the
// longest one found over all breakpoints; a prefix it reads, and every
// stored prefix of that prefix, lives on for its TTL from then. Everything from the read point to the last
// breakpoint written is a cache write; what follows the last breakpoint
// is input. The model, tool_choice and thinking settings are part of the
// messages' prefix, as Anthropic documents that changing them
// invalidates the messages' cache. The usage is reported as Anthropic's:
// input_tokens (neither read nor written), cache_read_input_tokens and
// cache_creation_input_tokens (with the 1-hour part in
// cache_creation.ephemeral_1h_input_tokens).
//
// OpenAI ("openai" Responses, "openai-chat" Chat Completions). Caching is
// automatic for a prompt of 1024 tokens or more: after each request its
// prefixes of 1024, 1152, 1280, … tokens (128-token steps) are stored,
// and a request reads the longest stored prefix it begins with. A stored
// prefix lives ten minutes from its last use, or 24 hours with
// "prompt_cache_retention":"24h". Requests are routed to a cache by
// prompt_cache_key when one is given, else by their first 256 tokens: a
// prefix is only found by requests routed alike. Cached tokens are
// reported in input_tokens_details.cached_tokens (Responses) or
// prompt_tokens_details.cached_tokens (Chat), inside the input total.
//
// Cache also keeps the ideal: the tokens the request shares with the
// longest common prefix of any earlier request, as an unbounded cache
// that never expires and needs no breakpoint would read.
type Cache struct {
	// API is "anthropic", "openai" or "openai-chat".
	API string
	// Now is the clock TTLs run on; nil means time.Now. Benchmarks give
	// it a simulated clock.
	Now func() time.Time
	// MinTokens is the shortest prefix cached; 0 means 1024 (Anthropic's
	// Sonnet and Opus minimum, and OpenAI's).
	MinTokens int

	mu      sync.Mutex
	entries map[uint64]cacheEntry
	seen    map[uint64]int // every prefix ever sent, for the ideal
}

type cacheEntry struct {
	expires time.Time
	ttl     time.Duration
}

// CacheUsage is what one request would be billed, in tokens.
type CacheUsage struct {
	// Total is every input token of the request.
	Total int
	// Read is read from the cache; Write is written to it (Anthropic
	// only), Write1h the part of Write written for an hour; Input is the
	// rest: Total = Input + Read + Write.
	Read, Write, Write1h, Input int
	// Ideal is what an unbounded cache would have read: the longest
	// prefix this request shares with any earlier one.
	Ideal int
}

// block is one cacheable unit of a request: the hash of the prefix that
// ends with it, the tokens up to and including it, and its breakpoint.
type block struct {
	hash uint64
	cum  int
	bp   bool
	ttl  time.Duration
}

var cacheControl = regexp.MustCompile(`,?"cache_control":\{[^}]*\}`)

// blockTokens is the tokens a block of JSON text counts for.
func blockTokens(raw string) int { return (len(raw) + 3) / 4 }

// Observe bills one request body, updates the cache, and returns the usage.
func (c *Cache) Observe(body []byte) CacheUsage {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries, c.seen = map[uint64]cacheEntry{}, map[uint64]int{}
	}
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	blocks, _ := linearize(c.API, body)
	var u CacheUsage
	if len(blocks) > 0 {
		u.Total = blocks[len(blocks)-1].cum
	}
	for _, b := range blocks {
		if _, ok := c.seen[b.hash]; !ok {
			break
		}
		u.Ideal = b.cum
	}
	for _, b := range blocks {
		c.seen[b.hash] = b.cum
	}
	if c.API == "anthropic" {
		c.anthropic(blocks, now, &u)
	} else {
		c.openai(body, now, &u)
	}
	u.Input = u.Total - u.Read - u.Write
	return u
}

func (c *Cache) minTokens() int {
	if c.MinTokens > 0 {
		return c.MinTokens
	}
	return 1024
}

// lookback is how many blocks, the breakpoint's own included, Anthropic
// checks for a stored prefix.
const lookback = 20

func (c *Cache) anthropic(blocks []block, now time.Time, u *CacheUsage) {
	read := -1
	for p, b := range blocks {
		if !b.bp {
			continue
		}
		for j := p; j >= 0 && j > p-lookback; j-- {
			if e, ok := c.entries[blocks[j].hash]; ok && now.Before(e.expires) {
				if j > read {
					read = j
				}
				break
			}
		}
	}
	if read >= 0 {
		// What is read is used: every stored prefix of it lives on.
		for _, b := range blocks[:read+1] {
			if e, ok := c.entries[b.hash]; ok && now.Before(e.expires) {
				c.entries[b.hash] = cacheEntry{expires: now.Add(e.ttl), ttl: e.ttl}
			}
		}
		u.Read = blocks[read].cum
	}
	from := u.Read
	for p, b := range blocks {
		if !b.bp || p <= read || b.cum < c.minTokens() {
			continue
		}
		c.entries[b.hash] = cacheEntry{expires: now.Add(b.ttl), ttl: b.ttl}
		u.Write += b.cum - from
		if b.ttl > 5*time.Minute {
			u.Write1h += b.cum - from
		}
		from = b.cum
	}
}

// openAIStep is the granularity of OpenAI's cached prefixes.
const openAIStep = 128

func (c *Cache) openai(body []byte, now time.Time, u *CacheUsage) {
	ttl := 10 * time.Minute
	if gjson.GetBytes(body, "prompt_cache_retention").Str == "24h" {
		ttl = 24 * time.Hour
	}
	stream := tokenStream(c.API, body)
	n := len(stream) / 4
	shard := fnv.New64a()
	if key := gjson.GetBytes(body, "prompt_cache_key"); key.Exists() {
		shard.Write([]byte("key:" + key.Str))
	} else {
		shard.Write(stream[:min(len(stream), 256*4)])
	}
	shard.Write([]byte("model:" + gjson.GetBytes(body, "model").Str))
	seed := shard.Sum64()
	h := fnv.New64a()
	var s [8]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	h.Write(s[:])
	done := 0
	hit := true
	for l := c.minTokens(); l <= n; l += openAIStep {
		h.Write(stream[done*4 : l*4])
		done = l
		k := h.Sum64()
		e, ok := c.entries[k]
		if hit && ok && now.Before(e.expires) {
			u.Read = l
		} else {
			hit = false
		}
		c.entries[k] = cacheEntry{expires: now.Add(ttl), ttl: ttl}
	}
}

// OwnTokens is the tokens of a request body's tools and system prompt
// (Anthropic's system, Responses' instructions, Chat's leading system
// messages), as Cache counts them: what a runner sends before the
// conversation.
func OwnTokens(api string, body []byte) int {
	_, own := linearize(api, body)
	return own
}

// linearize cuts body into blocks in cache order, and says how many tokens
// the tools and system prompt take.
func linearize(api string, body []byte) (out []block, own int) {
	h := fnv.New64a()
	cum := 0
	add := func(prefix string, raw string) {
		b := block{}
		if m := gjson.Get(raw, "cache_control"); m.Exists() {
			b.bp, b.ttl = true, 5*time.Minute
			if m.Get("ttl").Str == "1h" {
				b.ttl = time.Hour
			}
			raw = cacheControl.ReplaceAllString(raw, "")
		}
		h.Write([]byte(prefix))
		h.Write([]byte(raw))
		h.Write([]byte{0})
		cum += blockTokens(raw)
		b.hash, b.cum = h.Sum64(), cum
		out = append(out, b)
	}
	j := gjson.ParseBytes(body)
	h.Write([]byte(j.Get("model").Str))
	for _, t := range j.Get("tools").Array() {
		add("tool:", t.Raw)
	}
	switch api {
	case "anthropic":
		if sys := j.Get("system"); sys.IsArray() {
			for _, b := range sys.Array() {
				add("system:", b.Raw)
			}
		} else if sys.Exists() {
			add("system:", sys.Raw)
		}
		own = cum
		h.Write([]byte(j.Get("tool_choice").Raw + j.Get("thinking").Raw))
		for _, m := range j.Get("messages").Array() {
			role := m.Get("role").Str + ":"
			if content := m.Get("content"); content.IsArray() {
				for _, b := range content.Array() {
					add(role, b.Raw)
					role = ""
				}
			} else {
				add(role, content.Raw)
			}
		}
	case "openai":
		if ins := j.Get("instructions"); ins.Exists() {
			add("instructions:", ins.Raw)
		}
		own = cum
		for _, it := range j.Get("input").Array() {
			add("", it.Raw)
		}
	default:
		own = cum
		for _, m := range j.Get("messages").Array() {
			add("", m.Raw)
			if m.Get("role").Str == "system" && own == cum-blockTokens(m.Raw) {
				own = cum
			}
		}
	}
	return out, own
}

// tokenStream is body's prompt as OpenAI's cache sees it: the blocks'
// JSON text in order, each padded to whole tokens of four bytes, so that
// token k is bytes 4k to 4k+4.
func tokenStream(api string, body []byte) []byte {
	j := gjson.ParseBytes(body)
	var out []byte
	add := func(raw string) {
		out = append(out, raw...)
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
	}
	for _, t := range j.Get("tools").Array() {
		add(t.Raw)
	}
	if api == "openai" {
		if ins := j.Get("instructions"); ins.Exists() {
			add(ins.Raw)
		}
		for _, it := range j.Get("input").Array() {
			add(it.Raw)
		}
		return out
	}
	for _, m := range j.Get("messages").Array() {
		add(m.Raw)
	}
	return out
}
