// Package skills finds and reads Agent Skills: folders holding a SKILL.md
// whose YAML front matter names the skill and says what it is for (the
// open format of agentskills.io, as `npx skills add` and `gh skill install`
// install them). A run offers the model their catalogue (name, description
// and path); the model reads a body, and what is beside it, with its own
// tools (docs/context.md).
package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/awlrun/awl/internal/rawfile"
)

// Skill is one SKILL.md.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Path is the SKILL.md, absolute.
	Path string `json:"path"`
	// Source is where it was found: "user", "project", "--skills" or a
	// configuration file's skills key ("config").
	Source        string            `json:"source"`
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	// AllowedTools is the front matter's allowed-tools, shown, never
	// granted: a skill cannot widen the run's tool policy.
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// Problems are what is wrong with it, "path:line: reason": a skill
	// with problems is not offered.
	Problems []string `json:"problems,omitempty"`
	// Shadows is the path of a skill of the same name found earlier,
	// which this one hides; ShadowedBy, on that one, the path of this.
	Shadows    string `json:"shadows,omitempty"`
	ShadowedBy string `json:"shadowed_by,omitempty"`
}

// Dir is a directory of skill folders and where it comes from; a Dir
// that holds a SKILL.md itself is that one skill's folder.
type Dir struct {
	Path   string
	Source string
	// Explicit is a directory named by --skills or the skills key: it may
	// be one skill's folder.
	Explicit bool
}

// Level is one directory of the walk up from a run's directory: whether
// it holds .agents and .claude, and whether it is the repository's root
// (it holds .git).
type Level struct {
	Dir                  string
	Agents, Claude, Root bool
}

// ProjectDirs are the project's skill directories for a run whose walk up
// is levels (nearest first, ending at the repository's root or /):
// .agents/skills (where `npx skills add` installs for any agent) and
// .claude/skills, in each directory from the repository's root down to the
// run's, outermost first, so a nearer skill shadows a farther one; outside
// a repository, the run's directory's own. A directory with no .agents or
// .claude is not listed.
func ProjectDirs(levels []Level) []Dir {
	if len(levels) == 0 {
		return nil
	}
	if !levels[len(levels)-1].Root {
		levels = levels[:1]
	}
	var out []Dir
	for i := len(levels) - 1; i >= 0; i-- {
		l := levels[i]
		if l.Agents {
			out = append(out, Dir{Path: filepath.Join(l.Dir, ".agents", "skills"), Source: "project"})
		}
		if l.Claude {
			out = append(out, Dir{Path: filepath.Join(l.Dir, ".claude", "skills"), Source: "project"})
		}
	}
	return out
}

// FS is how Discover reaches the file system; tests count what it does.
type FS struct {
	// OpenDir opens a directory of skill folders.
	OpenDir func(string) (Folders, error)
	// Read reads the head of a SKILL.md: to the end of its front
	// matter (readHead), refusing what is not a regular file (a
	// directory, a FIFO that would hold the run: rawfile.ErrNotRegular)
	// or is larger than MaxSize (rawfile.ErrTooLarge). It reads into
	// buf's room, which Discover hands from one SKILL.md to the next.
	Read func(p string, buf []byte) ([]byte, error)
}

// Folders is an open directory of skill folders.
type Folders interface {
	// Names are the names of its entries, sorted. An entry that is no
	// folder holds no SKILL.md: ReadSKILL says so (syscall.ENOTDIR).
	Names() ([]string, error)
	// ReadSKILL reads the head of the SKILL.md in the folder name, as
	// FS.Read does.
	ReadSKILL(name string, buf []byte) ([]byte, error)
	Close() error
}

// OS is the file system itself: a SKILL.md is opened relative to its
// directory of skills, open, fstat, read and close (rawfile).
var OS = FS{OpenDir: openFolders, Read: readSKILL}

// MaxSize is the largest SKILL.md read.
const MaxSize = 1 << 20

