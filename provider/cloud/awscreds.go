package cloud

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
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
// credentials files' profile (AWS_PROFILE, else default): a role assumed
// with another profile's or the machine's credentials, keys, a web
// identity, IAM Identity Center (SSO), or a credential process
// (profileCreds); the container's credentials endpoint (ECS, EKS Pod
// Identity); the EC2 instance metadata service, unless
// AWS_EC2_METADATA_DISABLED is true. The region is AWS_REGION, else
// AWS_DEFAULT_REGION, else the profile's.
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
		s.creds, s.source, err = s.webIdentity(getenv, hc, getenv("AWS_WEB_IDENTITY_TOKEN_FILE"), getenv("AWS_ROLE_ARN"), getenv("AWS_ROLE_SESSION_NAME"), "AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN")
	case prof != nil:
		s.creds, s.source, err = s.profileCreds(getenv, hc, prof, profName, nil)
		if err == nil && s.creds == nil {
			s.creds, s.source = s.machine(getenv, hc)
		}
	default:
		s.creds, s.source = s.machine(getenv, hc)
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
// runs on, when there are any to ask: nil when there are none.
func (s *awsSetup) machine(getenv func(string) string, hc *http.Client) (aws.CredentialsProvider, string) {
	if c, source := container(getenv, hc); c != nil {
		return c, source
	}
	return instance(getenv, hc)
}

// container is the container's credentials endpoint (ECS, EKS Pod
// Identity), nil when none is set.
func container(getenv func(string) string, hc *http.Client) (aws.CredentialsProvider, string) {
	full, rel := getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI"), getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
	if full == "" && rel == "" {
		return nil, ""
	}
	{
		endpoint := full
		if rel != "" {
			endpoint = "http://169.254.170.2" + rel
		}
		tok, tokFile := getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN"), getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")
		c := endpointcreds.New(endpoint, func(o *endpointcreds.Options) {
			o.HTTPClient = hc
			o.AuthorizationToken = tok
			if tokFile != "" {
				o.AuthorizationTokenProvider = endpointcreds.TokenProviderFunc(func() (string, error) {
					data, err := os.ReadFile(tokFile)
					return strings.TrimSpace(string(data)), err
				})
			}
		})
		return c, "the container credentials endpoint (AWS_CONTAINER_CREDENTIALS_" + map[bool]string{true: "RELATIVE_URI", false: "FULL_URI"}[rel != ""] + ")"
	}
}

