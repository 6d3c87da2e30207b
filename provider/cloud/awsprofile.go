package cloud

import (
	"cmp"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/processcreds"
)

// maxRoleChain bounds a chain of source_profile roles, as the AWS CLI
// does not but a cycle must be stopped: profiles that name each other.
const maxRoleChain = 10

// profileCreds returns the credentials profile name (p) gives, in the
// AWS SDKs' order: a role (role_arn) assumed with the credentials of
// source_profile or credential_source; the profile's keys; a web identity
// (web_identity_token_file and role_arn); IAM Identity Center
// (sso_session, or the older sso_start_url) with the token `aws sso
// login` cached; a credential_process. nil, with no error, when it names
// none of them (the machine's credentials are next). chain holds the
// profiles a source_profile chain came through.
func (s *awsSetup) profileCreds(getenv func(string) string, hc *http.Client, p awsProfile, name string, chain []string) (aws.CredentialsProvider, string, error) {
	where := fmt.Sprintf("profile %q", name)
	if p["mfa_serial"] != "" {
		return nil, "", fmt.Errorf("%s asks for an MFA code (mfa_serial), which awl cannot prompt for: export credentials from a session that has it (aws configure export-credentials --format env)", where)
	}
	keys := p["aws_access_key_id"] != "" && p["aws_secret_access_key"] != ""
	switch {
	case p["role_arn"] != "" && p["web_identity_token_file"] == "":
		src, srcName, err := s.roleSource(getenv, hc, p, name, chain)
		if err != nil {
			return nil, "", err
		}
		role := &assumeRole{sts: s.sts(getenv, hc), source: aws.NewCredentialsCache(recording{src, s.secrets}), signer: v4.NewSigner(),
			role: p["role_arn"], session: sessionName(p["role_session_name"]), externalID: p["external_id"]}
		if d := p["duration_seconds"]; d != "" {
			if role.duration, err = strconv.Atoi(d); err != nil || role.duration < 900 {
				return nil, "", fmt.Errorf("%s: duration_seconds %q is not a number of seconds of at least 900", where, d)
			}
		}
		return role, fmt.Sprintf("the role %s (%s), assumed with %s", p["role_arn"], where, srcName), nil
	case keys:
		s.secrets.add("AWS_SECRET_ACCESS_KEY", p["aws_secret_access_key"])
		s.secrets.add("AWS_SESSION_TOKEN", p["aws_session_token"])
		return credentials.NewStaticCredentialsProvider(p["aws_access_key_id"], p["aws_secret_access_key"], p["aws_session_token"]), where, nil
	case p["web_identity_token_file"] != "":
		return s.webIdentity(getenv, hc, p["web_identity_token_file"], p["role_arn"], p["role_session_name"], where)
	case p["sso_session"] != "" || p["sso_start_url"] != "":
		return s.sso(getenv, hc, p, name)
	case p["credential_process"] != "":
		return processCreds(p["credential_process"]), where + "'s credential_process", nil
	case p["login_session"] != "":
		return nil, "", fmt.Errorf("%s uses login_session (aws login), which awl does not read: export the credentials it gives (aws configure export-credentials --format env)", where)
	}
	return nil, "", nil
}