// Discover reads the SKILL.md of every folder of dirs, in order: a later
// skill of the same name shadows an earlier one. It returns every skill
// found, the ones with problems and the shadowed ones included, in the
// order found; Offered picks those a run offers.
func Discover(fsys FS, dirs []Dir) []Skill {
	var out []Skill
	// One buffer for every SKILL.md: a start with ten skills touches one
	// page for them, not ten fresh ones.
	var buf []byte
	for _, d := range dirs {
		if d.Explicit {
			p := filepath.Join(d.Path, "SKILL.md")
			if s, err := read(func(b []byte) ([]byte, error) { return fsys.Read(p, b) }, p, filepath.Base(d.Path), &buf); !errors.Is(err, fs.ErrNotExist) {
				out = add(out, s, err, p, d.Source)
				continue
			}
		}
		out = discoverIn(fsys, d, out, &buf)
	}
	return out
}

// discoverIn adds the skills of the folders of d to out.
func discoverIn(fsys FS, d Dir, out []Skill, buf *[]byte) []Skill {
	dir, err := fsys.OpenDir(d.Path)
	var names []string
	if err == nil {
		defer dir.Close()
		names, err = dir.Names()
	}
	if err != nil {
		if d.Explicit || !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.ENOTDIR) {
			out = append(out, Skill{Path: d.Path, Source: d.Source, Problems: []string{fmt.Sprintf("%s: %v", d.Path, unwrapPath(err))}})
		}
		return out
	}
	// Room for a skill a name at once: grown entry by entry, the slice
	// of skills took a fresh span of heap at each size at a start.
	out = slices.Grow(out, len(names))
	for _, name := range names {
		p := filepath.Join(d.Path, name, "SKILL.md")
		folder := filepath.Dir(p)
		s, err := read(func(b []byte) ([]byte, error) { return dir.ReadSKILL(name, b) }, p, name, buf)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// A folder with no SKILL.md is no skill; a link to one
			// that is gone (a skill installed by a link whose target
			// was removed) is a skill that cannot be read.
			if why := dangling(folder); why != "" {
				out = add(out, Skill{}, errors.New(why), p, d.Source)
			}
		case errors.Is(err, syscall.ENOTDIR):
			// An entry that is no folder is no skill, unless it is a
			// link (to a file): a skill that cannot be read.
			if fi, lerr := os.Lstat(folder); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				out = add(out, s, err, p, d.Source)
			}
		default:
			out = add(out, s, err, p, d.Source)
		}
	}
	return out
}

// dangling says what is wrong when the folder at dir or its SKILL.md is a
// symbolic link to nothing; "" when neither is. It runs only for a folder
// with no SKILL.md to read.
func dangling(dir string) string {
	for _, p := range []string{dir, filepath.Join(dir, "SKILL.md")} {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
				target, _ := os.Readlink(p)
				return fmt.Sprintf("%s: a symbolic link to %s, which is not there", p, target)
			}
		}
	}
	return ""
}

// add appends the skill read at p (err: what is wrong with it) to out; it
// shadows an earlier one of the same name.
func add(out []Skill, s Skill, err error, p, source string) []Skill {
	s.Path, s.Source = p, source
	if err != nil {
		s.Problems = append(s.Problems, err.Error())
	}
	for i := range out {
		if len(s.Problems) == 0 && len(out[i].Problems) == 0 && out[i].ShadowedBy == "" && out[i].Name == s.Name {
			s.Shadows, out[i].ShadowedBy = out[i].Path, p
		}
	}
	return append(out, s)
}

