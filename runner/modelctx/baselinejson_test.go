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
		switch rng.IntN(3) {
		case 1:
			b.MCP = []ServerDigest{}
		case 2:
			for range 1 + rng.IntN(3) {
				b.MCP = append(b.MCP, ServerDigest{Name: str(), Digest: str()})
			}
		}
		switch rng.IntN(3) {
		case 1:
			b.AgentsMD = []SourceDigest{}
		case 2:
			for range 1 + rng.IntN(3) {
				b.AgentsMD = append(b.AgentsMD, SourceDigest{Path: str(), Digest: str()})
			}
		}
		switch rng.IntN(3) {
		case 1:
			b.Off = []string{}
		case 2:
			b.Off = []string{str(), str()}
		}
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
