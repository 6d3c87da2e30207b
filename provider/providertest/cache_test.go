package providertest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// text is a JSON text block of exactly n tokens (4n bytes of JSON).
func textOf(tag string, n int, cc string) string {
	head := `{"type":"text","text":"` + tag
	tail := `"}`
	pad := 4*n - len(head) - len(tail)
	b := head + strings.Repeat("x", pad) + tail
	if cc != "" {
		b = b[:len(b)-1] + `,"cache_control":` + cc + `}`
	}
	return b
}

// anthBody is an Anthropic request: one tool and one system block of 600
// tokens each (breakpoints on both), then one user message per block
// given, the breakpoint on the last.
func anthBody(choice string, ttl string, blocks ...string) []byte {
	cc := `{"type":"ephemeral"}`
	if ttl != "" {
		cc = `{"type":"ephemeral","ttl":"` + ttl + `"}`
	}
	head, tail := `{"name":"bash","input_schema":{"type":"object","description":"`, `"}}`
	tool := head + strings.Repeat("y", 4*600-len(head)-len(tail)) + tail
	tool = tool[:len(tool)-1] + `,"cache_control":` + cc + `}`
	var msgs []string
	for i, b := range blocks {
		if i == len(blocks)-1 {
			b = b[:len(b)-1] + `,"cache_control":` + cc + `}`
		}
		msgs = append(msgs, `{"role":"user","content":[`+b+`]}`)
	}
	ch := ""
	if choice != "" {
		ch = `,"tool_choice":{"type":"` + choice + `"}`
	}
	return []byte(`{"model":"m","tools":[` + tool + `],"system":[` + textOf("sys", 600, cc) + `],"messages":[` + strings.Join(msgs, ",") + `]` + ch + `}`)
}

func blocksOf(n, size int) []string {
	var out []string
	for i := range n {
		out = append(out, textOf(fmt.Sprintf("b%d-", i), size, ""))
	}
	return out
}

func TestCacheTokensAreJSONOverFour(t *testing.T) {
	c := &Cache{API: "anthropic"}
	u := c.Observe(anthBody("", "", blocksOf(3, 100)...))
	// The tool's JSON without its marker, the system block, three blocks.
	if u.Total != 600+600+300 {
		t.Fatalf("total %d, want 1500", u.Total)
	}
}

func TestAnthropicCacheReadsThePreviousPrefix(t *testing.T) {
	c := &Cache{API: "anthropic"}
	bs := blocksOf(6, 200)
	u := c.Observe(anthBody("", "", bs[:4]...))
	// The tool alone (600) is under 1024 and is not written; tool and
	// system (1200) and the whole prefix are.
	if u.Read != 0 || u.Write != u.Total || u.Input != 0 {
		t.Fatalf("first request: %+v, want everything written", u)
	}
	first := u.Total
	u = c.Observe(anthBody("", "", bs...))
	if u.Read != first || u.Write != u.Total-first || u.Input != 0 || u.Ideal != first {
		t.Fatalf("second request: %+v, want %d read and the rest written", u, first)
	}
	// A request that changes the second message reads only tools and
	// system: the prefix up to the first message was never a breakpoint.
	changed := append([]string{bs[0], textOf("other", 200, "")}, bs[2:]...)
	u = c.Observe(anthBody("", "", changed...))
	if u.Read != 1200 || u.Ideal < 1400 {
		t.Fatalf("changed request: %+v, want 1200 read (tools and system) and an ideal past the first message", u)
	}
}

func TestAnthropicLooksBackTwentyBlocks(t *testing.T) {
	for _, tc := range []struct {
		added int
		read  bool
	}{{19, true}, {20, false}} {
		c := &Cache{API: "anthropic"}
		bs := blocksOf(2+tc.added, 20)
		u0 := c.Observe(anthBody("", "", bs[:2]...))
		u := c.Observe(anthBody("", "", bs...))
		if got := u.Read == u0.Total; got != tc.read {
			t.Errorf("%d blocks added: read %d of the earlier %d; want the earlier prefix read: %v", tc.added, u.Read, u0.Total, tc.read)
		}
		if !tc.read && u.Read != 1200 {
			t.Errorf("%d blocks added: read %d, want the system prefix 1200", tc.added, u.Read)
		}
	}
}

func TestAnthropicCacheExpires(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	bs := blocksOf(3, 200)
	for _, tc := range []struct {
		ttl   string
		wait  time.Duration
		read  bool
		write bool
	}{
		{"", 4 * time.Minute, true, false},
		{"", 5*time.Minute + time.Second, false, false},
		{"1h", 59 * time.Minute, true, true},
		{"1h", 61 * time.Minute, false, true},
	} {
		c := &Cache{API: "anthropic", Now: clock}
		u0 := c.Observe(anthBody("", tc.ttl, bs...))
		if tc.write != (u0.Write1h == u0.Write) || u0.Write == 0 {
			t.Errorf("ttl %q: wrote %d, %d of it for an hour", tc.ttl, u0.Write, u0.Write1h)
		}
		now = now.Add(tc.wait)
		u := c.Observe(anthBody("", tc.ttl, bs...))
		if got := u.Read == u0.Total; got != tc.read {
			t.Errorf("ttl %q after %v: read %d of %d, want read: %v", tc.ttl, tc.wait, u.Read, u0.Total, tc.read)
		}
	}
	// A read refreshes the TTL: three reads four minutes apart all hit.
	c := &Cache{API: "anthropic", Now: clock}
	u0 := c.Observe(anthBody("", "", bs...))
	for i := range 3 {
		now = now.Add(4 * time.Minute)
		if u := c.Observe(anthBody("", "", bs...)); u.Read != u0.Total {
			t.Fatalf("read %d after %d refreshes: %+v", i+1, i, u)
		}
	}
}

