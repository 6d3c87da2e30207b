package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/internal/procenv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/redact"
	"github.com/awlrun/awl/runner/tool"
	"github.com/awlrun/awl/trace"
)

// actionsSecretVars hold GitHub Actions credentials; under GitHub Actions
// (GITHUB_ACTIONS=true) they are treated like provider keys.
var actionsSecretVars = []string{"GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"}

// keyFile is what reading one _FILE variable's file gave.
type keyFile struct {
	value string
	err   error
}

// providerKey returns the API key of spec's provider: its key variable, or
// else the content of the file its _FILE variable names, without trailing
// whitespace. The file is read once per run (the result is kept on a) and
// its content is never put into any environment. This is the one place a
// key is read; the registry says which variables.
func providerKey(a *app, spec provider.Spec) (string, error) {
	if v := a.getenv(spec.KeyVar); v != "" || spec.KeyFileVar == "" {
		return v, nil
	}
	path := a.getenv(spec.KeyFileVar)
	if path == "" {
		return "", nil
	}
	if a.keyFiles == nil {
		a.keyFiles = map[string]keyFile{}
	}
	kf, ok := a.keyFiles[path]
	if !ok {
		data, err := os.ReadFile(path)
		kf.value = strings.TrimRight(string(data), " \t\r\n")
		switch {
		case err != nil:
			kf.err = &provider.Error{Kind: provider.KindConfig, Provider: spec.Name, Message: fmt.Sprintf("%s: %v", spec.KeyFileVar, err)}
		case kf.value == "":
			kf.err = &provider.Error{Kind: provider.KindConfig, Provider: spec.Name, Message: fmt.Sprintf("%s: %s is empty", spec.KeyFileVar, path)}
		}
		a.keyFiles[path] = kf
	}
	return kf.value, kf.err
}

// secretNames lists the variables whose values this run keeps secret: every
// provider's credential variables, --redact-env (redactEnv) and
// AWL_REDACT_ENV, and under GitHub Actions its tokens. An invalid name is a
// usage error.
func secretNames(a *app, redactEnv []string) ([]string, error) {
	names := provider.SecretVars()
	// A collector's credentials stay awl's: kept from tools and redacted.
	names = append(names, trace.SecretVars...)
	add := func(from, list string) error {
		for _, n := range splitNames(list) {
			if strings.ContainsAny(n, "=\x00") {
				return runner.Usagef(fmt.Sprintf("%s: %q is not a variable name", from, n))
			}
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		return nil
	}
	for _, f := range redactEnv {
		if err := add("--redact-env", f); err != nil {
			return nil, err
		}
	}
	if err := add("AWL_REDACT_ENV", a.getenv("AWL_REDACT_ENV")); err != nil {
		return nil, err
	}
	if a.getenv("GITHUB_ACTIONS") == "true" {
		add("GITHUB_ACTIONS", strings.Join(actionsSecretVars, ","))
	}
	return names, nil
}

// splitNames splits a list of variable names as --redact-env,
// AWL_REDACT_ENV and each item of a configuration file's redact-env are
// read: on commas and white space, a carriage return included (a list
// read from a file with CRLF lines, whose "B\r" would keep no variable
// secret, and B's value not). It is the redact-env key's Split
// (runSchema), so that awl config show lists the names a run keeps
// secret, not the text they were written as.
func splitNames(list string) []string {
	return strings.FieldsFunc(list, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// hideSecrets keeps the named variables from every process but awl itself:
// their values are blanked in its /proc/PID/environ and awl becomes
// non-dumpable. Tools get an environment without them (toolEnviron). A
// failure is a warning on stderr: the run goes on, protected by
// non-dumpability alone.
func hideSecrets(a *app, names []string) {
	if err := hideEnviron(names); err != nil {
		fmt.Fprintf(a.stderr, "awl: warning: the secret variables' values could not be blanked in /proc/%d/environ (%v); awl is non-dumpable, so only root or CAP_SYS_PTRACE can read them there\n", os.Getpid(), err)
	}
}

// hideEnviron is procenv.Hide; a test replaces it to see a failure
// reported.
var hideEnviron = procenv.Hide

// toolEnviron is the environment tools run with: awl's own without the
// secret variables.
func toolEnviron(names []string) []string {
	return tool.ScrubEnviron(os.Environ(), names...)
}

// redactor returns the redactor for the values of names, of every key
// read from a provider's _FILE variable, and of what app.secrets holds
// (the credentials a cloud provider obtained, at start or since).
func redactor(a *app, names []string) *redact.Redactor {
	var secrets []redact.Secret
	for _, n := range names {
		if v := a.getenv(n); v != "" {
			secrets = append(secrets, redact.Secret{Name: n, Value: v})
		}
	}
	for _, v := range trace.HeaderValues(a.getenv) {
		secrets = append(secrets, redact.Secret{Name: "OTEL_EXPORTER_OTLP_HEADERS", Value: v})
	}
	for _, spec := range provider.Specs() {
		if a.getenv(spec.KeyVar) == "" && spec.KeyFileVar != "" {
			if v, err := providerKey(a, spec); err == nil && v != "" {
				secrets = append(secrets, redact.Secret{Name: spec.KeyVar, Value: v})
			}
		}
	}
	return a.secrets.track(a, redact.New(secrets))
}

// secretSet is what awl holds besides the secret variables: the MCP OAuth
// tokens and client secrets stored in the token directory (read once, by
// the first redactor made: a tool may print any of those files, a server
// configured in this run or not), those an MCP server's OAuth flow
// obtains during the run, and a cloud provider's credentials, at start
// and at each refresh (add). Every redactor made (redactor) redacts
// them all, those added after it was made included.
type secretSet struct {
	mu        sync.Mutex
	loaded    bool
	extra     []redact.Secret
	redactors []*redact.Redactor
}

// track makes r redact the set's secrets, now and as they are added.
func (s *secretSet) track(a *app, r *redact.Redactor) *redact.Redactor {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.loaded {
		s.loaded = true
		s.extra = append(s.extra, storedTokenSecrets(mcpTokenDir(a.getenv))...)
	}
	r.Add(s.extra...)
	s.redactors = append(s.redactors, r)
	return r
}

// add makes every redactor made, and every one made from now on, redact
// values, under name.
func (s *secretSet) add(name string, values ...string) {
	var add []redact.Secret
	for _, v := range values {
		add = append(add, redact.Secret{Name: name, Value: v})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.extra = append(s.extra, add...)
	for _, r := range s.redactors {
		r.Add(add...)
	}
}

// storedTokenSecrets are the tokens and client secrets of the OAuth token
// files in dir (awl mcp login's): access and refresh tokens, an ID token,
// the client secret, named MCP_CREDENTIAL.
func storedTokenSecrets(dir string) []redact.Secret {
	if dir == "" {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []redact.Secret
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil || len(b) > 1<<20 {
			continue
		}
		for _, path := range []string{"token.access_token", "token.refresh_token", "token.id_token", "client_secret"} {
			if v := gjson.GetBytes(b, path).String(); v != "" {
				out = append(out, redact.Secret{Name: mcpTokenName, Value: v})
			}
		}
	}
	return out
}

// mcpTokenName names the MCP credentials (OAuth tokens and client
// secrets, header values) where they are redacted.
const mcpTokenName = "MCP_CREDENTIAL"