// Offered is the skills a run offers: those without problems and not
// shadowed, in name order.
func Offered(all []Skill) []Skill {
	out := make([]Skill, 0, len(all))
	for _, s := range all {
		if len(s.Problems) == 0 && s.ShadowedBy == "" {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Budget is the size budget of the catalogue's entries, in bytes as sent
// (escapes included): about 8,000 tokens, at four bytes a token.
const Budget = 32000

// entrySize is what a skill's entry in the catalogue takes, markup and
// all, as sent.
func entrySize(s Skill) int {
	// The path is an attribute, where a quote is escaped too.
	return sentLen(s.Name) + sentLen(s.Description) + sentLen(s.Path) + 5*strings.Count(s.Path, `"`) + 32
}

// Fit is the skills of offered (in name order, after Cut) whose entries
// fit budget bytes together, and the names of those left out: Cut keeps
// 64 bytes of each description, so a thousand skills would still send
// several times the budget. Those that come first by name are kept, so
// the same skills give the same catalogue.
func Fit(offered []Skill, budget int) ([]Skill, []string) {
	n := 0
	for i, s := range offered {
		if n += entrySize(s); n > budget {
			var out []string
			for _, d := range offered[i:] {
				out = append(out, d.Name)
			}
			return offered[:i:i], out
		}
	}
	return offered, nil
}

// sentLen is the length of s in the catalogue, which escapes &, < and >
// (runner/modelctx): a description of 1,024 ampersands takes 5,120 bytes,
// and a repository's skills must not pass the budget that way.
func sentLen(s string) int {
	return len(s) + 4*strings.Count(s, "&") + 3*(strings.Count(s, "<")+strings.Count(s, ">"))
}

// shorten cuts d to at most limit bytes, between characters, and marks
// the cut.
func shorten(d string, limit int) string {
	to := limit
	for to > 0 && !utf8.RuneStart(d[to]) {
		to--
	}
	return d[:to] + "…"
}

// Cut shortens the longest descriptions of offered, in place, to one
// length, the largest that makes their catalogue fit budget bytes (none
// below 64 bytes); it returns the names of the skills cut.
func Cut(offered []Skill, budget int) []string {
	size := func(limit int) int {
		n := 0
		for _, s := range offered {
			if len(s.Description) > limit {
				s.Description = shorten(s.Description, limit)
			}
			n += entrySize(s)
		}
		return n
	}
	longest := 0
	for _, s := range offered {
		longest = max(longest, len(s.Description))
	}
	if size(longest) <= budget {
		return nil
	}
	// The largest limit that fits: size falls as the limit does.
	lo, hi := 64, longest
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if size(mid) <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	var cut []string
	for i, s := range offered {
		if len(s.Description) > lo {
			offered[i].Description = shorten(s.Description, lo)
			cut = append(cut, s.Name)
		}
	}
	return cut
}

// Warnings are the lines a run prints on stderr about all: each skill
// skipped, with its problem, and each shadowing, naming both paths.
func Warnings(all []Skill) []string {
	var out []string
	for _, s := range all {
		for _, p := range s.Problems {
			out = append(out, p+" (skill skipped)")
		}
		if s.Shadows != "" {
			out = append(out, fmt.Sprintf("skill %s at %s shadows the one at %s", s.Name, s.Path, s.Shadows))
		}
	}
	return out
}

// read reads the SKILL.md at p, in the folder named folder, with get
// (FS.Read or Folders.ReadSKILL). Its error is ENOENT or ENOTDIR as get's
// (wrapped), for a SKILL.md that is not there.
func read(get func([]byte) ([]byte, error), p, folder string, buf *[]byte) (Skill, error) {
	data, err := get((*buf)[:0])
	if cap(data) > cap(*buf) {
		*buf = data[:0]
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Skill{}, err
	case errors.Is(err, rawfile.ErrTooLarge):
		return Skill{}, fmt.Errorf("%s: larger than %d bytes", p, MaxSize)
	case err != nil:
		return Skill{}, fmt.Errorf("%s: %w", p, unwrapPath(err))
	case len(data) > MaxSize:
		return Skill{}, fmt.Errorf("%s: larger than %d bytes", p, MaxSize)
	}
	return Parse(p, data, folder)
}

// readSKILL reads the head of the SKILL.md at p (readHead) with four
// system calls: open, fstat, read, close (rawfile). os.Open would add four
// fcntl and an epoll_ctl for each file, a tenth of what ten skills cost a
// start.
func readSKILL(p string, buf []byte) ([]byte, error) {
	f, err := rawfile.Open(p)
	return head(f, err, buf)
}

// osFolders is a directory of skill folders open in the file system.
type osFolders struct{ *rawfile.Dir }

func openFolders(dir string) (Folders, error) {
	d, err := rawfile.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	return osFolders{d}, nil
}

// ReadSKILL opens the SKILL.md relative to the directory: the kernel does
// not walk the directory's path again for each skill.
func (d osFolders) ReadSKILL(name string, buf []byte) ([]byte, error) {
	f, err := d.Open(name + "/SKILL.md")
	return head(f, err, buf)
}

// head reads the head of the SKILL.md f, which opening gave err.
func head(f *rawfile.File, err error, buf []byte) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.Size > MaxSize {
		return nil, rawfile.ErrTooLarge
	}
	return readHead(f, buf)
}

// headChunk is what readHead reads at a time.
const headChunk = 4096

// readHead reads r up to the end of a SKILL.md's front matter: to the end
// of the first whole chunk holding its closing line, or to the end (at
// most MaxSize+1 bytes). A run reads no more of a body than that. It
// reads into buf's room, grown as needed.
func readHead(r io.Reader, buf []byte) ([]byte, error) {
	data := buf[:0]
	for len(data) <= MaxSize {
		n := len(data)
		data = slices.Grow(data, headChunk)[:n+headChunk]
		m, err := io.ReadFull(r, data[n:])
		data = data[:n+m]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		// Only whole lines: a "---" at the chunk's end may go on.
		if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
			if _, _, err := frontMatter(data[:i+1]); err == nil {
				return data, nil
			}
		}
	}
	return data, nil
}

// unwrapPath is a *fs.PathError's cause: the path is said already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// frontMatter is the YAML between a SKILL.md's opening and closing "---"
// lines, and the line it starts on.
func frontMatter(data []byte) ([]byte, int, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	if string(bytes.TrimRight(first, " \t\r")) != "---" {
		return nil, 1, errors.New(`no front matter: the file must start with a "---" line`)
	}
	var fm []byte
	for off := 0; off < len(rest); {
		line, _, _ := bytes.Cut(rest[off:], []byte("\n"))
		if string(bytes.TrimRight(line, " \t\r")) == "---" {
			return fm, 2, nil
		}
		fm = rest[:off+len(line)]
		off += len(line) + 1
	}
	return nil, 1, errors.New(`the front matter has no closing "---" line`)
}

// Parse reads a SKILL.md's front matter as the format says: name (1 to 64
// lowercase letters, digits and single hyphens, the folder's name) and
// description (1 to 1024 characters), optional license, compatibility (at
// most 500 characters), metadata (a map of strings) and allowed-tools (a
// space-separated string or a list). Its error says "path:line: reason".
func Parse(path string, data []byte, folder string) (Skill, error) {
	return parse(path, data, folder, true)
}

// parse is Parse, trying parseSimple first when simple is set.
func parse(path string, data []byte, folder string, simple bool) (Skill, error) {
	fm, start, err := frontMatter(data)
	if err != nil {
		return Skill{}, fmt.Errorf("%s:%d: %v", path, start, err)
	}
	at := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", path, line+start-1, fmt.Sprintf(format, args...))
	}
	if simple {
		if s, seen, ok := parseSimple(fm); ok {
			return s, s.check(folder, seen, at)
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(fm, &doc); err != nil {
		return Skill{}, fmt.Errorf("%s:%d: front matter: %s", path, start+yamlLine(err)-1, yamlReason(err))
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return Skill{}, at(1, "the front matter must be a mapping of name, description, …")
	}
	var s Skill
	seen := map[string]int{}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if _, dup := seen[k.Value]; dup {
			return Skill{}, at(k.Line, "%s is given twice", k.Value)
		}
		seen[k.Value] = k.Line
		if err := s.field(k.Value, v, at); err != nil {
			return Skill{}, err
		}
	}
	return s, s.check(folder, seen, at)
}

// field sets the front matter's field key from v.
func (s *Skill) field(key string, v *yaml.Node, at func(int, string, ...any) error) error {
	str := func(dst *string) error {
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return at(v.Line, "%s must be a string", key)
		}
		*dst = v.Value
		return nil
	}
	switch key {
	case "name":
		return str(&s.Name)
	case "description":
		return str(&s.Description)
	case "license":
		return str(&s.License)
	case "compatibility":
		return str(&s.Compatibility)
	case "metadata":
		if v.Kind != yaml.MappingNode {
			return at(v.Line, "metadata must be a mapping of strings")
		}
		s.Metadata = map[string]string{}
		for j := 0; j+1 < len(v.Content); j += 2 {
			if v.Content[j+1].Kind != yaml.ScalarNode {
				return at(v.Content[j+1].Line, "metadata.%s must be a string", v.Content[j].Value)
			}
			s.Metadata[v.Content[j].Value] = v.Content[j+1].Value
		}
	case "allowed-tools":
		switch v.Kind {
		case yaml.ScalarNode:
			s.AllowedTools = strings.Fields(v.Value)
		case yaml.SequenceNode:
			for _, t := range v.Content {
				if t.Kind != yaml.ScalarNode {
					return at(t.Line, "allowed-tools must be strings")
				}
				s.AllowedTools = append(s.AllowedTools, t.Value)
			}
		default:
			return at(v.Line, "allowed-tools must be a string or a list")
		}
	}
	// Other fields (a harness's own) are left to it.
	return nil
}