func TestAnthropicShortPrefixIsNotCached(t *testing.T) {
	c := &Cache{API: "anthropic", MinTokens: 2048}
	bs := blocksOf(2, 100)
	u := c.Observe(anthBody("", "", bs...))
	if u.Write != 0 || u.Input != u.Total {
		t.Fatalf("a %d-token prompt under the 2048 minimum: %+v, want all input", u.Total, u)
	}
	if u = c.Observe(anthBody("", "", bs...)); u.Read != 0 {
		t.Fatalf("read %d of a prefix that was never written", u.Read)
	}
}

func TestAnthropicToolChoiceInvalidatesMessages(t *testing.T) {
	c := &Cache{API: "anthropic"}
	bs := blocksOf(3, 200)
	c.Observe(anthBody("", "", bs...))
	u := c.Observe(anthBody("none", "", bs...))
	if u.Read != 1200 {
		t.Fatalf("with tool_choice changed: read %d, want only tools and system (1200)", u.Read)
	}
}

// respBody is an OpenAI Responses request of n input items of size tokens.
func respBody(key, retention string, items ...string) []byte {
	var extra string
	if key != "" {
		extra += `,"prompt_cache_key":"` + key + `"`
	}
	if retention != "" {
		extra += `,"prompt_cache_retention":"` + retention + `"`
	}
	return []byte(`{"model":"m","input":[` + strings.Join(items, ",") + `]` + extra + `}`)
}

func TestOpenAICachesPrefixesIn128TokenSteps(t *testing.T) {
	c := &Cache{API: "openai"}
	bs := blocksOf(8, 250)
	if u := c.Observe(respBody("", "", bs[:4]...)); u.Total != 1000 || u.Read != 0 {
		t.Fatalf("first request: %+v", u)
	}
	// 1000 tokens: under 1024, nothing was stored.
	if u := c.Observe(respBody("", "", bs[:5]...)); u.Read != 0 || u.Total != 1250 {
		t.Fatalf("after a 1000-token prompt: %+v, want nothing read", u)
	}
	// 1250 tokens stored as 1024 and 1152; 1750 tokens read 1152.
	if u := c.Observe(respBody("", "", bs[:7]...)); u.Read != 1152 || u.Input != 1750-1152 {
		t.Fatalf("after a 1250-token prompt: %+v, want 1152 read", u)
	}
	// A change at token 1500 reads the prefix before it, in whole steps.
	changed := append(append([]string{}, bs[:6]...), textOf("new", 250, ""))
	if u := c.Observe(respBody("", "", changed...)); u.Read != 1408 {
		t.Fatalf("a prompt changed at token 1500: read %d, want 1408", u.Read)
	}
}

func TestOpenAIRetentionAndRouting(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	bs := blocksOf(6, 250)
	for _, tc := range []struct {
		retention string
		wait      time.Duration
		read      bool
	}{{"", 9 * time.Minute, true}, {"", 11 * time.Minute, false}, {"24h", 23 * time.Hour, true}} {
		c := &Cache{API: "openai", Now: func() time.Time { return now }}
		c.Observe(respBody("", tc.retention, bs...))
		now = now.Add(tc.wait)
		if u := c.Observe(respBody("", tc.retention, bs...)); (u.Read > 0) != tc.read {
			t.Errorf("retention %q after %v: read %d, want read: %v", tc.retention, tc.wait, u.Read, tc.read)
		}
	}
	c := &Cache{API: "openai"}
	c.Observe(respBody("plan-1", "", bs...))
	if u := c.Observe(respBody("plan-2", "", bs...)); u.Read != 0 {
		t.Errorf("another prompt_cache_key read %d: routed to the same cache", u.Read)
	}
	if u := c.Observe(respBody("plan-1", "", bs...)); u.Read != 1408 {
		t.Errorf("the same prompt_cache_key read %d, want 1408", u.Read)
	}
}

func TestCacheUsageInStreams(t *testing.T) {
	u := CacheUsage{Total: 1000, Read: 700, Write: 250, Write1h: 100, Input: 50}
	for api, want := range map[string][]string{
		"anthropic":   {`"input_tokens":50,"cache_creation_input_tokens":250,"cache_read_input_tokens":700,"cache_creation":{"ephemeral_5m_input_tokens":150,"ephemeral_1h_input_tokens":100}`},
		"openai":      {`"input_tokens":1000,"input_tokens_details":{"cached_tokens":700}`},
		"openai-chat": {`"prompt_tokens":1000,`, `"prompt_tokens_details":{"cached_tokens":700}`},
	} {
		body := string(Stream(api, u.Turn(api, Turn{Text: "hi"})).Body)
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: the stream lacks %s:\n%s", api, w, body)
			}
		}
		for line := range strings.Lines(body) {
			if data, ok := strings.CutPrefix(line, "data: "); ok && !json.Valid([]byte(data)) && strings.TrimSpace(data) != "[DONE]" {
				t.Errorf("%s: invalid JSON %s", api, data)
			}
		}
	}
}
