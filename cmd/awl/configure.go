package main

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"

	"github.com/awlrun/awl/cmd/awl/config"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/policy"
	"github.com/awlrun/awl/session"
)

// configFS is how configuration files are found and read; a test counts
// what a run does through it.
var configFS = config.OS

// configured is what configure read: the files, in order, the profile, and
// every setting with its source.
type configured struct {
	files   []*config.File
	profile string
	res     *config.Result
	// sessionDir is the session directory a file or AWL_SESSION_DIR set,
	// when no flag did.
	sessionDir string
}

// runSchema is the keys of a configuration file: one for each run flag
// with a config tag (runFlagTable), and session-dir.
func runSchema() config.Schema {
	s := make(config.Schema, 0, len(runFlagTable.flags)+1)
	for i := range runFlagTable.flags {
		f := &runFlagTable.flags[i]
		if f.cfg == keyNone {
			continue
		}
		k := config.Key{Name: f.name, Class: f.cfg, Default: f.def, Path: f.cfgPath, Enum: f.enum, Sep: f.sep}
		switch {
		case isRuleList(f.name):
			k.Split = policy.Split
			if f.cfg == keyAllow {
				k.Intersect = policy.Intersect
			}
		case f.name == "redact-env":
			k.Split = splitNames
		}
		switch {
		case f.slice:
			k.Type = config.List
		case f.dur:
			k.Type = config.Duration
		case f.kind == reflect.Bool:
			k.Type = config.Bool
		case f.kind == reflect.Int || f.kind == reflect.Int64:
			k.Type = config.Int
		case f.kind == reflect.Float64:
			k.Type = config.Float
		}
		s = append(s, k)
	}
	for i := range s {
		s[i].Moves = s[i].Name == "cd"
	}
	return append(s, config.Key{Name: "session-dir", Class: keyTrusted, Path: true})
}

// loadConfig reads the configuration files c's flags and the environment
// name, and layers them with the AWL_ variables (docs/config.md). A file
// that is wrong is exit 2; a key an untrusted project file may not set is
// exit 4.
func (c *runCmd) loadConfig(a *app) (*configured, error) {
	if err := c.checkNoConfig(); err != nil {
		return nil, err
	}
	schema := runSchema()
	in := config.Input{Schema: schema, Getenv: a.getenv, UserFile: config.UserFile(a.getenv)}
	in.Profile, in.ProfileFrom = c.Profile, "--profile"
	if in.Profile == "" && !c.NoConfig {
		// --no-config sets AWL_PROFILE aside as it does AWL_CONFIG: a
		// step that reads no file in a job that names a profile for
		// the others.
		in.Profile, in.ProfileFrom = a.getenv("AWL_PROFILE"), "AWL_PROFILE"
	}
	in.TrustProject = c.TrustProject
	if v := a.getenv("AWL_TRUST_PROJECT"); v != "" {
		t, err := strconv.ParseBool(v)
		if err != nil {
			return nil, runner.Usagef(fmt.Sprintf("AWL_TRUST_PROJECT: %q is not 1, 0, true or false", v))
		}
		in.TrustProject = in.TrustProject || t
		in.DistrustProject = !in.TrustProject
	}
	dir := cmp.Or(c.Dir, a.getenv("AWL_CD"), ".")
	res, err := c.readConfig(a, &in, dir)
	if err != nil {
		return nil, err
	}
	// The user's file moved the run (cd, no -C or AWL_CD): the project
	// file is the one found from where the run goes. No project file may
	// set cd, so this is done at most once.
	if s := res.Settings["cd"]; s.Source.Kind == "file" && c.Dir == "" && a.getenv("AWL_CD") == "" && c.tree != nil {
		if moved, _ := filepath.Abs(s.Value.(string)); moved != c.tree.Start {
			in.Files = nil
			if res, err = c.readConfig(a, &in, moved); err != nil {
				return nil, err
			}
		}
	}
	return &configured{files: in.Files, profile: in.Profile, res: res}, nil
}

// readConfig reads the files a run in dir reads (none with --no-config)
// into in, and layers them.
func (c *runCmd) readConfig(a *app, in *config.Input, dir string) (*config.Result, error) {
	if !c.NoConfig {
		locs, err := c.findConfig(a, dir)
		if err != nil {
			return nil, err
		}
		for _, l := range locs {
			f, err := config.Read(configFS, l, in.Schema)
			if err != nil {
				return nil, configError(err)
			}
			in.Files = append(in.Files, f)
		}
	}
	res, err := config.Resolve(*in)
	if err != nil {
		return nil, configError(err)
	}
	return res, nil
}