// check holds the fields read to the format.
func (s *Skill) check(folder string, seen map[string]int, at func(int, string, ...any) error) error {
	nameLine, ok := seen["name"]
	switch {
	case !ok:
		return at(1, "no name")
	case s.Name == "" || len(s.Name) > 64:
		return at(nameLine, "name must be 1 to 64 characters, not %d", len(s.Name))
	case !validName(s.Name):
		return at(nameLine, "name %q must be lowercase letters, digits and single hyphens, neither first nor last", s.Name)
	case s.Name != folder:
		return at(nameLine, "name %q is not its folder's name %q", s.Name, folder)
	}
	descLine, ok := seen["description"]
	n := len([]rune(s.Description))
	switch {
	case !ok:
		return at(1, "no description")
	case strings.TrimSpace(s.Description) == "" || n > 1024:
		return at(descLine, "description must be 1 to 1024 characters, not %d", n)
	case len([]rune(s.Compatibility)) > 500:
		return at(seen["compatibility"], "compatibility must be at most 500 characters")
	}
	return nil
}

// validName tells whether name is lowercase letters, digits and single
// hyphens, neither first nor last.
func validName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && i > 0 && i < len(name)-1 && name[i-1] != '-':
		default:
			return false
		}
	}
	return name != ""
}

