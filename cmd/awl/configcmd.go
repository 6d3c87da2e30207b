package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/awlrun/awl/cmd/awl/config"
	"github.com/awlrun/awl/runner"
)

// configCmd is `awl config`: what configuration a run here would use.
type configCmd struct {
	Show configShowCmd `cmd:""`
	Path configPathCmd `cmd:""`
}

// configWhere is the flags of `awl config show` and `path` that choose
// which files are read, as `awl run` takes them.
type configWhere struct {
	Dir      string `name:"cd" short:"C" placeholder:"DIR"`
	Config   string `name:"config" placeholder:"FILE"`
	NoConfig bool   `name:"no-config"`
}

// configShowCmd is `awl config show`: --json, then any flags of `awl run`
// (-C, --config, --profile, … and the settings' own), which it reads as
// the run would.
type configShowCmd struct {
	JSON     bool     `name:"json"`
	RunFlags []string `arg:"" optional:"" name:"run-flags" passthrough:""`
}

// configPathCmd is `awl config path`.
type configPathCmd struct {
	configWhere `embed:""`
}

// Run prints every setting a run here would start with, and its source.
func (s *configShowCmd) Run(a *app) error {
	var flags []string
	for _, f := range s.RunFlags {
		if f == "--json" {
			s.JSON = true
			continue
		}
		flags = append(flags, f)
	}
	c, err := parseRunFlags(a, "config show", flags)
	if err != nil {
		return err
	}
	if len(c.Args) > 0 {
		return runner.Usagef(fmt.Sprintf("config show: %q: it takes the flags of awl run, not a prompt", c.Args[0]))
	}
	cf, err := c.loadConfig(a)
	if err != nil {
		return err
	}
	if err := c.checkRunDir(cf); err != nil {
		return err
	}
	c.layFlags(cf)
	if s.JSON {
		return writeConfigJSON(a, cf)
	}
	var b strings.Builder
	for _, f := range cf.files {
		fmt.Fprintf(&b, "# %s file %s (sha256 %s)\n", roleName(f.Role), displayPath(f.Path), f.SHA256)
	}
	if cf.profile != "" {
		fmt.Fprintf(&b, "# profile %s\n", cf.profile)
	}
	if trusted, why := cf.trust(); trusted {
		fmt.Fprintf(&b, "# the project file is trusted (%s)\n", why)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range cf.res.Settings {
			if !yield(k) {
				return
			}
		}
	})
	var lines [][2]string
	width := 0
	for _, name := range names {
		st := cf.res.Settings[name]
		l := [2]string{name + " = " + tomlValue(st.Value), sourceText(st.Source)}
		width = max(width, len(l[0]))
		lines = append(lines, l)
	}
	for _, s := range cf.res.Servers {
		l := [2]string{"[mcp-servers." + s.Name + "]", "from " + displayPath(s.File) + ":" + strconv.Itoa(s.Line)}
		width = max(width, len(l[0]))
		lines = append(lines, l)
	}
	width = min(width, 60)
	for _, l := range lines {
		fmt.Fprintf(&b, "%-*s  # %s\n", width, l[0], l[1])
	}
	_, err = a.stdout.Write([]byte(b.String()))
	return err
}

// layFlags sets over cf's settings those the command line gave, with the
// source "flag", as configure lets a flag win over the files.
func (c *runCmd) layFlags(cf *configured) {
	rv := reflect.ValueOf(c).Elem()
	schema := runSchema()
	for _, name := range c.given.names {
		f := runFlagTable.byName(name)
		if f == nil || f.cfg == keyNone {
			continue
		}
		v, ok := flagValue(f, rv.Field(f.index))
		if !ok {
			continue
		}
		// A rule list's flag holds the rules as given (--tools read,grep):
		// split as the run splits them.
		if list, isList := v.([]string); isList {
			if k := schema.Lookup(name); k != nil && k.Split != nil {
				var items []string
				for _, it := range list {
					items = append(items, k.Split(it)...)
				}
				v = items
			}
		}
		cf.res.Settings[name] = config.Setting{Value: v, Source: config.Source{Kind: "flag"}}
	}
	// The command line's --tools is the run's choice of tools.
	if s := cf.res.Settings["no-tools"]; c.given.has("tools") && !c.given.has("no-tools") && s.Source.Kind != "default" {
		delete(cf.res.Settings, "no-tools")
	}
}

// flagValue is a run flag's field as a configuration value; false for a
// pointer flag not given a value.
func flagValue(f *fastFlag, v reflect.Value) (config.Value, bool) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, false
		}
		v = v.Elem()
	}
	switch {
	case f.slice:
		return slices.Clone(v.Interface().([]string)), true
	case f.dur:
		return time.Duration(v.Int()), true
	case f.ref:
		return v.Interface().(schemaRef).Ref, true
	}
	switch v.Kind() {
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Int, reflect.Int64:
		return v.Int(), true
	case reflect.Float64:
		return v.Float(), true
	case reflect.String:
		return v.String(), true
	}
	return nil, false
}