// roleSource is the credentials a role of profile name (p) is assumed
// with: source_profile's (the profile's own keys when it names itself),
// or credential_source's (Environment, Ec2InstanceMetadata,
// EcsContainer).
func (s *awsSetup) roleSource(getenv func(string) string, hc *http.Client, p awsProfile, name string, chain []string) (aws.CredentialsProvider, string, error) {
	where := fmt.Sprintf("profile %q", name)
	src, cs := p["source_profile"], p["credential_source"]
	switch {
	case src != "" && cs != "":
		return nil, "", fmt.Errorf("%s has both source_profile and credential_source: keep one", where)
	case src == name:
		if p["aws_access_key_id"] == "" || p["aws_secret_access_key"] == "" {
			return nil, "", fmt.Errorf("%s is its own source_profile but has no aws_access_key_id and aws_secret_access_key", where)
		}
		s.secrets.add("AWS_SECRET_ACCESS_KEY", p["aws_secret_access_key"])
		s.secrets.add("AWS_SESSION_TOKEN", p["aws_session_token"])
		return credentials.NewStaticCredentialsProvider(p["aws_access_key_id"], p["aws_secret_access_key"], p["aws_session_token"]), where + "'s keys", nil
	case src != "":
		chain = append(chain, name)
		for _, c := range chain {
			if c == src || len(chain) > maxRoleChain {
				return nil, "", fmt.Errorf("profile %q: the source_profile chain %s loops or is over %d profiles long", chain[0], strings.Join(append(chain, src), " → "), maxRoleChain)
			}
		}
		f := sharedFiles(getenv)
		sp, err := f.profile(src)
		if err != nil {
			return nil, "", err
		}
		if sp == nil {
			return nil, "", fmt.Errorf("%s: source_profile %q is in neither %s nor %s", where, src, f.config, f.credentials)
		}
		c, from, err := s.profileCreds(getenv, hc, sp, src, chain)
		if err == nil && c == nil {
			err = fmt.Errorf("%s: source_profile %q gives no credentials", where, src)
		}
		return c, from, err
	}
	var c aws.CredentialsProvider
	var from string
	switch cs {
	case "Environment":
		id, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
		if id != "" && secret != "" {
			c, from = credentials.NewStaticCredentialsProvider(id, secret, getenv("AWS_SESSION_TOKEN")), "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
		}
	case "Ec2InstanceMetadata":
		c, from = instance(getenv, hc)
	case "EcsContainer":
		c, from = container(getenv, hc)
	case "":
		return nil, "", fmt.Errorf("%s has role_arn but no source_profile, credential_source or web_identity_token_file to assume it with", where)
	default:
		return nil, "", fmt.Errorf("%s: credential_source %q is none of Environment, Ec2InstanceMetadata and EcsContainer", where, cs)
	}
	if c == nil {
		return nil, "", fmt.Errorf("%s: credential_source %s gives no credentials here", where, cs)
	}
	return c, from, nil
}

// assumeRole is STS's AssumeRole, signed with the source credentials.
type assumeRole struct {
	sts                       stsEndpoint
	source                    aws.CredentialsProvider
	signer                    *v4.Signer
	role, session, externalID string
	duration                  int
}

// Retrieve implements aws.CredentialsProvider.
func (a *assumeRole) Retrieve(ctx context.Context) (aws.Credentials, error) {
	src, err := a.source.Retrieve(ctx)
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("the source credentials of %s: %w", a.role, err)
	}
	form := url.Values{"Action": {"AssumeRole"}, "RoleArn": {a.role}, "RoleSessionName": {a.session}}
	if a.externalID != "" {
		form.Set("ExternalId", a.externalID)
	}
	if a.duration > 0 {
		form.Set("DurationSeconds", strconv.Itoa(a.duration))
	}
	return a.sts.call(ctx, form, a.role, &src, a.signer)
}

// processCreds runs a profile's credential_process, as the AWS SDKs do
// (aws-sdk-go-v2's processcreds reads its answer): through the shell,
// with awl's environment, its errors and prompts on awl's stderr, but not
// awl's stdin, which is the prompt's.
func processCreds(command string) aws.CredentialsProvider {
	return processcreds.NewProviderCommand(processcreds.NewCommandBuilderFunc(func(ctx context.Context) (*exec.Cmd, error) {
		shell := []string{"sh", "-c"}
		if runtime.GOOS == "windows" {
			shell = []string{"cmd.exe", "/C"}
		}
		cmd := exec.CommandContext(ctx, shell[0], append(shell[1:], command)...)
		cmd.Env = os.Environ()
		cmd.Stderr = os.Stderr
		return cmd, nil
	}))
}

