package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/cmd/awl/config"
	"github.com/awlrun/awl/cmd/awl/skills"
	"github.com/awlrun/awl/provider/providertest"
)

// TestNoConfigReadsOnlyStats: a whole run with no configuration file and
// no skill anywhere makes one stat of each name it looks for in each
// directory it looks in, and nothing else: config.toml and skills in the
// user's directory ($XDG_CONFIG_HOME/awl, not there), and .awl, .git,
// .agents and .claude in each directory from the run's up to the
// repository's root, once for the configuration and the skills together.
// It lists no directory and opens nothing. With one project file and a .claude directory holding no
// skills it stats and opens that file alone, once, and lists
// .claude/skills alone; which file is read is the same.
func TestNoConfigReadsOnlyStats(t *testing.T) {
	docPath, err := filepath.Abs("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	srv := providertest.New()
	defer srv.Close()
	tmp := keyEnv(t, srv)
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	deep := filepath.Join(tmp, "repo", "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(tmp, "repo", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	var ops []string
	count := func(op, p string) { ops = append(ops, op+" "+p) }
	configFS = config.FS{
		Stat:  func(p string) (fs.FileInfo, error) { count("stat", p); return os.Stat(p) },
		Lstat: func(p string) (fs.FileInfo, error) { count("lstat", p); return os.Lstat(p) },
		Read:  func(p string) ([]byte, error) { count("open", p); return config.OS.Read(p) },
	}
	defer func() { configFS = config.OS }()
	skillsFS = skills.FS{
		OpenDir: func(p string) (skills.Folders, error) {
			count("readdir", p)
			d, err := skills.OS.OpenDir(p)
			return countFolders{d, p, count}, err
		},
		Read: func(p string, buf []byte) ([]byte, error) { count("read", p); return skills.OS.Read(p, buf) },
	}
	defer func() { skillsFS = skills.OS }()
	run := func() {
		t.Helper()
		ops = nil
		srv.Enqueue(providertest.Text("anthropic", "done"))
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), []string{"run", "--no-stdin", "-C", deep, "hi"}, nil, &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr.String())
		}
	}
	run()
	want := []string{"stat " + filepath.Join(tmp, "config", "awl", "config.toml"), "stat " + filepath.Join(tmp, "config", "awl", "skills")}
	for _, d := range []string{deep, filepath.Dir(deep), filepath.Join(tmp, "repo")} {
		for _, n := range []string{".awl", ".git", ".agents", ".claude"} {
			want = append(want, "stat "+filepath.Join(d, n))
		}
	}
	if !slices.Equal(ops, want) {
		t.Errorf("with no configuration file and no skills the run did\n %q\nwant\n %q", ops, want)
	}
	// docs/config.md says what the walk does, and how many stats a run
	// two levels below the root makes.
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	words := []string{12: "twelve", 13: "thirteen", 14: "fourteen", 15: "fifteen", 16: "sixteen"}
	said := strings.Join(strings.Fields(string(doc)), " ")
	for _, w := range []string{"a `stat` of each of `.awl`, `.git`, `.agents` and `.claude` in each directory", "two levels below the repository's root makes " + words[len(ops)]} {
		if !strings.Contains(said, w) {
			t.Errorf("docs/config.md does not say %q (the run did %d stats)", w, len(ops))
		}
	}
	proj := filepath.Join(tmp, "repo", ".awl", "config.toml")
	if err := os.Mkdir(filepath.Dir(proj), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(proj, []byte("max-turns = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(deep, ".claude"), 0o755)
	run()
	// A name found is asked whose link it is, if it is one: one lstat more.
	want = slices.Insert(want, slices.Index(want, "stat "+filepath.Join(deep, ".claude"))+1, "lstat "+filepath.Join(deep, ".claude"))
	want = slices.Insert(want, slices.Index(want, "stat "+filepath.Dir(proj))+1, "lstat "+filepath.Dir(proj))
	want = append(want, "stat "+proj, "open "+proj, "readdir "+filepath.Join(deep, ".claude", "skills"))
	if !slices.Equal(ops, want) {
		t.Errorf("with one project file the run did\n %q\nwant\n %q", ops, want)
	}
}

// countFolders counts the SKILL.md a directory of skills reads.
type countFolders struct {
	skills.Folders
	dir   string
	count func(op, p string)
}

func (c countFolders) ReadSKILL(name string, buf []byte) ([]byte, error) {
	c.count("read", filepath.Join(c.dir, name, "SKILL.md"))
	return c.Folders.ReadSKILL(name, buf)
}

// TestConfigDocListsKeys: docs/config.md's key table has a row for every
// key, with its type, its variable and what an untrusted project file may
// do with it, so a flag added with a config tag is documented.
func TestConfigDocListsKeys(t *testing.T) {
	doc, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	classText := map[config.Class]string{
		config.Free: "sets it", config.Trusted: "**refused** (exit 4)", config.Min: "the smaller value counts",
		config.Limit: "the smaller limit counts", config.Allow: "intersects", config.Deny: "adds to",
		config.Sandbox: "a stricter mode counts; a looser one is **refused** (exit 4)", config.Narrow: "may turn it on, not off",
	}
	typeText := map[config.Type]string{
		config.String: "string", config.Bool: "bool", config.Int: "integer", config.Float: "number",
		config.Duration: "duration", config.List: "list",
	}
	rows := 0
	for _, k := range runSchema() {
		re := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(k.Name) + "` \\| ([^|]*) \\| `([A-Z_]+)` \\| ([^|]*) \\|$")
		m := re.FindStringSubmatch(string(doc))
		if m == nil {
			t.Errorf("docs/config.md has no row for the key %s", k.Name)
			continue
		}
		rows++
		if !strings.HasPrefix(m[1], typeText[k.Type]) || m[2] != k.Env() || !strings.Contains(m[3], classText[k.Class]) {
			t.Errorf("docs/config.md's row for %s says %q, %q, %q; the key is a %s, %s, %q", k.Name, m[1], m[2], m[3], typeText[k.Type], k.Env(), classText[k.Class])
		}
	}
	// The sentence on list keys a flag replaces names every list key.
	said := strings.Join(strings.Fields(string(doc)), " ")
	if m := regexp.MustCompile(`A list key \(([^)]*)\) set by a flag is replaced`).FindStringSubmatch(said); m == nil {
		t.Error("docs/config.md does not say which list keys a flag replaces")
	} else {
		for _, k := range runSchema() {
			if k.Type == config.List && !strings.Contains(m[1], "`"+k.Name+"`") {
				t.Errorf("docs/config.md's list keys a flag replaces leave out %s", k.Name)
			}
		}
	}
	// The trust rule's lists name every key of their class: the
	// switches turned on only, and the keys refused.
	for _, c := range []struct {
		re    string
		class config.Class
	}{
		{"- ((?:`[a-z-]+`(?:, | and )?)+) may be turned on, not off", config.Narrow},
		{"It may not set a key [^:]*: (.*?)[.] Such a key", config.Trusted},
	} {
		m := regexp.MustCompile(c.re).FindStringSubmatch(said)
		if m == nil {
			t.Errorf("docs/config.md lacks %q", c.re)
			continue
		}
		for _, k := range runSchema() {
			if k.Class == c.class && !strings.Contains(m[1], "`"+k.Name+"`") {
				t.Errorf("docs/config.md's trust rule leaves out %s (%s)", k.Name, keyClasses[c.class])
			}
		}
	}
	// And the sentence on relative paths names every path key.
	if m := regexp.MustCompile(`A relative path in a file \(([^)]*)\) is taken`).FindStringSubmatch(said); m == nil {
		t.Error("docs/config.md does not say which keys' relative paths are taken from the file's place")
	} else {
		for _, k := range runSchema() {
			if k.Path != strings.Contains(m[1], "`"+k.Name+"`") {
				t.Errorf("docs/config.md's path keys and %s (a path: %v) disagree", k.Name, k.Path)
			}
		}
	}
	if all := regexp.MustCompile("(?m)^\\| `[a-z-]+` \\| [^|]* \\| `AWL_").FindAllString(string(doc), -1); len(all) != rows {
		t.Errorf("docs/config.md's key table has %d rows, the keys are %d", len(all), rows)
	}
}

// TestDocConfigExamplesParse: the .awl/config.toml examples of README.md
// and docs/config.md are files awl takes, as an untrusted project file.
func TestDocConfigExamplesParse(t *testing.T) {
	block := regexp.MustCompile("(?s)```toml\n(.*?)```")
	n := 0
	for _, doc := range []string{"../../README.md", "../../docs/config.md"} {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllStringSubmatch(string(data), -1) {
			if !strings.HasPrefix(m[1], "# .awl/config.toml\n") {
				continue
			}
			n++
			f, err := config.Parse(doc, []byte(m[1]), config.Project, "/repo", runSchema())
			if err != nil {
				t.Errorf("%s: the example is refused: %v", doc, err)
				continue
			}
			for _, p := range append(f.Profiles(), "") {
				if _, err := config.Resolve(config.Input{Schema: runSchema(), Files: []*config.File{f}, Profile: p, ProfileFrom: "--profile"}); err != nil {
					t.Errorf("%s: profile %q: %v", doc, p, err)
				}
			}
		}
	}
	if n < 2 {
		t.Fatalf("found %d examples, want one in each document", n)
	}
}

// TestDocSkillExampleParses: README.md's SKILL.md example is a skill awl
// takes, in the folder the text before it names: an example that broke
// the format (a plain description holding ": " is a YAML mapping) would
// teach the reader a skill awl skips.
func TestDocSkillExampleParses(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)`(\\.agents/skills/([a-z0-9-]+)/SKILL\\.md)`:\n\n```markdown\n(---\n.*?)```").FindStringSubmatch(string(data))
	if m == nil {
		t.Fatal("README.md has no SKILL.md example after the path it is at")
	}
	s, err := skills.Parse(m[1], []byte(m[3]), m[2])
	if err != nil {
		t.Fatalf("README.md's skill is refused: %v", err)
	}
	if s.Name != m[2] || s.Description == "" {
		t.Errorf("README.md's skill reads as %+v", s)
	}
}

