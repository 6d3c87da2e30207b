package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/awlrun/awl/runner/mcp/oauth"

	"github.com/awlrun/awl/internal/jsonerr"
)

// Server is one configured MCP server: a command spoken to over stdio, or a
// streamable HTTP endpoint.
type Server struct {
	Name string
	// File is the --mcp-config file the server came from.
	File string
	// Login is the command that stores its OAuth tokens, for the hint of
	// an error; "" is `awl mcp login NAME --mcp-config FILE`.
	Login string

	// Command, Args, Env and Cwd start a stdio server. Env is added to the
	// tool environment; Cwd "" means the run's working directory.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// Sandbox is how the run's sandbox (--sandbox) confines a stdio
	// server: "" as it confines the tools, "network" the same but with
	// the network allowed, "off" not at all.
	Sandbox string

	// URL and Headers reach a streamable HTTP server.
	URL     string
	Headers map[string]string
	// OAuth says how awl authorizes with the server; nil means the
	// authorization-code flow with dynamic registration, when the server
	// asks for it.
	OAuth *oauth.Config

	// Roots are the directories awl declares to the server as its roots
	// (the config's "roots": true is ".", the run's working directory; a
	// relative one is taken from there). None by default: a server that
	// honours roots serves them instead of the directories its own
	// configuration names.
	Roots []string

	// secrets are values that must never appear in error text: header
	// values and the values of variables expanded into env entries.
	secrets []string
	// argVars are the values of the variables expanded into Args: a
	// secret passed on the command line, which a tool reads in
	// /proc/PID/cmdline where the server's PID namespace is not apart.
	argVars []string
}

// The values of a server's "sandbox".
const (
	SandboxNetwork = "network"
	SandboxOff     = "off"
)

// Transport is "stdio" or "http".
func (s Server) Transport() string {
	if s.URL != "" {
		return "http"
	}
	return "stdio"
}

// ConfigError is a --mcp-config file that cannot be used. Its text names the
// file and, where it applies, the line: "path:line: reason".
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

