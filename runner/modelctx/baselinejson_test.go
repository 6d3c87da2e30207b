package modelctx

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// The baseline written by hand is byte for byte what encoding/json writes
// for it (HTML escaping off): every member present and absent, lists nil,
// empty and full, output schemas with white space, strings that need
// escaping.
func TestBaselineFieldsBytes(t *testing.T) {
	strs := []string{"", "plain", "<b> & \"q\" \\ é \t\n", "\u2028\u2029", "bad \xff utf-8", "\x00\x1f", "/tmp/a b/c"}
	schemas := []string{"", `{"type":"object"}`, "{ \"type\" : \"string\",\n \"pattern\": \"<a&b>\" }", `[1, 2.5e3, null, true]`}
	rng := rand.New(rand.NewPCG(2, 27))
	str := func() string { return strs[rng.IntN(len(strs))] }
	cases := []Baseline{{}}
	for range 3000 {
		b := Baseline{Cwd: str(), Shell: str(), Date: str(), Timezone: str(), System: str(), AppendSystem: str(), ToolPolicy: str(), Sandbox: str()}
		if s := schemas[rng.IntN(len(schemas))]; s != "" {
			b.OutputSchema = json.RawMessage(s)
		}
		b.MCP = randList(rng, func() ServerDigest { return ServerDigest{Name: str(), Digest: str()} })
		b.AgentsMD = randList(rng, func() SourceDigest { return SourceDigest{Path: str(), Digest: str()} })
		b.Off = randList(rng, str)
		cases = append(cases, b)
	}
	for _, b := range cases {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(b); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := b.Fields(); !bytes.Equal(got, want) {
			t.Fatalf("baseline\n got %s\nwant %s", got, want)
		}
	}
}

// randList is nil, empty or one to three of item's, at random: the three
// shapes of a list member the baseline must write as encoding/json does.
func randList[T any](rng *rand.Rand, item func() T) []T {
	switch rng.IntN(3) {
	case 1:
		return []T{}
	case 2:
		out := make([]T, 1+rng.IntN(3))
		for i := range out {
			out[i] = item()
		}
		return out
	}
	return nil
}
