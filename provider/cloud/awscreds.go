package cloud

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/credentials/endpointcreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
)

// awsSetup is what the AWS credential chain found: the credentials, where
// they come from (for errors), the region, and the secrets to redact.
type awsSetup struct {
	creds   aws.CredentialsProvider
	source  string
	region  string
	secrets *secretSet // beyond the variables
}

// awsProfile is the one profile of the shared files awl reads: the keys
// it knows, by name.
type awsProfile map[string]string

// awsChain resolves the AWS credentials as the AWS SDKs do, in order:
// the environment's keys; a web identity (AWS_WEB_IDENTITY_TOKEN_FILE and
// AWS_ROLE_ARN, as GitHub's OIDC gives them); the shared config and
// credentials files' profile (AWS_PROFILE, else default): keys, a web
// identity, or a credential process; the container's credentials
// endpoint (ECS, EKS Pod Identity); the EC2 instance metadata service,
// unless AWS_EC2_METADATA_DISABLED is true. The region is AWS_REGION,
// else AWS_DEFAULT_REGION, else the profile's.
func awsChain(name string, getenv func(string) string, hc *http.Client, secrets *secretSet) (*awsSetup, error) {
	prof, profName, err := loadProfile(getenv)
	if err != nil {
		return nil, configErr(name, err.Error())
	}
	s := &awsSetup{secrets: secrets}
	s.region, _ = first(getenv, "AWS_REGION", "AWS_DEFAULT_REGION")
	if s.region == "" {
		s.region = prof["region"]
	}
	id, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
	switch {
	case id != "" && secret != "":
		s.creds = credentials.NewStaticCredentialsProvider(id, secret, getenv("AWS_SESSION_TOKEN"))
		s.source = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
	case id != "" || secret != "":
		return nil, configErr(name, "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together")
	case getenv("AWS_WEB_IDENTITY_TOKEN_FILE") != "" || getenv("AWS_ROLE_ARN") != "":
		err = s.webIdentity(getenv, hc, getenv("AWS_WEB_IDENTITY_TOKEN_FILE"), getenv("AWS_ROLE_ARN"), getenv("AWS_ROLE_SESSION_NAME"), "AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN")
	case prof != nil:
		err = s.fromProfile(getenv, hc, prof, profName)
	default:
		s.machine(getenv, hc)
	}
	if err != nil {
		return nil, configErr(name, err.Error())
	}
	if s.creds == nil {
		return nil, configErr(name, "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, or AWS_PROFILE; no container credentials endpoint is set, and the EC2 instance metadata service is disabled (AWS_EC2_METADATA_DISABLED)")
	}
	s.creds = aws.NewCredentialsCache(recording{s.creds, s.secrets})
	return s, nil
}

// recording gives the credentials of p and records their secrets for the
// redactor at each retrieval, before they sign anything: those of a
// container's endpoint, the instance's role, STS, and their refreshes.
type recording struct {
	p       aws.CredentialsProvider
	secrets *secretSet
}

// Retrieve implements aws.CredentialsProvider.
func (r recording) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c, err := r.p.Retrieve(ctx)
	if err == nil {
		r.secrets.add("AWS_SECRET_ACCESS_KEY", c.SecretAccessKey)
		r.secrets.add("AWS_SESSION_TOKEN", c.SessionToken)
	}
	return c, err
}

// machine takes the credentials of the container or the instance awl
// runs on, when there are any to ask.
func (s *awsSetup) machine(getenv func(string) string, hc *http.Client) {
	full, rel := getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI"), getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
	if full != "" || rel != "" {
		endpoint := full
		if rel != "" {
			endpoint = "http://169.254.170.2" + rel
		}
		tok, tokFile := getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN"), getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")
		s.creds = endpointcreds.New(endpoint, func(o *endpointcreds.Options) {
			o.HTTPClient = hc
			o.AuthorizationToken = tok
			if tokFile != "" {
				o.AuthorizationTokenProvider = endpointcreds.TokenProviderFunc(func() (string, error) {
					data, err := os.ReadFile(tokFile)
					return strings.TrimSpace(string(data)), err
				})
			}
		})
		s.source = "the container credentials endpoint (AWS_CONTAINER_CREDENTIALS_" + map[bool]string{true: "RELATIVE_URI", false: "FULL_URI"}[rel != ""] + ")"
		return
	}
	if strings.EqualFold(getenv("AWS_EC2_METADATA_DISABLED"), "true") {
		return
	}
	opts := imds.Options{HTTPClient: hc, ClientEnableState: imds.ClientEnabled, Endpoint: getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT")}
	s.creds = ec2rolecreds.New(func(o *ec2rolecreds.Options) { o.Client = imds.New(opts) })
	s.source = "the EC2 instance metadata service"
}