// validName is what a server name may be ([A-Za-z0-9_-]{1,40}): it becomes part of tool names, which
// providers restrict to letters, digits, _ and -.
func validName(s string) bool {
	if len(s) < 1 || len(s) > 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// rawServer is one server as written in the file.
type rawServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Cwd     string            `json:"cwd"`
	Sandbox *string           `json:"sandbox"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	OAuth   *rawOAuth         `json:"oauth"`
	Roots   json.RawMessage   `json:"roots"`
}

// rawOAuth is a server's "oauth" object as written in the file.
type rawOAuth struct {
	Grant             string   `json:"grant"`
	ClientID          string   `json:"client_id"`
	ClientSecret      string   `json:"client_secret"`
	PrivateKey        string   `json:"private_key"`
	SigningAlgorithm  string   `json:"signing_algorithm"`
	ClientMetadataURL string   `json:"client_metadata_url"`
	Scopes            []string `json:"scopes"`
	IdP               *rawIdP  `json:"idp"`
	Assertion         string   `json:"assertion"`
	AssertionFile     string   `json:"assertion_file"`
	PrivateNetwork    bool     `json:"private_network"`
}

// rawIdP is an "oauth" object's "idp" as written in the file.
type rawIdP struct {
	Issuer        string `json:"issuer"`
	TokenEndpoint string `json:"token_endpoint"`
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	IDToken       string `json:"id_token"`
}

// LoadConfig reads --mcp-config files in order and returns their servers,
// sorted by name. ${VAR} and ${VAR:-default} in string values are expanded
// with getenv. Every problem is a *ConfigError naming the file: a file
// that cannot be read or parsed, an unset or empty ${VAR} without a
// default, a server with neither command nor url, a name used twice.
func LoadConfig(paths []string, getenv func(string) string) ([]Server, error) {
	var out []Server
	from := map[string]string{}
	for _, p := range paths {
		servers, err := loadFile(p, getenv)
		if err != nil {
			return nil, err
		}
		for _, s := range servers {
			if f, ok := from[s.Name]; ok {
				return nil, &ConfigError{fmt.Sprintf("%s: server %q is also defined in %s", p, s.Name, f)}
			}
			from[s.Name] = p
			out = append(out, s)
		}
	}
	sortByName(out)
	return out, nil
}

// sortByName sorts servers by name. It is sort.Slice, not slices.SortFunc:
// the generic sort is compiled anew for every struct shape it sorts by
// value (about 45 KB of binary for a Server), and sort.Slice is linked
// already.
func sortByName(servers []Server) {
	sort.Slice(servers, func(i, j int) bool { return servers[i].Name < servers[j].Name })
}

// loadFile reads one --mcp-config file: its servers in name order.
func loadFile(path string, getenv func(string) string) ([]Server, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		// The caller names the flag: "path: reason", as every other
		// error of the file, without os's "open".
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &ConfigError{fmt.Sprintf("%s: %v", path, err)}
	}
	return ParseConfig(path, data, getenv)
}

// ParseConfig reads the servers of data, a document in .mcp.json's shape
// that came from path, as LoadConfig reads a file: awl's configuration
// files (cmd/awl/config) hand it their [mcp-servers.NAME] tables so.
func ParseConfig(path string, data []byte, getenv func(string) string) ([]Server, error) {
	var doc struct {
		Servers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, &ConfigError{fmt.Sprintf("%s:%d: %s", path, errLine(data, err), jsonReason(err))}
	}
	if doc.Servers == nil {
		return nil, &ConfigError{fmt.Sprintf("%s: no \"mcpServers\" object", path)}
	}
	names := make([]string, 0, len(doc.Servers))
	for n := range doc.Servers {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []Server
	for _, name := range names {
		s, err := parseServer(path, data, name, doc.Servers[name], getenv)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// atFunc makes the *ConfigError of a server: "path:line: server "name": …".
type atFunc func(format string, args ...any) error

// parseServer reads the server name of the file at path (whose text is
// data) from raw: its values expanded, then checked.
func parseServer(path string, data []byte, name string, raw json.RawMessage, getenv func(string) string) (Server, error) {
	at := func(format string, args ...any) error {
		return &ConfigError{fmt.Sprintf("%s:%d: server %q: %s", path, lineOf(data, []byte(`"`+name+`"`)), name, fmt.Sprintf(format, args...))}
	}
	if !validName(name) {
		return Server{}, at("the name must be 1 to 40 letters, digits, _ or -")
	}
	var rs rawServer
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&rs); err != nil {
		return Server{}, at("%s", jsonReason(err))
	}
	x := expander{getenv: getenv, data: data, path: path, server: name}
	s := Server{Name: name, File: path}
	expandServer(&x, &rs, &s)
	roots, rootsErr := parseRoots(rs.Roots)
	for _, r := range roots {
		s.Roots = append(s.Roots, x.expand(r, nil))
	}
	if x.err != nil {
		return Server{}, x.err
	}
	if rootsErr != "" {
		return Server{}, at("%s", rootsErr)
	}
	for _, r := range s.Roots {
		if strings.TrimSpace(r) == "" {
			return Server{}, at(`roots: an empty directory name`)
		}
	}
	if s.OAuth != nil {
		if rs.URL == "" {
			return Server{}, at(`"oauth" applies to HTTP servers`)
		}
		if err := checkOAuth(s.OAuth, at); err != nil {
			return Server{}, err
		}
	}
	if err := settleTransport(&rs, &s, at); err != nil {
		return Server{}, err
	}
	return s, nil
}

// expandServer sets s's values from rs's, ${VAR} expanded; the values
// that are secrets are noted in s.secrets.
func expandServer(x *expander, rs *rawServer, s *Server) {
	s.Command = x.expand(rs.Command, nil)
	for _, a := range rs.Args {
		s.Args = append(s.Args, x.expand(a, &s.argVars))
	}
	s.Cwd = x.expand(rs.Cwd, nil)
	s.URL = x.expand(rs.URL, &s.secrets)
	if len(rs.Env) > 0 {
		s.Env = map[string]string{}
		for k, v := range rs.Env {
			s.Env[k] = x.expand(v, &s.secrets)
		}
	}
	if len(rs.Headers) > 0 {
		s.Headers = map[string]string{}
		for k, v := range rs.Headers {
			v = x.expand(v, nil)
			s.Headers[k] = v
			if strings.TrimSpace(v) != "" {
				s.secrets = append(s.secrets, v)
			}
		}
	}
	if rs.OAuth != nil {
		expandOAuth(x, rs.OAuth, s)
	}
}

// expandOAuth sets s.OAuth from ro, its secrets noted.
func expandOAuth(x *expander, ro *rawOAuth, s *Server) {
	s.OAuth = &oauth.Config{
		Grant:             ro.Grant,
		ClientID:          x.expand(ro.ClientID, nil),
		ClientSecret:      x.expand(ro.ClientSecret, &s.secrets),
		PrivateKey:        x.expand(ro.PrivateKey, &s.secrets),
		SigningAlgorithm:  ro.SigningAlgorithm,
		ClientMetadataURL: x.expand(ro.ClientMetadataURL, nil),
		Scopes:            ro.Scopes,
		PrivateNetwork:    ro.PrivateNetwork,
		Assertion:         x.expand(ro.Assertion, &s.secrets),
		AssertionFile:     x.expand(ro.AssertionFile, nil),
	}
	secrets := []string{s.OAuth.ClientSecret, s.OAuth.PrivateKey, s.OAuth.Assertion}
	if ri := ro.IdP; ri != nil {
		s.OAuth.IdP = &oauth.IdP{
			Issuer:        x.expand(ri.Issuer, nil),
			TokenEndpoint: x.expand(ri.TokenEndpoint, nil),
			ClientID:      x.expand(ri.ClientID, nil),
			ClientSecret:  x.expand(ri.ClientSecret, &s.secrets),
			IDToken:       x.expand(ri.IDToken, &s.secrets),
		}
		if s.OAuth.Grant == "" {
			s.OAuth.Grant = oauth.GrantIDJAG
		}
		secrets = append(secrets, s.OAuth.IdP.ClientSecret, s.OAuth.IdP.IDToken)
	}
	for _, v := range secrets {
		if strings.TrimSpace(v) != "" && !slices.Contains(s.secrets, v) {
			s.secrets = append(s.secrets, v)
		}
	}
}

// checkOAuth refuses an "oauth" object whose grant lacks what it needs or
// has what belongs to another.
func checkOAuth(o *oauth.Config, at atFunc) error {
	switch {
	case o.Grant != "" && o.Grant != oauth.GrantAuthorizationCode && o.Grant != oauth.GrantClientCredentials && o.Grant != oauth.GrantIDJAG && o.Grant != oauth.GrantJWTBearer:
		return at(`oauth: unknown grant %q (authorization_code, client_credentials, id_jag or jwt_bearer)`, o.Grant)
	case o.Grant == oauth.GrantJWTBearer && (o.Assertion == "") == (o.AssertionFile == ""):
		return at(`oauth: the jwt_bearer grant needs one of "assertion" (as "${VAR}") and "assertion_file"`)
	case o.Grant == oauth.GrantJWTBearer && o.ClientID == "":
		return at(`oauth: the jwt_bearer grant needs a "client_id"`)
	case o.Grant != oauth.GrantJWTBearer && (o.Assertion != "" || o.AssertionFile != ""):
		return at(`oauth: "assertion" and "assertion_file" are for the jwt_bearer grant`)
	case o.Grant == oauth.GrantClientCredentials && o.ClientID == "":
		return at(`oauth: the client_credentials grant needs a "client_id"`)
	case o.Grant == oauth.GrantClientCredentials && o.ClientSecret == "" && o.PrivateKey == "":
		return at(`oauth: the client_credentials grant needs a "client_secret" or a "private_key"`)
	case o.PrivateKey != "" && o.Grant != oauth.GrantClientCredentials && o.Grant != oauth.GrantIDJAG && o.Grant != oauth.GrantJWTBearer:
		return at(`oauth: "private_key" is for the client_credentials, id_jag and jwt_bearer grants`)
	case o.IdP != nil && o.Grant != oauth.GrantIDJAG:
		return at(`oauth: "idp" is for the id_jag grant, not %s`, o.Grant)
	case o.Grant == oauth.GrantIDJAG && o.IdP == nil:
		return at(`oauth: the id_jag grant needs an "idp" object (issuer or token_endpoint, client_id, id_token)`)
	case o.Grant == oauth.GrantIDJAG && o.ClientID == "":
		return at(`oauth: the id_jag grant needs a "client_id" (the client registered at the MCP server's authorization server)`)
	case o.Grant == oauth.GrantIDJAG && (o.IdP.Issuer == "") == (o.IdP.TokenEndpoint == ""):
		return at(`oauth: idp needs one of "issuer" and "token_endpoint"`)
	case o.Grant == oauth.GrantIDJAG && o.IdP.ClientID == "":
		return at(`oauth: idp needs a "client_id" (the client registered at the identity provider)`)
	case o.Grant == oauth.GrantIDJAG && strings.TrimSpace(o.IdP.IDToken) == "":
		return at(`oauth: idp needs an "id_token" (as "${VAR}", the identity provider's ID token)`)
	case o.SigningAlgorithm != "" && o.SigningAlgorithm != "ES256" && o.SigningAlgorithm != "RS256":
		return at(`oauth: signing_algorithm %q: ES256 or RS256`, o.SigningAlgorithm)
	case o.ClientMetadataURL != "" && !strings.HasPrefix(o.ClientMetadataURL, "https://"):
		return at(`oauth: client_metadata_url must be an https:// URL`)
	}
	return nil
}

