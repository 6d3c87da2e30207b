package skills

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

// parseOfRecord is Parse with the YAML parser alone, as it was before the
// simple reader: what parseSimple must agree with.
func parseOfRecord(path string, data []byte, folder string) (Skill, error) {
	return parse(path, data, folder, false)
}

// simpleSeeds are front matter the simple reader takes, and some it must
// leave to YAML.
var simpleSeeds = []string{
	"---\nname: a\ndescription: d\n---\n",
	"---\nname: a\ndescription: Fill and merge PDFs, with pdftk (https://x.example/a#b); C# too.\nlicense: Apache-2.0\nmetadata:\n  owner: team\n  version: \"1.0\"\nallowed-tools: Bash(git *) Read\n---\nbody\n",
	"---\nname: a\ndescription: 'it''s'\n---\n",
	"---\nname: a\ndescription: \"a: b # c\"\n---\n",
	"---\nname: a\ndescription: d # comment\n---\n",
	"---\nname: a\ndescription: d\n  continued\n---\n",
	"---\nname: a\n\ndescription: d\n---\n",
	"---\nname: a\ndescription: null\n---\n",
	"---\nname: a\ndescription: ~\n---\n",
	"---\nname: a\ndescription: 123\nlicense: true\n---\n",
	"---\nname: a\ndescription: d\nmetadata:\n  a: x\n    b: y\n---\n",
	"---\nname: a\ndescription: d\nmetadata:\n  a: x\n  a: y\n---\n",
	"---\nname: a\ndescription: é — ünïcode ✓ 𝄞\n---\n",
	"---\nname: a\ndescription: d\u2028e\n---\n",
	"---\nname: a\ndescription: d\u0085e\n---\n",
	"---\nname: a\ndescription: \"d\\te\"\n---\n",
	"---\nname: a\ndescription: d\nname: b\n---\n",
	"---\nname: A\ndescription: d\n---\n",
	"---\nname: a\ndescription: \"\"\n---\n",
	"---\nname: a\ndescription: -d\n---\n",
	"---\nname: a\ndescription: d:\n---\n",
	"---\nname: a\ndescription: d:e\n---\n",
	"---\nname: a\ndescription: =\n---\n",
	"---\nname: a\ndescription: d\ndisable-model-invocation: true\nx_y: 1\n---\n",
	"---\nname: a\ndescription: d\nmetadata:\n---\n",
	"---\nname: a\r\ndescription: d\r\n---\r\n",
	"---\nname: a\ndescription: \"d\" x\n---\n",
	"---\nname: a\ndescription: d \n---\n",
	"---\nname:  a\ndescription:   d  \n---\n",
	"---\nname: a\ndescription: <b>\n---\n",
}

// TestSimpleReadsTheCommonShape: the front matter of a skill as `npx
// skills add` installs it is read without the YAML parser, and to the same
// skill; anything the simple reader cannot be sure of goes to YAML.
func TestSimpleReadsTheCommonShape(t *testing.T) {
	fm, _, _ := frontMatter([]byte(simpleSeeds[1]))
	s, _, ok := parseSimple(fm)
	want := Skill{Name: "a", Description: "Fill and merge PDFs, with pdftk (https://x.example/a#b); C# too.", License: "Apache-2.0", Metadata: map[string]string{"owner": "team", "version": "1.0"}, AllowedTools: []string{"Bash(git", "*)", "Read"}}
	if !ok || !reflect.DeepEqual(s, want) {
		t.Errorf("the common shape: ok %v\n got %+v\nwant %+v", ok, s, want)
	}
	for _, src := range []string{
		"name: a # c", "name: a\n  b", "name: a\n\nx: b", "name: ~", "name: null", "name: &x a", "name: *x", "name: !!str a",
		"name: |\n  a", "name: [a]", "name: {a: b}", "name: a: b", "name: \"a\\nb\"", "name: 'a''b'", "name: a\u2028b",
		"name: a\tb", "name: a\r", "metadata:\n  a: b\n   c: d", "metadata: {}", "name: a\nname: b", "...", "%YAML 1.2", "Name: a",
	} {
		if s, _, ok := parseSimple([]byte(src)); ok {
			t.Errorf("%q: read as %+v, not left to YAML", src, s)
		}
	}
}

// FuzzSimpleIsYAML: whenever the simple reader takes a SKILL.md, Parse
// gives what the YAML parser of record gives, skill and error alike.
func FuzzSimpleIsYAML(f *testing.F) {
	for _, s := range simpleSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fm, _, err := frontMatter(data)
		if err != nil {
			return
		}
		if _, _, ok := parseSimple(fm); !ok {
			return
		}
		got, gotErr := Parse("x/SKILL.md", data, "a")
		want, wantErr := parseOfRecord("x/SKILL.md", data, "a")
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\nsimple %+v %v\n  yaml %+v %v", data, got, gotErr, want, wantErr)
		}
	})
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestReadHeadStopsAtTheFrontMatter: a run reads a SKILL.md to its front
// matter's end, not its body; a line that starts like the closing one but
// goes on past a chunk's end ("----", "--- x") is not taken for it; what
// is read parses as the whole file does.
func TestReadHeadStopsAtTheFrontMatter(t *testing.T) {
	body := strings.Repeat("body line\n", 50000)
	cr := &countingReader{r: strings.NewReader("---\nname: a\ndescription: d\n---\n" + body)}
	head, err := readHead(cr, nil)
	if err != nil || cr.n > headChunk || !bytes.HasPrefix(head, []byte("---\nname: a\ndescription: d\n---\n")) {
		t.Errorf("read %d bytes of %d (err %v)", cr.n, len(body), err)
	}
	for _, line := range []string{"----", "--- x", "---"} {
		for pad := headChunk - 40; pad < headChunk+10; pad++ {
			pre := "---\nname: a\ndescription: " + strings.Repeat("d", pad-len("---\nname: a\ndescription: ")-1) + "\n"
			whole := pre + line + "\nlicense: x\n---\n" + body
			head, err := readHead(strings.NewReader(whole), nil)
			if err != nil {
				t.Fatal(err)
			}
			got, gotErr := Parse("x/SKILL.md", head, "a")
			want, wantErr := Parse("x/SKILL.md", []byte(whole), "a")
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
				t.Fatalf("%q at %d: the head read %+v %v, the whole %+v %v", line, pad, got, gotErr, want, wantErr)
			}
		}
	}
}