// fromProfile takes the credentials the profile names.
func (s *awsSetup) fromProfile(getenv func(string) string, hc *http.Client, p awsProfile, name string) error {
	where := fmt.Sprintf("profile %q", name)
	switch {
	case p["aws_access_key_id"] != "" && p["aws_secret_access_key"] != "":
		s.creds = credentials.NewStaticCredentialsProvider(p["aws_access_key_id"], p["aws_secret_access_key"], p["aws_session_token"])
		s.source = where
		s.secrets.add("AWS_SECRET_ACCESS_KEY", p["aws_secret_access_key"])
		s.secrets.add("AWS_SESSION_TOKEN", p["aws_session_token"])
		return nil
	case p["web_identity_token_file"] != "":
		return s.webIdentity(getenv, hc, p["web_identity_token_file"], p["role_arn"], p["role_session_name"], where)
	}
	for _, k := range []string{"credential_process", "sso_session", "sso_start_url", "source_profile", "credential_source", "login_session"} {
		if p[k] != "" {
			return fmt.Errorf("%s uses %s, which awl does not read: export the credentials it gives (aws configure export-credentials --format env) or use AWS_ACCESS_KEY_ID, a web identity or the instance's role", where, k)
		}
	}
	s.machine(getenv, hc)
	return nil
}

// loadProfile reads the profile of the shared config and credentials
// files (AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/config
// and ~/.aws/credentials): the credentials file's section wins key by key.
// A profile named by AWS_PROFILE that neither file has is an error; with
// no files, or no such default profile, p is nil.
func loadProfile(getenv func(string) string) (p awsProfile, name string, err error) {
	name, from := first(getenv, "AWS_PROFILE", "AWS_DEFAULT_PROFILE")
	named := name != ""
	if !named {
		name = "default"
	}
	home, _ := os.UserHomeDir()
	if h := getenv("HOME"); h != "" {
		home = h
	}
	cfgPath, credPath := getenv("AWS_CONFIG_FILE"), getenv("AWS_SHARED_CREDENTIALS_FILE")
	if cfgPath == "" {
		cfgPath = filepath.Join(home, ".aws", "config")
	}
	if credPath == "" {
		credPath = filepath.Join(home, ".aws", "credentials")
	}
	section := "profile " + name
	if name == "default" {
		section = "default"
	}
	cfg, err := iniSection(cfgPath, section, name)
	if err != nil {
		return nil, "", err
	}
	cred, err := iniSection(credPath, name, "")
	if err != nil {
		return nil, "", err
	}
	if cfg == nil && cred == nil {
		if named {
			return nil, "", fmt.Errorf("%s: profile %q is in neither %s nor %s", from, name, cfgPath, credPath)
		}
		return nil, "", nil
	}
	p = awsProfile{}
	for k, v := range cfg {
		p[k] = v
	}
	for k, v := range cred {
		p[k] = v
	}
	return p, name, nil
}

// iniSection reads the keys of section [section] (or [alt]) of the INI
// file at path: nil when the file or the section is not there.
func iniSection(path, section, alt string) (map[string]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out map[string]string
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			if !strings.HasSuffix(line, "]") {
				return nil, fmt.Errorf("%s:%d: a section header without its ]", path, n)
			}
			h := strings.Join(strings.Fields(line[1:len(line)-1]), " ")
			in = h == section || alt != "" && h == alt && alt == "default"
			if in && out == nil {
				out = map[string]string{}
			}
		case in:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				continue // a nested value's line (s3 = …), which awl reads none of
			}
			out[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
	}
	return out, sc.Err()
}