// checkRunDir refuses a run directory (-C, AWL_CD or a file's cd) that is
// not one, as the run would: what a run there would read is no answer.
func (c *runCmd) checkRunDir(cf *configured) error {
	dir, from := c.Dir, "--cd"
	if s, ok := cf.res.Settings["cd"]; dir == "" && ok {
		dir, from = s.Value.(string), sourceText(s.Source)+": cd"
		if s.Source.Kind == "env" {
			from = s.Source.Env
		}
	}
	if dir == "" {
		return nil
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return runner.Usagef(fmt.Sprintf("%s: %s is not a directory", from, dir))
	}
	return nil
}

// trust tells whether a project file was read and trusted, and by what.
func (cf *configured) trust() (bool, string) {
	for _, f := range cf.files {
		if f.Role == config.Project {
			return cf.res.Trusted, cf.res.Why
		}
	}
	return false, ""
}

// writeConfigJSON prints `awl config show --json`.
func writeConfigJSON(a *app, cf *configured) error {
	type file struct {
		Path   string `json:"path"`
		Role   string `json:"role"`
		SHA256 string `json:"sha256"`
	}
	type setting struct {
		Value  any    `json:"value"`
		Source string `json:"source"`
	}
	type server struct {
		Name   string `json:"name"`
		Source string `json:"source"`
	}
	out := struct {
		Files          []file             `json:"files"`
		Profile        *string            `json:"profile"`
		ProjectTrusted bool               `json:"project_trusted"`
		Settings       map[string]setting `json:"settings"`
		MCPServers     []server           `json:"mcp_servers"`
	}{Files: []file{}, Settings: map[string]setting{}, MCPServers: []server{}}
	for _, f := range cf.files {
		out.Files = append(out.Files, file{f.Path, roleName(f.Role), f.SHA256})
	}
	if cf.profile != "" {
		out.Profile = &cf.profile
	}
	out.ProjectTrusted, _ = cf.trust()
	for name, st := range cf.res.Settings {
		v := st.Value
		if d, ok := v.(time.Duration); ok {
			v = d.String()
		}
		out.Settings[name] = setting{v, sourceText(st.Source)}
	}
	for _, s := range cf.res.Servers {
		out.MCPServers = append(out.MCPServers, server{s.Name, s.File + ":" + strconv.Itoa(s.Line)})
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = a.stdout.Write(append(data, '\n'))
	return err
}

// Run prints the files a run here reads, in order.
func (p *configPathCmd) Run(a *app) error {
	if p.NoConfig {
		if p.Config != "" {
			return (&runCmd{NoConfig: true, Config: p.Config}).checkNoConfig()
		}
		return nil
	}
	user := config.UserFile(a.getenv)
	dir := cmp.Or(p.Dir, a.getenv("AWL_CD"), ".")
	c := &runCmd{Dir: p.Dir, Config: p.Config}
	locs, err := c.findConfig(a, dir)
	if err != nil {
		return err
	}
	// A user's file that sets cd moves the search (loadConfig): the files
	// the run reads, when they can be read.
	if cf, err := c.loadConfig(a); err == nil {
		if err := c.checkRunDir(cf); err != nil {
			return err
		}
		locs = locs[:0]
		for _, f := range cf.files {
			locs = append(locs, config.Loc{Path: f.Path})
		}
	}
	for _, l := range locs {
		fmt.Fprintln(a.stdout, l.Path)
	}
	if len(locs) == 0 {
		abs, _ := filepath.Abs(dir)
		fmt.Fprintf(a.stderr, "awl: no configuration file: looked for %s and for .awl/config.toml from %s up to the repository's root\n", cmp.Or(user, "(no user file: HOME is not set)"), abs)
	}
	return nil
}

// roleName is how `awl config show` names a file's role.
func roleName(r config.Role) string {
	switch r {
	case config.User:
		return "user"
	case config.Project:
		return "project"
	}
	return "named"
}

// sourceText is a setting's source as `awl config show` prints it: a file
// by its path from the working directory when it is below it.
func sourceText(s config.Source) string {
	if s.Kind == "file" {
		s.Path = displayPath(s.Path)
	}
	return s.String()
}

// displayPath is p from the working directory when p is below it.
func displayPath(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return p
}

// tomlValue is v as TOML writes it.
func tomlValue(v config.Value) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case time.Duration:
		return strconv.Quote(v.String())
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	return config.Format(v)
}
