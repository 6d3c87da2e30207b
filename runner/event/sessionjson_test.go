package event

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// stdSession is the session event as encoding/json writes it for the
// emitter (HTML escaping off).
func stdSession(t *testing.T, s Session) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The session event written by hand is byte for byte what encoding/json
// writes for it: every field set and unset, each optional part present
// and absent, and strings that need escaping.
func TestSessionEventBytes(t *testing.T) {
	strs := []string{"", "plain", "<b> & \"q\" \\ é \t\n", "\u2028\u2029", "bad \xff utf-8", "\x00\x1f", "/tmp/a b/c"}
	rng := rand.New(rand.NewPCG(1, 27))
	str := func() string { return strs[rng.IntN(len(strs))] }
	list := func() []string {
		switch rng.IntN(3) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		out := make([]string, 1+rng.IntN(3))
		for i := range out {
			out[i] = str()
		}
		return out
	}
	flag := func() bool { return rng.IntN(2) == 1 }
	cases := []Session{{}, {Base: Base{Type: "session", SessionID: "id", Timestamp: "2026-12-02T15:00:00.000Z"}, Schema: SchemaVersion, Tools: []string{"bash", "read"}}}
	for range 2000 {
		s := Session{
			Base:   Base{Type: str(), SessionID: str(), Timestamp: str()},
			Schema: rng.IntN(5) - 1, Path: str(), Cwd: str(), Provider: str(), Model: str(),
			Resumed: flag(), Stdin: str(), Recovered: flag(), Tools: list(),
			Sandbox: Sandbox{Mode: str(), Network: flag(), ABI: rng.IntN(8) - 1, Warning: str(), Enforced: Enforced{
				Files: flag(), TCP: flag(), UDP: flag(), Raw: flag(), Unix: flag(), Processes: flag(), Proc: flag(), Git: flag(),
			}},
		}
		if flag() {
			s.Fork = &ForkOrigin{ID: str(), EntryID: str()}
		}
		for range rng.IntN(3) {
			s.MCP = append(s.MCP, MCPServer{Name: str(), Transport: str(), Status: str(), Tools: list(), DurationMS: rng.Int64N(1e6) - 10, Error: str()})
		}
		if rng.IntN(4) == 0 {
			s.MCP = []MCPServer{}
		}
		cases = append(cases, s)
	}
	for _, s := range cases {
		want := stdSession(t, s)
		if got := appendSession(nil, &s); !bytes.Equal(got, want) {
			t.Fatalf("session event\n got %s\nwant %s", got, want)
		}
		parts, err := eventParts(s)
		if err != nil || !bytes.Equal(Join(parts...), want) {
			t.Fatalf("emitted session event %q (%v), want %s", Join(parts...), err, want)
		}
	}
}

// BenchmarkSessionEvent is the session event's encoding, once warm.
func BenchmarkSessionEvent(b *testing.B) {
	s := Session{Base: Base{Type: "session", SessionID: "01a2334b-7a60-7f3d-be69-e82db7f25669", Timestamp: "2026-12-02T15:00:00.000Z"},
		Schema: SchemaVersion, Path: "/home/u/.local/share/awl/sessions/x.jsonl", Cwd: "/home/u/src", Provider: "anthropic",
		Model: "claude-sonnet-4-5", Stdin: "off", Tools: []string{"bash", "read", "write", "edit", "ls", "grep", "glob", "view_image"}}
	for range b.N {
		eventParts(s)
	}
}