// TestEveryKeyLayers: every configuration key, through Main and `awl
// config show --json`, goes up the layers as docs/config.md says: the
// user's file sets it, a trusted project file's value wins over the
// user's, the profile in use over the top levels, the AWL_ variable over
// the files, and the flag over the variable (the source "flag"). cd moves
// the run (config_cd.txtar); session-dir is awl's flag, not run's, and
// stops at the variable.
func TestEveryKeyLayers(t *testing.T) {
	schema, repo, user, proj := keyRig(t)
	show := func(t *testing.T, args ...string) map[string]struct {
		Value  any
		Source string
	} {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), append([]string{"config", "show", "--json", "--trust-project"}, args...), nil, &stdout, &stderr); code != 0 {
			t.Fatalf("config show %q: exit %d: %s", args, code, stderr.String())
		}
		var out struct {
			Settings map[string]struct {
				Value  any
				Source string
			}
		}
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		return out.Settings
	}
	for i := range schema {
		k := &schema[i]
		if k.Name == "cd" {
			continue
		}
		t.Run(k.Name, func(t *testing.T) {
			v := layerValues(k)
			write := func(p, text string) {
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// A relative path in a file is taken from the file's place
			// (the project's directory for a project file).
			inFile := func(i int, base string) string {
				if !k.Path {
					return v[i].json
				}
				return strings.Replace(v[i].json, `"`, `"`+base+"/", 1)
			}
			check := func(args []string, want, from string) {
				t.Helper()
				got := show(t, args...)[k.Name]
				if gotJSON, _ := json.Marshal(got.Value); string(gotJSON) != want || got.Source != from {
					t.Errorf("%q: %s from %q, want %s from %q", args, gotJSON, got.Source, want, from)
				}
			}
			write(user, k.Name+" = "+v[0].toml+"\n")
			write(proj, "# the project's\n[profile.p]\n")
			check(nil, inFile(0, filepath.Dir(user)), user+":1")
			write(proj, "# the project's\n"+k.Name+" = "+v[1].toml+"\n[profile.p]\n")
			check(nil, inFile(1, repo), ".awl/config.toml:2")
			write(proj, "# the project's\n"+k.Name+" = "+v[1].toml+"\n[profile.p]\n"+k.Name+" = "+v[2].toml+"\n")
			check([]string{"--profile", "p"}, inFile(2, repo), ".awl/config.toml:4")
			// And a run takes it: configure sets the flag's field to it.
			if f := runFlagTable.byName(k.Name); f != nil {
				c := &runCmd{Profile: "p", TrustProject: true}
				if err := c.configure(&app{getenv: os.Getenv, stderr: &bytes.Buffer{}}); err != nil {
					t.Fatal(err)
				}
				got, _ := flagValue(f, reflect.ValueOf(c).Elem().Field(f.index))
				if d, ok := got.(time.Duration); ok {
					got = d.String()
				}
				if gotJSON, _ := json.Marshal(got); string(gotJSON) != inFile(2, repo) {
					t.Errorf("a run's --%s is %s, want %s", k.Name, gotJSON, inFile(2, repo))
				}
			}
			t.Setenv(k.Env(), v[3].env)
			check([]string{"--profile", "p"}, v[3].json, "env "+k.Env())
			if k.Name != "session-dir" {
				check(append([]string{"--profile", "p"}, v[4].flag...), v[4].json, "flag")
			}
			t.Setenv(k.Env(), "")
		})
	}
}