// sso is IAM Identity Center: the role sso_role_name in account
// sso_account_id, whose credentials the portal gives for the access token
// `aws sso login` cached in ~/.aws/sso/cache (under the SHA-1 of the
// sso_session's name, or of the start URL of the older form).
func (s *awsSetup) sso(getenv func(string) string, hc *http.Client, p awsProfile, name string) (aws.CredentialsProvider, string, error) {
	where := fmt.Sprintf("profile %q", name)
	f := sharedFiles(getenv)
	startURL, region, key, login := p["sso_start_url"], p["sso_region"], p["sso_start_url"], "aws sso login --profile "+name
	if sess := p["sso_session"]; sess != "" {
		sec, err := iniSection(f.config, "sso-session "+sess, "")
		if err != nil {
			return nil, "", err
		}
		if sec == nil {
			return nil, "", fmt.Errorf("%s: sso_session %q has no [sso-session %s] section in %s", where, sess, sess, f.config)
		}
		startURL, region, key, login = sec["sso_start_url"], sec["sso_region"], sess, "aws sso login --sso-session "+sess
	}
	var missing []string
	for k, v := range map[string]string{"sso_start_url": startURL, "sso_region": region, "sso_account_id": p["sso_account_id"], "sso_role_name": p["sso_role_name"]} {
		if v == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, "", fmt.Errorf("%s uses IAM Identity Center but has no %s", where, strings.Join(missing, ", "))
	}
	sum := sha1.Sum([]byte(key))
	r := &ssoRole{hc: hc, cache: filepath.Join(f.home, ".aws", "sso", "cache", hex.EncodeToString(sum[:])+".json"),
		account: p["sso_account_id"], role: p["sso_role_name"], login: login, secrets: s.secrets}
	r.endpoint, _ = first(getenv, "AWS_ENDPOINT_URL_SSO", "AWS_ENDPOINT_URL")
	if r.endpoint == "" {
		r.endpoint = "https://portal.sso." + region + ".amazonaws.com"
	}
	r.oidc, _ = first(getenv, "AWS_ENDPOINT_URL_SSO_OIDC", "AWS_ENDPOINT_URL")
	if r.oidc == "" {
		r.oidc = "https://oidc." + region + ".amazonaws.com"
	}
	return r, fmt.Sprintf("IAM Identity Center's role %s in account %s (%s)", r.role, r.account, where), nil
}

// ssoRole is the SSO portal's GetRoleCredentials for the cached token.
// The token is read again at each refresh (a later `aws sso login`
// renews it); an expired one that came with a refresh token (an
// sso_session's) is refreshed at the SSO OIDC service's CreateToken and
// written back, as the AWS SDKs do.
type ssoRole struct {
	hc                                          *http.Client
	endpoint, oidc, cache, account, role, login string
	secrets                                     *secretSet
}