// findConfig says which configuration files to read: the one --config
// or AWL_CONFIG names, else the user's and the nearest project file of
// the walk up from dir, the run's directory.
func (c *runCmd) findConfig(a *app, dir string) ([]config.Loc, error) {
	named := cmp.Or(c.Config, a.getenv("AWL_CONFIG"))
	var t *config.Tree
	if named == "" {
		var err error
		if t, err = c.lookUp(a, dir); err != nil {
			return nil, configError(err)
		}
	}
	locs, err := config.Find(configFS, t, named)
	if err != nil {
		return nil, configError(err)
	}
	return locs, nil
}

// lookUp is the walk up from dir (config.Look), done once for a run: the
// configuration files and the skills are found from the one walk.
func (c *runCmd) lookUp(a *app, dir string) (*config.Tree, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if c.tree == nil || c.tree.Start != abs {
		if c.tree, err = config.Look(configFS, abs, config.UserFile(a.getenv)); err != nil {
			return nil, err
		}
		for _, f := range c.tree.Foreign {
			fmt.Fprintf(a.stderr, "awl: warning: %s belongs to another user, not you, root or the run directory's owner: not read (whoever may write its directory could have put it there; --config reads a file whoever owns it)\n", f)
		}
	}
	return c.tree, nil
}

// checkNoConfig refuses --no-config with a flag that names a file or a
// profile.
func (c *runCmd) checkNoConfig() error {
	if c.NoConfig && (c.Config != "" || c.Profile != "") {
		return runner.Usagef("--no-config reads no configuration file: it cannot go with --config or --profile")
	}
	return nil
}

// configError is a configuration's error as the run's: exit 2, or exit 4
// for what an untrusted project file may not set.
func configError(err error) error {
	var ce *config.Error
	if !errors.As(err, &ce) {
		return runner.Usagef(err.Error())
	}
	if ce.Code == runner.ExitConfig {
		return &runner.ConfigError{Reason: "config_untrusted", Msg: ce.Error()}
	}
	return runner.Usagef(ce.Error())
}

// configure reads the configuration and sets every key no flag gave
// (c.given) from it.
func (c *runCmd) configure(a *app) error {
	cf, err := c.loadConfig(a)
	if err != nil {
		return err
	}
	c.configured = cf
	rv := reflect.ValueOf(c).Elem()
	for _, name := range slices.Sorted(maps.Keys(cf.res.Settings)) {
		s := cf.res.Settings[name]
		if s.Source.Kind == "default" || c.given.has(name) {
			continue
		}
		switch name {
		case "session-dir":
			cf.sessionDir = s.Value.(string)
			continue
		case "no-tools":
			// The command line's --tools is the run's choice of tools.
			if c.given.has("tools") {
				continue
			}
		}
		f := runFlagTable.byName(name)
		if list, ok := s.Value.([]string); ok && len(list) == 0 && name == "tools" {
			// An untrusted project file's tools that the user's do not
			// allow: none.
			c.NoTools = true
			continue
		}
		if !setField(f, rv.Field(f.index), s.Value) {
			return runner.Usagef(fmt.Sprintf("%s: %s: %q is not a value --%s takes", s.Source, name, config.Format(s.Value), name))
		}
	}
	return nil
}

// origin names where the value of the run flag name came from, for an
// error about it: "--name" for a flag or a default, AWL_NAME for a
// variable, "path:line: name" for a file.
func (c *runCmd) origin(name string) string {
	if cf := c.configured; cf != nil && !c.given.has(name) {
		switch s := cf.res.Settings[name]; s.Source.Kind {
		case "env":
			return s.Source.Env
		case "file":
			return fmt.Sprintf("%s:%d: %s", s.Source.Path, s.Source.Line, name)
		}
	}
	return "--" + name
}

// setField sets a flag's field to a configuration value, as the flag
// given that value would (each item of a list in turn).
func setField(f *fastFlag, field reflect.Value, v config.Value) bool {
	field.SetZero()
	switch v := v.(type) {
	case bool:
		field.SetBool(v)
		return true
	case []string:
		for _, s := range v {
			if !f.set(field, s) {
				return false
			}
		}
		return true
	}
	return f.set(field, config.Format(v))
}

// store is the session store of the run: the one the flags and
// AWL_SESSION_DIR named, or the session-dir of a configuration file.
func (cf *configured) store(store *session.Store) *session.Store {
	if cf == nil || cf.sessionDir == "" {
		return store
	}
	dir, err := filepath.Abs(cf.sessionDir)
	if err != nil {
		dir = cf.sessionDir
	}
	return &session.Store{Dir: dir, IsLimit: store.IsLimit}
}

// runConfig is what the run entry records of the configuration: the files
// read, with their sha256, and the profile.
func (cf *configured) runConfig() *session.RunConfig {
	if cf == nil || len(cf.files) == 0 {
		return nil
	}
	rc := &session.RunConfig{Profile: cf.profile}
	for _, f := range cf.files {
		rc.Files = append(rc.Files, session.ConfigFile{Path: f.Path, SHA256: f.SHA256})
	}
	return rc
}