// instance is the EC2 instance metadata service's role credentials, nil
// when AWS_EC2_METADATA_DISABLED is true.
func instance(getenv func(string) string, hc *http.Client) (aws.CredentialsProvider, string) {
	if strings.EqualFold(getenv("AWS_EC2_METADATA_DISABLED"), "true") {
		return nil, ""
	}
	opts := imds.Options{HTTPClient: hc, ClientEnableState: imds.ClientEnabled, Endpoint: getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT")}
	return ec2rolecreds.New(func(o *ec2rolecreds.Options) { o.Client = imds.New(opts) }), "the EC2 instance metadata service"
}

// awsFiles are the shared config and credentials files
// (AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/config and
// ~/.aws/credentials) and the home directory ~/.aws/sso/cache is under.
type awsFiles struct{ home, config, credentials string }

func sharedFiles(getenv func(string) string) awsFiles {
	home, _ := os.UserHomeDir()
	if h := getenv("HOME"); h != "" {
		home = h
	}
	f := awsFiles{home: home, config: getenv("AWS_CONFIG_FILE"), credentials: getenv("AWS_SHARED_CREDENTIALS_FILE")}
	if f.config == "" {
		f.config = filepath.Join(home, ".aws", "config")
	}
	if f.credentials == "" {
		f.credentials = filepath.Join(home, ".aws", "credentials")
	}
	return f
}

// profile reads profile name of the files: the credentials file's
// section wins key by key; nil when neither file has it.
func (f awsFiles) profile(name string) (awsProfile, error) {
	section := "profile " + name
	if name == "default" {
		section = "default"
	}
	cfg, err := iniSection(f.config, section, name)
	if err != nil {
		return nil, err
	}
	cred, err := iniSection(f.credentials, name, "")
	if err != nil || cfg == nil && cred == nil {
		return nil, err
	}
	p := awsProfile{}
	for k, v := range cfg {
		p[k] = v
	}
	for k, v := range cred {
		p[k] = v
	}
	return p, nil
}

// loadProfile reads the profile AWS_PROFILE names, else the default one.
// A profile named by AWS_PROFILE that neither file has is an error; with
// no files, or no such default profile, p is nil.
func loadProfile(getenv func(string) string) (p awsProfile, name string, err error) {
	name, from := first(getenv, "AWS_PROFILE", "AWS_DEFAULT_PROFILE")
	named := name != ""
	if !named {
		name = "default"
	}
	f := sharedFiles(getenv)
	if p, err = f.profile(name); err != nil {
		return nil, "", err
	}
	if p == nil && named {
		return nil, "", fmt.Errorf("%s: profile %q is in neither %s nor %s", from, name, f.config, f.credentials)
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
func (s *awsSetup) webIdentity(getenv func(string) string, hc *http.Client, tokenFile, role, session, from string) (aws.CredentialsProvider, string, error) {
	if tokenFile == "" || role == "" {
		return nil, "", fmt.Errorf("a web identity needs both a token file and a role ARN (%s)", from)
	}
	tok, err := readToken(tokenFile)
	if err != nil {
		return nil, "", err
	}
	s.secrets.add("AWS_WEB_IDENTITY_TOKEN_FILE", tok)
	w := &webIdentity{sts: s.sts(getenv, hc), tokenFile: tokenFile, role: role, session: sessionName(session), secrets: s.secrets}
	return w, "the web identity of " + role + " (" + from + ")", nil
}

// sessionName is the role session's name: the one configured, else one
// of awl's.
func sessionName(configured string) string {
	if configured != "" {
		return configured
	}
	return fmt.Sprintf("awl-%d", time.Now().UnixNano())
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

// stsEndpoint is where STS is asked: AWS_ENDPOINT_URL_STS, else
// AWS_ENDPOINT_URL, else the region's regional endpoint (the global one
// without a region), and the region a signed request is signed for.
//
// STS is spoken here, not through aws-sdk-go-v2's stscreds: that package
// links service/sts, whose endpoint and schema tables' initialisers cost
// every start of awl, a run on any provider, 1,350 allocations and
// 200 KB (GODEBUG=inittrace=1, 2026-12-07); the requests are the SDK's,
// which the tests check against stscreds itself (awsprofile_test.go).
type stsEndpoint struct {
	hc          *http.Client
	url, region string
}

func (s *awsSetup) sts(getenv func(string) string, hc *http.Client) stsEndpoint {
	e := stsEndpoint{hc: hc, region: cmp.Or(s.region, "us-east-1")}
	e.url, _ = first(getenv, "AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL")
	if e.url == "" {
		e.url = "https://sts.amazonaws.com"
		if s.region != "" {
			e.url = "https://sts." + s.region + ".amazonaws.com"
		}
	}
	return e
}

// call sends form (its Action and Version added) to STS, signed with
// creds unless they are nil (AssumeRoleWithWebIdentity is not signed),
// and reads the credentials of its answer, or its error, for role.
func (e stsEndpoint) call(ctx context.Context, form url.Values, role string, creds *aws.Credentials, signer *v4.Signer) (aws.Credentials, error) {
	action := form.Get("Action")
	form.Set("Version", "2011-06-15")
	body := form.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, strings.NewReader(body))
	if err != nil {
		return aws.Credentials{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if creds != nil {
		sum := sha256.Sum256([]byte(body))
		if err := signer.SignHTTP(ctx, *creds, req, hex.EncodeToString(sum[:]), "sts", e.region, time.Now()); err != nil {
			return aws.Credentials{}, err
		}
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("STS %s: %w", action, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("STS %s: %w", action, err)
	}
	doc := string(data)
	if resp.StatusCode != http.StatusOK {
		code, msg := xmlText(doc, "Code"), xmlText(doc, "Message")
		if code == "" {
			code, msg = resp.Status, strings.TrimSpace(doc)
		}
		return aws.Credentials{}, fmt.Errorf("STS %s for %s: %s: %s", action, role, code, msg)
	}
	id, secret, token := xmlText(doc, "AccessKeyId"), xmlText(doc, "SecretAccessKey"), xmlText(doc, "SessionToken")
	if id == "" || secret == "" {
		return aws.Credentials{}, fmt.Errorf("STS %s: an answer without credentials", action)
	}
	expires, err := time.Parse(time.RFC3339, xmlText(doc, "Expiration"))
	return aws.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: token,
		Source: action, CanExpire: err == nil, Expires: expires}, nil
}

// webIdentity is STS's AssumeRoleWithWebIdentity, an unsigned query: the
// token is the credential.
type webIdentity struct {
	sts                      stsEndpoint
	tokenFile, role, session string
	secrets                  *secretSet
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
	w.secrets.add("AWS_WEB_IDENTITY_TOKEN_FILE", tok) // the keys: recording
	form := url.Values{"Action": {"AssumeRoleWithWebIdentity"}, "RoleArn": {w.role}, "RoleSessionName": {w.session}, "WebIdentityToken": {tok}}
	return w.sts.call(ctx, form, w.role, nil, nil)
}