// ssoToken is the cache file's fields awl reads.
type ssoToken struct {
	AccessToken  string `json:"accessToken"`
	ExpiresAt    string `json:"expiresAt"`
	RefreshToken string `json:"refreshToken"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
}

// token reads the cached token, refreshed when it has expired and can be.
func (r *ssoRole) token(ctx context.Context) (string, error) {
	data, err := os.ReadFile(r.cache)
	if err != nil {
		return "", fmt.Errorf("no IAM Identity Center token cached (%v): run `%s`", err, r.login)
	}
	var tok ssoToken
	if err := json.Unmarshal(data, &tok); err != nil {
		return "", fmt.Errorf("%s: %v: run `%s`", r.cache, err, r.login)
	}
	for _, v := range []string{tok.AccessToken, tok.RefreshToken, tok.ClientSecret} {
		r.secrets.add("AWS_SSO_TOKEN", v)
	}
	expires, err := time.Parse(time.RFC3339, tok.ExpiresAt)
	switch {
	case tok.AccessToken == "" || err != nil:
		return "", fmt.Errorf("%s holds no access token with its expiry: run `%s`", r.cache, r.login)
	case time.Now().Before(expires):
		return tok.AccessToken, nil
	case tok.RefreshToken == "" || tok.ClientID == "" || tok.ClientSecret == "":
		return "", fmt.Errorf("the IAM Identity Center token cached in %s expired at %s: run `%s`", r.cache, expires.UTC().Format(time.RFC3339), r.login)
	}
	fresh, err := r.refresh(ctx, tok, data)
	if err != nil {
		return "", fmt.Errorf("the IAM Identity Center token cached in %s expired at %s and could not be refreshed (%v): run `%s`", r.cache, expires.UTC().Format(time.RFC3339), err, r.login)
	}
	return fresh, nil
}

// refresh is SSO OIDC's CreateToken with the refresh token; the new
// token is written back to the cache file (data, its other fields kept),
// whole or not at all.
func (r *ssoRole) refresh(ctx context.Context, tok ssoToken, data []byte) (string, error) {
	body, _ := json.Marshal(map[string]string{"clientId": tok.ClientID, "clientSecret": tok.ClientSecret, "grantType": "refresh_token", "refreshToken": tok.RefreshToken})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(r.oidc, "/")+"/token", strings.NewReader(string(body)))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	var out struct {
		AccessToken  string `json:"accessToken"`
		ExpiresIn    int64  `json:"expiresIn"`
		RefreshToken string `json:"refreshToken"`
		Error        string `json:"error"`
		Description  string `json:"error_description"`
	}
	json.Unmarshal(answer, &out)
	if resp.StatusCode != http.StatusOK || out.AccessToken == "" {
		return "", fmt.Errorf("CreateToken: %s: %s %s", resp.Status, out.Error, out.Description)
	}
	r.secrets.add("AWS_SSO_TOKEN", out.AccessToken)
	r.secrets.add("AWS_SSO_TOKEN", out.RefreshToken)
	var file map[string]json.RawMessage
	if json.Unmarshal(data, &file) != nil {
		file = map[string]json.RawMessage{}
	}
	set := func(k, v string) { file[k], _ = json.Marshal(v) }
	set("accessToken", out.AccessToken)
	set("expiresAt", time.Now().Add(time.Duration(out.ExpiresIn)*time.Second).UTC().Format(time.RFC3339))
	if out.RefreshToken != "" {
		set("refreshToken", out.RefreshToken)
	}
	updated, _ := json.MarshalIndent(file, "", "  ")
	return out.AccessToken, writeFileAtomic(r.cache, updated)
}

// writeFileAtomic replaces path with data through a temporary file in
// its directory, keeping its mode: a reader sees the old file or the
// new, never half of one.
func writeFileAtomic(path string, data []byte) error {
	mode := os.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".awl-sso-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// Retrieve implements aws.CredentialsProvider.
func (r *ssoRole) Retrieve(ctx context.Context) (aws.Credentials, error) {
	access, err := r.token(ctx)
	if err != nil {
		return aws.Credentials{}, err
	}
	q := url.Values{"account_id": {r.account}, "role_name": {r.role}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(r.endpoint, "/")+"/federation/credentials?"+q.Encode(), nil)
	if err != nil {
		return aws.Credentials{}, err
	}
	req.Header.Set("x-amz-sso_bearer_token", access)
	resp, err := r.hc.Do(req)
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("IAM Identity Center GetRoleCredentials: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("IAM Identity Center GetRoleCredentials: %w", err)
	}
	var out struct {
		Message string `json:"message"`
		Creds   struct {
			AccessKeyID     string `json:"accessKeyId"`
			SecretAccessKey string `json:"secretAccessKey"`
			SessionToken    string `json:"sessionToken"`
			Expiration      int64  `json:"expiration"`
		} `json:"roleCredentials"`
	}
	json.Unmarshal(body, &out)
	if resp.StatusCode != http.StatusOK {
		typ := resp.Header.Get("X-Amzn-Errortype")
		typ, _, _ = strings.Cut(typ, ":")
		return aws.Credentials{}, fmt.Errorf("IAM Identity Center GetRoleCredentials for %s in %s: %s: %s (run `%s` if the token was revoked)", r.role, r.account, cmp.Or(typ, resp.Status), out.Message, r.login)
	}
	c := out.Creds
	if c.AccessKeyID == "" || c.SecretAccessKey == "" {
		return aws.Credentials{}, fmt.Errorf("IAM Identity Center GetRoleCredentials: an answer without credentials")
	}
	return aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken,
		Source: "SSOProvider", CanExpire: true, Expires: time.UnixMilli(c.Expiration).UTC(), AccountID: r.account}, nil
}
