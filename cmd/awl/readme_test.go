package main

import (
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// cliDoc is the reference of the command line, which README.md points at.
const cliDoc = "../../docs/cli.md"

// docSection returns the section of the Markdown file path under the
// level-2 heading title, up to the next level-2 heading.
func docSection(t *testing.T, path, title string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "\n## "+title+"\n")
	if i < 0 {
		t.Fatalf("%s has no \"## %s\" section", path, title)
	}
	section := text[i+1:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	return section
}

// readmeRunTable returns the first column of the flag table under
// docs/cli.md's "## `awl run`" heading, one string per row.
func readmeRunTable(t *testing.T) []string {
	t.Helper()
	section := docSection(t, cliDoc, "`awl run`")
	var rows []string
	inTable := false
	for line := range strings.SplitSeq(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		// A cell may hold an escaped pipe (`low\|medium`).
		cells := strings.Split(strings.ReplaceAll(line, `\|`, "\x00"), "|")
		if len(cells) < 3 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "flag" {
			continue
		}
		rows = append(rows, strings.ReplaceAll(cells[1], "\x00", "|"))
	}
	if len(rows) == 0 {
		t.Fatal("docs/cli.md's `awl run` section has no flag table")
	}
	return rows
}

var (
	codeSpan  = regexp.MustCompile("`[^`]*`")
	flagToken = regexp.MustCompile(`(?:^|[\s/\[(])(--[a-z][a-z0-9-]*|-[a-zA-Z])\b`)
)

// readmeFlags returns every flag (long and short) the table's first column
// names inside code spans, and the positional argument names it shows.
func readmeFlags(rows []string) (flags map[string]bool, words string) {
	flags = map[string]bool{}
	var spans []string
	for _, row := range rows {
		for _, span := range codeSpan.FindAllString(row, -1) {
			span = strings.Trim(span, "`")
			spans = append(spans, span)
			for _, m := range flagToken.FindAllStringSubmatch(span, -1) {
				flags[m[1]] = true
			}
		}
	}
	return flags, strings.Join(spans, " ")
}

// TestReadmeFlagTable keeps docs/cli.md's `awl run` flag table and the kong
// model of `awl run` (every flag its --help shows, inherited ones included)
// in step, both ways.
func TestReadmeFlagTable(t *testing.T) {
	var grammar cli
	parser, err := newParser(&grammar, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var run *kong.Node
	for _, n := range parser.Model.Children {
		if n.Name == "run" {
			run = n
		}
	}
	if run == nil {
		t.Fatal("the kong model has no run command")
	}
	inREADME, words := readmeFlags(readmeRunTable(t))
	inModel := map[string]bool{}
	for _, group := range run.AllFlags(true) {
		for _, f := range group {
			if f.Name == "help" {
				continue
			}
			long := "--" + f.Name
			inModel[long] = true
			if !inREADME[long] {
				t.Errorf("docs/cli.md's `awl run` flag table lacks %s, which `awl run --help` shows (%s): add it to a row of the table", long, f.Help)
			}
			if f.Short != 0 {
				short := "-" + string(f.Short)
				inModel[short] = true
				if !inREADME[short] {
					t.Errorf("docs/cli.md's `awl run` flag table lacks the short form %s of %s: write it as `%s/%s` in its row", short, long, short, long)
				}
			}
		}
	}
	for _, flag := range slices.Sorted(func(yield func(string) bool) {
		for f := range inREADME {
			if !yield(f) {
				return
			}
		}
	}) {
		if !inModel[flag] {
			t.Errorf("docs/cli.md's `awl run` flag table lists %s, which `awl run --help` does not show: remove it or add the flag", flag)
		}
	}
	for _, arg := range run.Positional {
		if !strings.Contains(words, strings.ToUpper(arg.Name)) {
			t.Errorf("docs/cli.md's `awl run` flag table lacks the argument %s", strings.ToUpper(arg.Name))
		}
	}
}

// TestReadmeFlagsParse makes sure the table parser finds what it should,
// so TestReadmeFlagTable cannot pass by reading nothing.
func TestReadmeFlagsParse(t *testing.T) {
	got, _ := readmeFlags([]string{" `-C/--cd DIR` ", " `--resume [REF]`, `-c/--continue` ", " `--reasoning low|medium` ", " no code --nope "})
	want := []string{"--cd", "--continue", "--reasoning", "--resume", "-C", "-c"}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, want) {
		t.Errorf("flags = %v, want %v", keys, want)
	}
}

// placeholder is a value in the flag table that names what to give (FILE,
// A,B, [REF]) or lists the choices (low|medium|high), rather than stating
// the flag's default.
var placeholder = regexp.MustCompile(`^(\[?[A-Z][A-Z0-9,._…]*\]?|.*\|.*)$`)

// TestReadmeFlagDefaults: a value written after a flag in the table's first
// column (`--max-retries 4`) is the flag's default in the grammar; a flag
// without a default is shown with a placeholder (`--timeout DURATION`).
func TestReadmeFlagDefaults(t *testing.T) {
	var grammar cli
	parser, err := newParser(&grammar, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*kong.Flag{}
	for _, n := range parser.Model.Children {
		if n.Name == "run" {
			for _, group := range n.AllFlags(true) {
				for _, f := range group {
					byName["--"+f.Name] = f
				}
			}
		}
	}
	shown := 0
	for _, row := range readmeRunTable(t) {
		for _, span := range codeSpan.FindAllString(row, -1) {
			words := strings.Fields(strings.Trim(span, "`"))
			for i := 0; i+1 < len(words); i++ {
				name := words[i]
				if j := strings.LastIndex(name, "/"); j >= 0 {
					name = name[j+1:]
				}
				f := byName[name]
				if f == nil || placeholder.MatchString(words[i+1]) {
					continue
				}
				shown++
				if !f.HasDefault || f.Default != words[i+1] {
					t.Errorf("docs/cli.md's flag table shows `%s %s`, but %s's default is %q (none when empty): show the default or a placeholder", words[i], words[i+1], name, f.Default)
				}
			}
		}
	}
	if shown < 3 {
		t.Errorf("found %d defaults in the flag table; the parser reads nothing", shown)
	}
}

// TestReadmeExampleProvenance: examples/summarise.jsonl was recorded by
// TestRecordExample against the fake provider (its header's cwd says so),
// and README says that, not that a real model answered.
func TestReadmeExampleProvenance(t *testing.T) {
	data, err := os.ReadFile("../../examples/summarise.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(string(data), "\n")
	if !strings.Contains(header, `"cwd":"/tmp/TestRecordExample`) {
		t.Fatalf("examples/summarise.jsonl's header %s: not recorded by TestRecordExample; update README and examples/README.md on where it came from", header)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	if strings.Contains(text, "with a real model") || !strings.Contains(text, "a fake provider played the model with hand-written turns") {
		t.Error("README.md must say that examples/summarise.jsonl has hand-written turns played by a fake provider")
	}
}

// TestReadmeSessionsFlags: docs/cli.md's `awl sessions` section names
// every flag of every `awl sessions` command (long and short), so that
// none is left undocumented.
func TestReadmeSessionsFlags(t *testing.T) {
	section := docSection(t, cliDoc, "`awl sessions`")
	var grammar cli
	parser, err := newParser(&grammar, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, n := range parser.Model.Children {
		if n.Name != "sessions" {
			continue
		}
		for _, cmd := range n.Children {
			for _, f := range cmd.Flags {
				checked++
				if !regexp.MustCompile(`(^|[^a-z-])--` + regexp.QuoteMeta(f.Name) + `\b`).MatchString(section) {
					t.Errorf("docs/cli.md's `awl sessions` section does not name `awl sessions %s --%s` (%s)", cmd.Name, f.Name, f.Help)
				}
				if f.Short != 0 && !strings.Contains(section, "-"+string(f.Short)+"/--"+f.Name) && !strings.Contains(section, "--"+f.Name+"/-"+string(f.Short)) {
					t.Errorf("docs/cli.md's `awl sessions` section lacks the short form -%c of awl sessions %s --%s", f.Short, cmd.Name, f.Name)
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d flags; the walk missed the sessions commands", checked)
	}
}