// keyRig is a repository to run in, with no AWL_ variable set: the keys,
// the repository, and where the user's and the project's files go.
func keyRig(t *testing.T) (config.Schema, string, string, string) {
	tmp := t.TempDir()
	for _, v := range []string{"AWL_CONFIG", "AWL_PROFILE", "AWL_TRUST_PROJECT", "AWL_SESSION_DIR"} {
		t.Setenv(v, "")
	}
	schema := runSchema()
	for _, k := range schema {
		t.Setenv(k.Env(), "")
	}
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config"))
	repo := filepath.Join(tmp, "repo")
	for _, d := range []string{filepath.Join(tmp, "config", "awl"), filepath.Join(repo, ".git"), filepath.Join(repo, ".awl")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(repo)
	return schema, repo, filepath.Join(tmp, "config", "awl", "config.toml"), filepath.Join(repo, ".awl", "config.toml")
}

// layerValue is a key's value as a file, a variable and a flag write it,
// and as config show --json prints it.
type layerValue struct {
	toml, env string
	flag      []string
	json      string
}

// layerValues are five different values of k, for the five layers.
func layerValues(k *config.Key) [5]layerValue {
	var out [5]layerValue
	for i := range out {
		n := strconv.Itoa(i + 1)
		var s string
		switch {
		case k.Class == config.Sandbox:
			s = []string{"off", "workspace-write", "read-only", "workspace-write", "off"}[i]
		case len(k.Enum) > 0:
			s = k.Enum[i%len(k.Enum)]
		}
		switch k.Type {
		case config.Bool:
			b := strconv.FormatBool(i%2 == 0)
			out[i] = layerValue{b, b, []string{"--" + k.Name + "=" + b}, b}
		case config.Int:
			out[i] = layerValue{n + "0", n + "0", []string{"--" + k.Name, n + "0"}, n + "0"}
		case config.Float:
			out[i] = layerValue{"0." + n, "0." + n, []string{"--" + k.Name, "0." + n}, "0." + n}
		case config.Duration:
			out[i] = layerValue{`"` + n + `s"`, n + "s", []string{"--" + k.Name, n + "s"}, `"` + n + `s"`}
		case config.List:
			item := "item" + n
			if k.Split != nil {
				item = []string{"read", "grep", "glob", "ls", "edit"}[i]
			}
			out[i] = layerValue{`["` + item + `"]`, item, []string{"--" + k.Name, item}, `["` + item + `"]`}
		default:
			if s == "" {
				s = "value" + n
			}
			out[i] = layerValue{`"` + s + `"`, s, []string{"--" + k.Name, s}, `"` + s + `"`}
		}
	}
	return out
}

// TestEveryKeyUntrusted: every configuration key in an untrusted project
// file, through Main and `awl config show --json`, does what its class
// says (docs/config.md's key table): a free key is set; a trusted one is
// exit 4 naming path:line, the key and how to trust; a limit takes the
// smaller value, either way round; allow lists intersect, deny lists add
// up; a narrowing switch turns on, never off; the sandbox tightens, and
// a looser one is exit 4.
func TestEveryKeyUntrusted(t *testing.T) {
	schema, repo, user, proj := keyRig(t)
	// run writes the two files and shows the settings: the key's value and
	// source, or the exit code and stderr.
	run := func(t *testing.T, name, userVal, projVal string) (string, string, int, string) {
		t.Helper()
		for p, v := range map[string]string{user: userVal, proj: projVal} {
			text := "# the file\n"
			if v != "" {
				text += name + " = " + v + "\n"
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), []string{"config", "show", "--json"}, nil, &stdout, &stderr)
		var out struct {
			Settings map[string]struct {
				Value  any
				Source string
			}
		}
		if code == 0 {
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatal(err)
			}
		}
		s := out.Settings[name]
		j, _ := json.Marshal(s.Value)
		return string(j), s.Source, code, stderr.String()
	}
	fromUser, fromProj := user+":2", ".awl/config.toml:2"
	for i := range schema {
		k := &schema[i]
		t.Run(k.Name, func(t *testing.T) {
			v := layerValues(k)
			expect := func(userVal, projVal, want, from string) {
				t.Helper()
				got, src, code, errs := run(t, k.Name, userVal, projVal)
				if code != 0 || got != want || src != from {
					t.Errorf("user %s, project %s: %s from %q (exit %d %s), want %s from %q", userVal, projVal, got, src, code, errs, want, from)
				}
			}
			refused := func(userVal, projVal string) {
				t.Helper()
				_, _, code, errs := run(t, k.Name, userVal, projVal)
				if code != 4 || !strings.Contains(errs, proj+":2: ") || !strings.Contains(errs, k.Name) || !strings.Contains(errs, "--trust-project") {
					t.Errorf("user %s, project %s: exit %d %q, want exit 4 naming %s:2, the key and how to trust", userVal, projVal, code, errs, proj)
				}
			}
			switch k.Class {
			case config.Free:
				want := v[1].json
				if k.Path {
					want = strings.Replace(want, `"`, `"`+repo+"/", 1)
				}
				expect(v[0].toml, v[1].toml, want, fromProj)
			case config.Trusted:
				refused("", v[1].toml)
				refused(v[0].toml, v[1].toml)
			case config.Min, config.Limit:
				// v[0] is the smaller.
				expect(v[1].toml, v[0].toml, v[0].json, fromProj)
				expect(v[0].toml, v[1].toml, v[0].json, fromUser)
			case config.Allow:
				expect(`["read", "grep"]`, `["grep", "glob"]`, `["grep"]`, fromProj)
			case config.Deny:
				expect(`["read"]`, `["grep"]`, `["read","grep"]`, fromProj)
			case config.Narrow:
				expect("false", "true", "true", fromProj)
				expect("true", "false", "true", fromUser)
			case config.Sandbox:
				expect(`"workspace-write"`, `"read-only"`, `"read-only"`, fromProj)
				refused(`"read-only"`, `"workspace-write"`)
			default:
				t.Fatalf("class %v has no case here", k.Class)
			}
		})
	}
}