// yamlLine is the line a yaml error names, 1 when it names none. The
// parser's errors (not the scanner's) name the line before, counting from
// 0 (go.yaml.in/yaml/v3 adds 1 to a scanner error's mark alone):
// "description: [x" on a document's second line is "line 1: did not find
// expected ',' or ']'".
func yamlLine(err error) int {
	rest, ok := strings.CutPrefix(strings.TrimPrefix(err.Error(), "yaml: "), "line ")
	if !ok {
		return 1
	}
	var n int
	fmt.Sscanf(rest, "%d", &n)
	reason := yamlReason(err)
	for _, p := range yamlParserErrors {
		if strings.HasPrefix(reason, p) {
			n++
			break
		}
	}
	return max(n, 1)
}

// yamlParserErrors begin the messages of yaml's parser (parserc.go), whose
// line counts from 0.
var yamlParserErrors = []string{
	"did not find expected key", "did not find expected node content", "did not find expected '-' indicator",
	"did not find expected ',' or ", "did not find expected <document start>", "found undefined tag handle",
	"found duplicate %", "found incompatible YAML document",
}

// yamlReason is a yaml error's text without its "yaml: line N:" prefix.
func yamlReason(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if strings.HasPrefix(msg, "line ") {
		if _, after, ok := strings.Cut(msg, ": "); ok {
			return after
		}
	}
	return msg
}
