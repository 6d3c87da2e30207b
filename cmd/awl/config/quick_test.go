package config

import (
	"bytes"
	"reflect"
	"runtime"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// teamFile is a team's file of the usual shape (benchfloor -config's).
const teamFile = `# The team's agent.
model = "claude-sonnet-4-5"
tools = ["read", "grep", "glob", "ls", "bash(git diff *)", "bash(go test ./...)"]
deny-tools = ['read(**/.env)'] # a comment
max-cost-usd = 2.0
max-turns = 40
timeout = "15m"
append-system = """
Follow the conventions of AGENTS.md."""
no-env-context = false

[profile.review]
tools = [
  "read", # one a line
  "grep",
]
max-turns = 20

[profile."fix"]
max-turns = 60
max-cost-usd = -1.5e2
`

// TestQuickReadsTheUsualFile: a file of the usual shape is read by quick,
// as toml.Unmarshal reads it, with positions' positions; each thing quick
// leaves to the decoder of record is left to it.
func TestQuickReadsTheUsualFile(t *testing.T) {
	if !checkQuick(t, []byte(teamFile)) {
		t.Error("quick does not read the team's file")
	}
	for _, s := range []string{
		"a.b = 1\n", "x = {a = 1}\n", "[mcp-servers.a]\ncommand = \"x\"\n", "[profile]\n", "[profile.a.b]\n",
		"[[profile.a]]\n", "[profile.a]\n[profile.a]\n", "a = 1\na = 2\n", "profile = 1\n[profile.a]\n",
		"a = 0x10\n", "a = 1_000\n", "a = inf\n", "a = nan\n", "a = 1979-05-27\n", "a = [[1]]\n", "a = [{}]\n",
		"a = \n", "a = 1e999\n", "a = 99999999999999999999\n", "a = 01\n",
	} {
		if checkQuick(t, []byte(s)) {
			t.Errorf("quick reads %q", s)
		}
	}
}

// checkQuick tells whether quick reads data, and checks that what it
// reads is what toml.Unmarshal and positions give.
func checkQuick(t *testing.T, data []byte) bool {
	t.Helper()
	doc, pos, ok := quick(data)
	if !ok {
		return false
	}
	var ref map[string]any
	if err := toml.Unmarshal(data, &ref); err != nil {
		t.Fatalf("quick read %q, which toml.Unmarshal refuses: %v", data, err)
	}
	if !reflect.DeepEqual(doc, ref) {
		t.Fatalf("quick(%q) =\n%#v\ntoml.Unmarshal gives\n%#v", data, doc, ref)
	}
	if refPos := positions(data); !reflect.DeepEqual(pos, refPos) {
		t.Fatalf("quick(%q) positions\n%v\npositions gives\n%v", data, pos, refPos)
	}
	return true
}

// FuzzQuickIsUnmarshal: whatever quick reads, toml.Unmarshal reads the
// same, and positions places its keys the same.
func FuzzQuickIsUnmarshal(f *testing.F) {
	for _, s := range []string{
		teamFile, "a = 1\n", "a = [1, 2.5, \"x\", true]\n", "[profile.a]\nb = 'c'\n", "a = []\n", "\"a b\" = -0\n",
		"a = \"\\u00e9\\n\"\n", "a = '''\nx'''\n", "a = +1.5\n", "a = 1e5\n", "[profile.'a.b']\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkQuick(t, data)
	})
}

// TestQuickMemoryIsTheKeys: what quick allocates follows the keys a file
// holds, not its lines: a file of the largest size awl reads, all blank
// lines and comments around one key, cost 168 MB when the maps were made
// for a key a line.
func TestQuickMemoryIsTheKeys(t *testing.T) {
	for name, filler := range map[string]string{"blank lines": "\n", "comments": "#\n"} {
		data := bytes.Repeat([]byte(filler), (MaxSize-16)/len(filler))
		data = append(data, "a = 1\n"...)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, _, ok := quick(data)
		runtime.ReadMemStats(&after)
		if !ok {
			t.Fatalf("%s: quick does not read the file", name)
		}
		// The line starts are 8 bytes a line; the rest is a few keys.
		if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(10*len(data)); got > limit {
			t.Errorf("%s: quick of a %d-byte file with one key allocated %d bytes, want at most %d", name, len(data), got, limit)
		}
	}
}