// webIdentity takes credentials for role from STS's
// AssumeRoleWithWebIdentity with the token in tokenFile, read again at
// each refresh (the OIDC token a CI job is given expires too).
func (s *awsSetup) webIdentity(getenv func(string) string, hc *http.Client, tokenFile, role, session, from string) error {
	if tokenFile == "" || role == "" {
		return fmt.Errorf("a web identity needs both a token file and a role ARN (%s)", from)
	}
	tok, err := readToken(tokenFile)
	if err != nil {
		return err
	}
	s.secrets.add("AWS_WEB_IDENTITY_TOKEN_FILE", tok)
	if session == "" {
		session = fmt.Sprintf("awl-%d", time.Now().UnixNano())
	}
	endpoint, _ := first(getenv, "AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL")
	if endpoint == "" {
		endpoint = "https://sts.amazonaws.com"
		if s.region != "" {
			endpoint = "https://sts." + s.region + ".amazonaws.com"
		}
	}
	s.creds = &webIdentity{hc: hc, endpoint: endpoint, tokenFile: tokenFile, role: role, session: session, secrets: s.secrets}
	s.source = "the web identity of " + role + " (" + from + ")"
	return nil
}

func readToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("web identity token: %w", err)
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" {
		return "", fmt.Errorf("web identity token: %s is empty", path)
	}
	return tok, nil
}

// webIdentity is STS's AssumeRoleWithWebIdentity, an unsigned query: the
// token is the credential. aws-sdk-go-v2's stscreds would do it with the
// whole STS client, whose package initialisers cost every start of awl
// 1,300 allocations (docs/performance.md).
type webIdentity struct {
	hc                                 *http.Client
	endpoint, tokenFile, role, session string
	secrets                            *secretSet
}

// xmlText is the text of the first element named tag in an STS answer,
// its five predefined entities decoded: the answers' values are flat
// text. (encoding/xml's initialiser would cost every start 18 KB.)
func xmlText(doc, tag string) string {
	_, rest, ok := strings.Cut(doc, "<"+tag+">")
	if !ok {
		return ""
	}
	v, _, ok := strings.Cut(rest, "</"+tag+">")
	if !ok {
		return ""
	}
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&apos;", "'", "&amp;", "&").Replace(strings.TrimSpace(v))
}

// Retrieve implements aws.CredentialsProvider.
func (w *webIdentity) Retrieve(ctx context.Context) (aws.Credentials, error) {
	tok, err := readToken(w.tokenFile)
	if err != nil {
		return aws.Credentials{}, err
	}
	form := url.Values{"Action": {"AssumeRoleWithWebIdentity"}, "Version": {"2011-06-15"},
		"RoleArn": {w.role}, "RoleSessionName": {w.session}, "WebIdentityToken": {tok}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return aws.Credentials{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := w.hc.Do(req)
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("STS AssumeRoleWithWebIdentity: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("STS AssumeRoleWithWebIdentity: %w", err)
	}
	doc := string(body)
	if resp.StatusCode != http.StatusOK {
		code, msg := xmlText(doc, "Code"), xmlText(doc, "Message")
		if code == "" {
			code, msg = resp.Status, strings.TrimSpace(doc)
		}
		return aws.Credentials{}, fmt.Errorf("STS AssumeRoleWithWebIdentity for %s: %s: %s", w.role, code, msg)
	}
	id, secret, token := xmlText(doc, "AccessKeyId"), xmlText(doc, "SecretAccessKey"), xmlText(doc, "SessionToken")
	if id == "" || secret == "" {
		return aws.Credentials{}, fmt.Errorf("STS AssumeRoleWithWebIdentity: an answer without credentials")
	}
	expires, err := time.Parse(time.RFC3339, xmlText(doc, "Expiration"))
	w.secrets.add("AWS_WEB_IDENTITY_TOKEN_FILE", tok) // the keys: recording
	return aws.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: token,
		Source: "AssumeRoleWithWebIdentity", CanExpire: err == nil, Expires: expires}, nil
}