// settleTransport decides between stdio and HTTP from "type", "command"
// and "url", drops the other's values, and checks "sandbox".
func settleTransport(rs *rawServer, s *Server, at atFunc) error {
	typ := strings.ToLower(rs.Type)
	switch {
	case typ != "" && typ != "stdio" && typ != "http" && typ != "streamable-http" && typ != "sse":
		return at("unknown type %q (stdio or http)", rs.Type)
	case typ == "http" || typ == "streamable-http" || typ == "sse" || (typ == "" && s.URL != "" && s.Command == ""):
		// "sse", the 2024-11-05 transport, is reached through the same
		// URL: streamable HTTP first, then the old transport's stream.
		if s.URL == "" {
			return at(`type %q needs a "url"`, typ)
		}
		if !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
			return at("url must start with http:// or https://")
		}
		s.Command, s.Args, s.Env, s.Cwd = "", nil, nil, ""
	default:
		if s.Command == "" {
			return at(`needs a "command" (stdio) or a "url" (http)`)
		}
		s.URL, s.Headers = "", nil
	}
	if rs.Sandbox != nil {
		switch *rs.Sandbox {
		case SandboxNetwork, SandboxOff:
			s.Sandbox = *rs.Sandbox
		default:
			return at(`unknown sandbox %q: "network" lets the server use the network in the run's sandbox, "off" starts it outside; leave it out to confine the server as the tools are`, *rs.Sandbox)
		}
		if s.URL != "" {
			return at(`"sandbox" applies to stdio servers: an HTTP server is not started by awl`)
		}
	}
	return nil
}