// TestForeignProjectFilesNotRead: a run in /tmp/job (no repository) walks
// up to /, so a .awl, .agents or .claude in a directory others may write
// is anyone's: another user's (not the one awl runs as, nor root) is not
// read, with a warning naming it; the run's own are. Through Main: the
// configuration, the skills, awl config path.
func TestForeignProjectFilesNotRead(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a file another user's needs root")
	}
	_, repo, _, _ := keyRig(t)
	shared := filepath.Dir(repo) // the walk from job passes it: job has no .git
	job := filepath.Join(shared, "job")
	for p, text := range map[string]string{
		filepath.Join(shared, ".awl", "config.toml"):                    "model = \"planted\"\nappend-system = \"PLANTED\"\n",
		filepath.Join(shared, ".agents", "skills", "evil", "SKILL.md"):  "---\nname: evil\ndescription: planted\n---\n",
		filepath.Join(shared, ".claude", "skills", "evil2", "SKILL.md"): "---\nname: evil2\ndescription: planted\n---\n",
		filepath.Join(job, ".agents", "skills", "mine", "SKILL.md"):     "---\nname: mine\ndescription: ours\n---\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{".awl", ".agents", ".claude"} {
		if err := os.Chown(filepath.Join(shared, d), 4242, 4242); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"config", "path", "-C", job}, nil, &stdout, &stderr); code != 0 || stdout.Len() != 0 {
		t.Fatalf("config path: exit %d, %q %q", code, stdout.String(), stderr.String())
	}
	for _, d := range []string{".awl", ".agents", ".claude"} {
		if want := "awl: warning: " + filepath.Join(shared, d) + " (uid 4242) belongs to another user"; !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
	stdout.Reset()
	stderr.Reset()
	if code := Main(context.Background(), []string{"skills", "--json", "-C", job}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("skills: exit %d: %s", code, stderr.String())
	}
	if s := stdout.String(); strings.Contains(s, "evil") || !strings.Contains(s, `"mine"`) {
		t.Errorf("awl skills offered %s", s)
	}
	// Owned by root, or by the user awl runs as, they are read.
	for _, d := range []string{".awl", ".agents", ".claude"} {
		if err := os.Chown(filepath.Join(shared, d), 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	stdout.Reset()
	if code := Main(context.Background(), []string{"config", "path", "-C", job}, nil, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), filepath.Join(shared, ".awl", "config.toml")) {
		t.Errorf("config path with root's .awl: exit %d, %q", code, stdout.String())
	}
}

// TestCheckoutOwnersProjectFilesRead: a GitHub Actions container: job runs
// awl as root in a checkout uid 1001 owns, so the project's .awl and
// skills are 1001's: they are read, since the run directory's owner could
// have put them there anyway. A third user's .awl above a run directory
// 1001 owns is still not.
func TestCheckoutOwnersProjectFilesRead(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a file another user's needs root")
	}
	root := t.TempDir()
	shared := filepath.Join(root, "shared")
	repo := filepath.Join(shared, "work", "repo")
	for p, text := range map[string]string{
		filepath.Join(repo, ".git", "HEAD"):                                "ref: refs/heads/main\n",
		filepath.Join(repo, ".awl", "config.toml"):                         "model = \"checkout\"\n",
		filepath.Join(repo, ".agents", "skills", "ours", "SKILL.md"):       "---\nname: ours\ndescription: the team's\n---\n",
		filepath.Join(shared, ".awl", "config.toml"):                       "model = \"planted\"\n",
		filepath.Join(shared, "job", ".claude", "skills", "x", "SKILL.md"): "---\nname: x\ndescription: planted\n---\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	chown := func(uid int, ps ...string) {
		for _, p := range ps {
			if err := os.Chown(p, uid, uid); err != nil {
				t.Fatal(err)
			}
		}
	}
	chown(1001, repo, filepath.Join(repo, ".git"), filepath.Join(repo, ".awl"), filepath.Join(repo, ".agents"))
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"config", "path", "-C", repo}, nil, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), filepath.Join(repo, ".awl", "config.toml")) || strings.Contains(stderr.String(), "another user") {
		t.Fatalf("config path in 1001's checkout: exit %d, %q %q", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	if code := Main(context.Background(), []string{"skills", "--json", "-C", repo}, nil, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), `"ours"`) {
		t.Fatalf("awl skills in 1001's checkout: exit %d, %s %s", code, stdout.String(), stderr.String())
	}
	// A directory 1001 owns with no repository: the walk goes up past it,
	// and 4242's .awl in shared, and .claude in job, are not read.
	job := filepath.Join(shared, "job")
	chown(1001, job)
	chown(4242, filepath.Join(shared, ".awl"), filepath.Join(job, ".claude"))
	stdout.Reset()
	stderr.Reset()
	if code := Main(context.Background(), []string{"config", "path", "-C", job}, nil, &stdout, &stderr); code != 0 || stdout.Len() != 0 {
		t.Fatalf("config path in 1001's job: exit %d, %q %q", code, stdout.String(), stderr.String())
	}
	for _, d := range []string{filepath.Join(shared, ".awl"), filepath.Join(job, ".claude")} {
		if want := d + " (uid 4242) belongs to another user"; !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
}

// TestForeignLinkedProjectFilesNotRead: a symbolic link is its maker's.
// Anyone may make /tmp/.awl -> /tmp, which names a directory root owns
// where anyone may write config.toml; the stat the walk made followed the
// link, saw root's /tmp, and read the planted file and skills. A link
// awl's user or root made is read through as before.
func TestForeignLinkedProjectFilesNotRead(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a link another user's needs root")
	}
	shared := t.TempDir() // /tmp: root's, anyone's to write
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	job := filepath.Join(shared, "job")
	for p, text := range map[string]string{
		filepath.Join(shared, "config.toml"):                        "model = \"planted\"\n",
		filepath.Join(shared, "skills", "evil", "SKILL.md"):         "---\nname: evil\ndescription: planted\n---\n",
		filepath.Join(job, ".agents", "skills", "mine", "SKILL.md"): "---\nname: mine\ndescription: ours\n---\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{".awl", ".claude"} {
		if err := os.Symlink(shared, filepath.Join(shared, d)); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(filepath.Join(shared, d), 4242, 4242); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"config", "path", "-C", job}, nil, &stdout, &stderr); code != 0 || stdout.Len() != 0 {
		t.Fatalf("config path: exit %d, %q %q", code, stdout.String(), stderr.String())
	}
	for _, d := range []string{".awl", ".claude"} {
		if want := "awl: warning: " + filepath.Join(shared, d) + " (uid 4242) belongs to another user"; !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
	stdout.Reset()
	if code := Main(context.Background(), []string{"skills", "--json", "-C", job}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("skills: exit %d: %s", code, stderr.String())
	}
	if s := stdout.String(); strings.Contains(s, "evil") || !strings.Contains(s, `"mine"`) {
		t.Errorf("awl skills offered %s", s)
	}
	// The links root's: read through.
	for _, d := range []string{".awl", ".claude"} {
		if err := os.Lchown(filepath.Join(shared, d), 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	stdout.Reset()
	stderr.Reset()
	if code := Main(context.Background(), []string{"config", "path", "-C", job}, nil, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), filepath.Join(shared, ".awl", "config.toml")) || stderr.Len() != 0 {
		t.Errorf("config path through root's link: exit %d, %q %q", code, stdout.String(), stderr.String())
	}
}