// parseRoots reads a server's "roots": absent, null or false is none,
// true the run's working directory ("."), else a list of directories.
func parseRoots(raw json.RawMessage) ([]string, string) {
	const want = `roots must be true (the run's working directory) or a list of directories`
	t := bytes.TrimSpace(raw)
	switch string(t) {
	case "", "null", "false":
		return nil, ""
	case "true":
		return []string{"."}, ""
	}
	var dirs []string
	if err := json.Unmarshal(t, &dirs); err != nil {
		return nil, want
	}
	if len(dirs) == 0 {
		return nil, want + `; leave it out to declare none`
	}
	return dirs, ""
}

// varRE matches ${NAME} and ${NAME:-default}. It is compiled on first use:
// a run without --mcp-config never pays for it. A sync.Once and a function,
// not sync.OnceValue: a package-level OnceValue is a call at every start,
// and the package initialiser that makes it is the only code of its 64 KB
// of text that a plain run would touch (docs/performance.md).
var (
	varREOnce sync.Once
	varREVal  *regexp.Regexp
)

func varRE() *regexp.Regexp {
	varREOnce.Do(func() { varREVal = regexp.MustCompile(`\$\{([^}:]*)(:-([^}]*))?\}`) })
	return varREVal
}

// validVarName is what a variable's name may be ([A-Za-z_][A-Za-z0-9_]*).
func validVarName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// expander expands variables in one server's values and keeps the first
// error.
type expander struct {
	getenv       func(string) string
	data         []byte
	path, server string
	err          error
}

// expand returns s with ${VAR} and ${VAR:-default} replaced. The values
// of variables are added to secrets when it is not nil.
func (x *expander) expand(s string, secrets *[]string) string {
	if x.err != nil || !strings.Contains(s, "${") {
		return s
	}
	out := varRE().ReplaceAllStringFunc(s, func(m string) string {
		sub := varRE().FindStringSubmatch(m)
		name, hasDefault, def := sub[1], sub[2] != "", sub[3]
		if !validVarName(name) {
			// Not quoted: the text may be a credential that was
			// meant to be named (${GH_TOKEN-ghp_…}).
			x.fail(m, "a ${…} that is not a variable reference (a name of letters, digits and _, not a digit first; then :- and a default if any)")
			return ""
		}
		v := x.getenv(name)
		if v == "" {
			if hasDefault {
				return def
			}
			x.fail(m, "${%s} is not set or is empty (${%s:-default} gives a default, ${%s:-} allows empty)", name, name, name)
			return ""
		}
		if secrets != nil {
			*secrets = append(*secrets, v)
		}
		return v
	})
	if rest := varRE().ReplaceAllString(s, ""); x.err == nil && strings.Contains(rest, "${") {
		x.fail("${", "unterminated ${ (no closing brace)")
	}
	return out
}

func (x *expander) fail(find, format string, args ...any) {
	if x.err != nil {
		return
	}
	x.err = &ConfigError{fmt.Sprintf("%s:%d: server %q: %s", x.path, lineOf(x.data, []byte(find)), x.server, fmt.Sprintf(format, args...))}
}

// lineOf returns the 1-based line of the first occurrence of needle in
// data, or 1.
func lineOf(data, needle []byte) int {
	i := bytes.Index(data, needle)
	if i < 0 {
		return 1
	}
	return 1 + bytes.Count(data[:i], []byte("\n"))
}

// errLine returns the line a JSON decoding error points at; 1 when it
// names none.
func errLine(data []byte, err error) int {
	if line, ok := jsonerr.Line(data, err); ok {
		return line
	}
	return 1
}

// jsonReason says what is wrong in words a config author knows.
func jsonReason(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("%q must be %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return fmt.Sprintf("must be %s, not %s", jsonKind(te.Type.Kind().String()), te.Value)
	}
	if err.Error() == "unexpected end of JSON input" {
		return "invalid JSON: the file ends too early"
	}
	return "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
}

func jsonKind(k string) string {
	switch k {
	case "map", "struct":
		return "an object"
	case "slice":
		return "an array of strings"
	case "string":
		return "a string"
	}
	return k
}

// LoginCommand is the command that stores the server's OAuth tokens.
func (s *Server) LoginCommand() string {
	if s.Login != "" {
		return s.Login
	}
	return "awl mcp login " + s.Name + " --mcp-config " + s.File
}
