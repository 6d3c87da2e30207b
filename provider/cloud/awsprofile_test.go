package cloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/ssocreds"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sso"
	"github.com/aws/aws-sdk-go-v2/service/ssooidc"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/provider/cloud/cloudtest"
)

// baseCreds are a source profile's keys, which AssumeRole is signed with.
var baseCreds = aws.Credentials{AccessKeyID: "AKIABASEEXAMPLE0001", SecretAccessKey: "base-secret-SENTINEL-0123456789abcdef"}

// profileEnv is an environment whose shared config file is config (and
// credentials file creds), HOME a temporary directory, with more set.
func profileEnv(t *testing.T, config, creds string, more map[string]string) (func(string) string, string) {
	t.Helper()
	dir := t.TempDir()
	vars := map[string]string{"HOME": dir, "AWS_CONFIG_FILE": write(t, dir, "config", config),
		"AWS_SHARED_CREDENTIALS_FILE": write(t, dir, "credentials", creds), "AWS_REGION": "us-east-1"}
	for k, v := range more {
		vars[k] = v
	}
	getenv := testEnv(t, vars)
	return func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return getenv(k)
	}, dir
}

// bedrockOK streams one recorded answer through a Bedrock provider made
// with getenv, whose requests fake checks against creds.
func bedrockOK(t *testing.T, getenv func(string) string, creds func() aws.Credentials) provider.Provider {
	t.Helper()
	fake := cloudtest.NewBedrock("us-east-1", aws.Credentials{})
	t.Cleanup(fake.Close)
	fake.Creds = creds
	fake.Enqueue(cloudtest.Answer{Frames: cloudtest.Frames(recorded(t, "text-max-tokens.sse"))})
	p := newBedrockProvider(t, getenv, fake.URL, 0)
	if _, err := p.Stream(context.Background(), hello(), nil); err != nil {
		t.Fatal(err)
	}
	if r := fake.Requests(); len(r) != 1 || r[0].SigErr != nil {
		t.Fatalf("requests %+v", r)
	}
	return p
}

func configErrOf(t *testing.T, getenv func(string) string) string {
	t.Helper()
	_, err := provider.New(NameBedrock, provider.Options{BaseURL: "http://127.0.0.1:1", Getenv: getenv})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindConfig {
		t.Fatalf("err %v, want a config error", err)
	}
	return pe.Message
}

func held(p provider.Provider) map[string]bool {
	m := map[string]bool{}
	for _, s := range provider.Secrets(p) {
		m[s.Value] = true
	}
	return m
}

// TestBedrockAssumeRole: a profile's role_arn with source_profile is
// assumed at STS (on 127.0.0.1) with a request signed by the source
// profile's keys, as STS checks it; the request is the one aws-sdk-go-v2's
// stscreds sends, field for field; the role's credentials sign Bedrock's
// requests and join the redactor. A signature STS refuses, a
// source_profile loop and a role with no source are config errors that
// say so.
func TestBedrockAssumeRole(t *testing.T) {
	const role = "arn:aws:iam::123456789012:role/deploy"
	fake := cloudtest.NewSTS("us-east-1")
	defer fake.Close()
	fake.Caller, fake.Lifetime = baseCreds, time.Hour
	config := "[profile ci]\nrole_arn = " + role + "\nsource_profile = base\nrole_session_name = ci-run\nexternal_id = ext-42\nduration_seconds = 1800\n" +
		"[profile self]\nrole_arn = " + role + "\nsource_profile = self\naws_access_key_id = " + baseCreds.AccessKeyID + "\naws_secret_access_key = " + baseCreds.SecretAccessKey + "\n" +
		"[profile loop1]\nrole_arn = " + role + "\nsource_profile = loop2\n[profile loop2]\nrole_arn = " + role + "\nsource_profile = loop1\n" +
		"[profile elsewhere]\nrole_arn = " + role + "\ncredential_source = Somewhere\n" +
		"[profile nosource]\nrole_arn = " + role + "\n[profile mfa]\nrole_arn = " + role + "\nsource_profile = base\nmfa_serial = arn:aws:iam::1:mfa/x\n"
	creds := "[base]\naws_access_key_id = " + baseCreds.AccessKeyID + "\naws_secret_access_key = " + baseCreds.SecretAccessKey + "\n"
	env := func(profile string, more map[string]string) func(string) string {
		m := map[string]string{"AWS_PROFILE": profile, "AWS_ENDPOINT_URL_STS": fake.URL}
		for k, v := range more {
			m[k] = v
		}
		getenv, _ := profileEnv(t, config, creds, m)
		return getenv
	}

	p := bedrockOK(t, env("ci", nil), fake.Latest)
	calls := fake.Calls()
	if len(calls) != 1 || calls[0].Err != nil || calls[0].Action != "AssumeRole" || calls[0].RoleArn != role ||
		calls[0].SessionName != "ci-run" || calls[0].ExternalID != "ext-42" || calls[0].Form.Get("DurationSeconds") != "1800" {
		t.Fatalf("STS calls %+v", calls)
	}
	h := held(p)
	if !h[fake.Latest().SecretAccessKey] || !h[fake.Latest().SessionToken] || !h[baseCreds.SecretAccessKey] {
		t.Errorf("the role's and the source's secrets are not all for the redactor")
	}

	// aws-sdk-go-v2's own AssumeRole against the same STS: accepted, and
	// its form is awl's.
	client := sts.New(sts.Options{Region: "us-east-1", BaseEndpoint: aws.String(fake.URL),
		Credentials: credentials.NewStaticCredentialsProvider(baseCreds.AccessKeyID, baseCreds.SecretAccessKey, "")})
	sdk := stscreds.NewAssumeRoleProvider(client, role, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName, o.ExternalID, o.Duration = "ci-run", aws.String("ext-42"), 30*time.Minute
	})
	if _, err := sdk.Retrieve(context.Background()); err != nil {
		t.Fatalf("stscreds against the fake STS: %v", err)
	}
	calls = fake.Calls()
	if got, want := calls[0].Form.Encode(), calls[1].Form.Encode(); got != want || calls[0].ContentType != calls[1].ContentType[:len(calls[0].ContentType)] {
		t.Errorf("awl's AssumeRole:\n%s %s\nstscreds':\n%s %s", got, calls[0].ContentType, want, calls[1].ContentType)
	}

	// A profile that is its own source.
	bedrockOK(t, env("self", nil), fake.Latest)
	if n := len(fake.Calls()); n != 3 || fake.Calls()[2].Err != nil {
		t.Fatalf("STS calls %+v", fake.Calls())
	}

	for profile, want := range map[string]string{
		"loop1":     `the source_profile chain loop1 → loop2 → loop1 loops`,
		"nosource":  `profile "nosource" has role_arn but no source_profile, credential_source or web_identity_token_file`,
		"mfa":       `profile "mfa" asks for an MFA code (mfa_serial)`,
		"elsewhere": `credential_source "Somewhere" is none of Environment, Ec2InstanceMetadata and EcsContainer`,
	} {
		if msg := configErrOf(t, env(profile, nil)); !strings.Contains(msg, want) {
			t.Errorf("%s: %s, want %q", profile, msg, want)
		}
	}
	// Source keys STS does not know: its refusal, in its words.
	fake.Caller = testCreds
	if msg := configErrOf(t, env("ci", nil)); !strings.Contains(msg, "STS AssumeRole for "+role+": SignatureDoesNotMatch") {
		t.Errorf("a refused signature: %s", msg)
	}
}

// TestBedrockSSO: a profile of IAM Identity Center (sso_session and its
// [sso-session] section, or the older sso_start_url) takes the token
// `aws sso login` cached under ~/.aws/sso/cache, at the path
// aws-sdk-go-v2's ssocreds computes, to the portal (on 127.0.0.1, which
// checks the bearer token, the account and the role as the portal does)
// for the role's credentials, as ssocreds asks for them. The cached
// token, its refresh token and client secret, and the role's credentials
// join the redactor. An expired token is refreshed at SSO OIDC's
// CreateToken (the fake checks the client and the refresh token) with
// the request ssocreds' token provider sends, and written back. No cached
// token, an expired one without a refresh token or whose refresh is
// refused, and a token the portal refuses are config errors naming `aws
// sso login`.
func TestBedrockSSO(t *testing.T) {
	const account, roleName = "111122223333", "Developer"
	portal := cloudtest.NewSSO("sso-access-token-SENTINEL-aoaAAAAAGcNjZ", account, roleName)
	defer portal.Close()
	config := "[profile dev]\nsso_session = corp\nsso_account_id = " + account + "\nsso_role_name = " + roleName + "\nregion = eu-west-1\n" +
		"[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = us-east-1\nsso_registration_scopes = sso:account:access\n" +
		"[profile legacy]\nsso_start_url = https://old.awsapps.com/start\nsso_region = us-east-1\nsso_account_id = " + account + "\nsso_role_name = " + roleName + "\n" +
		"[profile half]\nsso_session = corp\n"
	getenv, home := profileEnv(t, config, "", map[string]string{"AWS_PROFILE": "dev", "AWS_ENDPOINT_URL_SSO": portal.URL, "AWS_ENDPOINT_URL_SSO_OIDC": portal.URL})
	t.Setenv("HOME", home) // ssocreds finds the cache from the process's home
	cacheFile := func(key string) string {
		path, err := ssocreds.StandardCachedTokenFilepath(key)
		if err != nil || !strings.HasPrefix(path, home) {
			t.Fatalf("ssocreds' cache path %q, %v", path, err)
		}
		os.MkdirAll(filepath.Dir(path), 0o700)
		return path
	}
	portal.ClientID, portal.ClientSecret, portal.RefreshToken = "client-id-1", "client-secret-SENTINEL-xyz", "refresh-token-SENTINEL-abc"
	// cache writes what `aws sso login` leaves: with an sso_session, the
	// client's registration and a refresh token too (refresh "").
	cache := func(key, token string, expires time.Time, refresh string) string {
		path := cacheFile(key)
		more := ""
		if refresh != "" {
			more = fmt.Sprintf(`,"clientId":"client-id-1","clientSecret":"client-secret-SENTINEL-xyz","registrationExpiresAt":"2099-01-01T00:00:00Z","refreshToken":%q`, refresh)
		}
		write(t, filepath.Dir(path), filepath.Base(path), fmt.Sprintf(`{"startUrl":"https://corp.awsapps.com/start","region":"us-east-1","accessToken":%q,"expiresAt":%q%s}`,
			token, expires.UTC().Format(time.RFC3339), more))
		return path
	}
	path := cache("corp", portal.Token(), time.Now().Add(time.Hour), portal.RefreshToken)

	p := bedrockOK(t, getenv, portal.Latest)
	h := held(p)
	for _, v := range []string{portal.Token(), "refresh-token-SENTINEL-abc", "client-secret-SENTINEL-xyz", portal.Latest().SecretAccessKey, portal.Latest().SessionToken} {
		if !h[v] {
			t.Errorf("%q is not for the redactor", v)
		}
	}
	// aws-sdk-go-v2's SSO provider asks the portal the same.
	client := sso.New(sso.Options{Region: "us-east-1", BaseEndpoint: aws.String(portal.URL), HTTPClient: http.DefaultClient})
	if _, err := ssocreds.New(client, account, roleName, "https://corp.awsapps.com/start", func(o *ssocreds.Options) { o.CachedTokenFilepath = path }).Retrieve(context.Background()); err != nil {
		t.Fatalf("ssocreds against the fake portal: %v", err)
	}
	calls := portal.Calls()
	if len(calls) != 2 || calls[0] != calls[1] || calls[0].Status != http.StatusOK {
		t.Errorf("awl's GetRoleCredentials and ssocreds' differ, or failed: %+v", calls)
	}

	// The older form: the cache is under the start URL's hash.
	with := func(profile string) func(string) string {
		return func(k string) string {
			if k == "AWS_PROFILE" {
				return profile
			}
			return getenv(k)
		}
	}
	cache("https://old.awsapps.com/start", portal.Token(), time.Now().Add(time.Hour), "")
	bedrockOK(t, with("legacy"), portal.Latest)

	// An expired token with its refresh token: refreshed at SSO OIDC's
	// CreateToken, as ssocreds' token provider does, the new token sent to
	// the portal and written back over the cache file, the file's other
	// fields and mode kept.
	before := portal.Token()
	cache("corp", "expired-token-0123456789", time.Now().Add(-time.Minute), portal.RefreshToken)
	p = bedrockOK(t, getenv, portal.Latest)
	if portal.Token() == before || len(portal.Refreshes) != 1 {
		t.Fatalf("no refresh: %v", portal.Refreshes)
	}
	var file map[string]string
	data, _ := os.ReadFile(path)
	json.Unmarshal(data, &file)
	fi, _ := os.Stat(path)
	if file["accessToken"] != portal.Token() || file["refreshToken"] != portal.RefreshToken || file["startUrl"] != "https://corp.awsapps.com/start" ||
		file["registrationExpiresAt"] != "2099-01-01T00:00:00Z" || fi.Mode().Perm() != 0o600 {
		t.Errorf("the cache file after the refresh (mode %v): %s", fi.Mode(), data)
	}
	if exp, err := time.Parse(time.RFC3339, file["expiresAt"]); err != nil || time.Until(exp) < 7*time.Hour {
		t.Errorf("expiresAt %q", file["expiresAt"])
	}
	if h := held(p); !h[portal.Token()] || !h[portal.RefreshToken] {
		t.Errorf("the refreshed tokens are not for the redactor")
	}
	cache("corp", "expired-token-0123456789", time.Now().Add(-time.Minute), portal.RefreshToken)
	oidc := ssooidc.New(ssooidc.Options{Region: "us-east-1", BaseEndpoint: aws.String(portal.URL), HTTPClient: http.DefaultClient})
	if _, err := ssocreds.NewSSOTokenProvider(oidc, path).RetrieveBearerToken(context.Background()); err != nil {
		t.Fatalf("ssocreds' token provider against the fake: %v", err)
	}
	ours, sdks := portal.Refreshes[0], portal.Refreshes[1]
	ours["refreshToken"], sdks["refreshToken"] = "", "" // each sent the refresh token it held, as it must
	if fmt.Sprint(ours) != fmt.Sprint(sdks) {
		t.Errorf("awl's CreateToken %v, ssocreds' %v", ours, sdks)
	}

	os.Remove(cacheFile("https://old.awsapps.com/start"))
	for _, tc := range []struct {
		profile, token string
		expires        time.Time
		refresh        string
		want           string
	}{
		{"legacy", "", time.Time{}, "", "no IAM Identity Center token cached"},
		{"dev", portal.Token(), time.Now().Add(-time.Minute), "", "expired at"},
		{"dev", portal.Token(), time.Now().Add(-time.Minute), "revoked-refresh-token", "could not be refreshed (CreateToken: 400 Bad Request: invalid_grant"},
		{"dev", "revoked-token-0123456789", time.Now().Add(time.Hour), "", "UnauthorizedException: Session token not found or invalid"},
		{"half", portal.Token(), time.Now().Add(time.Hour), "", `profile "half" uses IAM Identity Center but has no`},
	} {
		if tc.token != "" {
			cache("corp", tc.token, tc.expires, tc.refresh)
		}
		msg := configErrOf(t, with(tc.profile))
		if !strings.Contains(msg, tc.want) || tc.profile != "half" && !strings.Contains(msg, "aws sso login --") {
			t.Errorf("%s: %s, want %q and the login command", tc.profile, msg, tc.want)
		}
	}
}

// TestBedrockCredentialProcess: a profile's credential_process is run
// through the shell and its answer (the AWS CLI's process credentials,
// version 1) signs the requests, its secrets for the redactor; a process
// that fails is a config error with its words.
func TestBedrockCredentialProcess(t *testing.T) {
	c := cloudtest.Issue(7)
	dir := t.TempDir()
	script := write(t, dir, "creds.sh", fmt.Sprintf("#!/bin/sh\necho 'opening the vault' >&2\nprintf '%%s' '{\"Version\":1,\"AccessKeyId\":%q,\"SecretAccessKey\":%q,\"SessionToken\":%q,\"Expiration\":%q}'\n",
		c.AccessKeyID, c.SecretAccessKey, c.SessionToken, time.Now().Add(time.Hour).UTC().Format(time.RFC3339)))
	os.Chmod(script, 0o700)
	config := "[profile vault]\ncredential_process = " + script + " --role ci\n[profile broken]\ncredential_process = sh -c 'echo vault sealed >&2; exit 3'\n"
	getenv, _ := profileEnv(t, config, "", map[string]string{"AWS_PROFILE": "vault"})
	p := bedrockOK(t, getenv, func() aws.Credentials { return c })
	if h := held(p); !h[c.SecretAccessKey] || !h[c.SessionToken] {
		t.Errorf("the process's credentials are not for the redactor")
	}
	getenv, _ = profileEnv(t, config, "", map[string]string{"AWS_PROFILE": "broken"})
	if msg := configErrOf(t, getenv); !strings.Contains(msg, "credential_process") || !strings.Contains(msg, "exit status 3") {
		t.Errorf("a failing process: %s", msg)
	}
}

// TestWebIdentityMatchesTheSDK: awl's AssumeRoleWithWebIdentity (the
// OIDC token a CI job is given, AWS_WEB_IDENTITY_TOKEN_FILE and
// AWS_ROLE_ARN) and aws-sdk-go-v2's stscreds web identity provider send
// the fake STS the same form, unsigned; a profile's
// web_identity_token_file and role_arn are the same exchange.
func TestWebIdentityMatchesTheSDK(t *testing.T) {
	const role = "arn:aws:iam::123456789012:role/gha"
	fake := cloudtest.NewSTS("us-east-1")
	defer fake.Close()
	fake.WebIdentityToken, fake.Lifetime = "eyJhbGciOiJSUzI1NiJ9.gh-actions.sig", time.Hour
	dir := t.TempDir()
	tokenFile := write(t, dir, "oidc", fake.WebIdentityToken)
	getenv, _ := profileEnv(t, "[profile wi]\nrole_arn = "+role+"\nweb_identity_token_file = "+tokenFile+"\nrole_session_name = gha-run\n", "",
		map[string]string{"AWS_ENDPOINT_URL_STS": fake.URL, "AWS_ROLE_ARN": role, "AWS_WEB_IDENTITY_TOKEN_FILE": tokenFile, "AWS_ROLE_SESSION_NAME": "gha-run"})
	bedrockOK(t, getenv, fake.Latest)
	profile := func(k string) string {
		switch k {
		case "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_SESSION_NAME":
			return ""
		case "AWS_PROFILE":
			return "wi"
		}
		return getenv(k)
	}
	bedrockOK(t, profile, fake.Latest)
	client := sts.New(sts.Options{Region: "us-east-1", BaseEndpoint: aws.String(fake.URL), HTTPClient: http.DefaultClient})
	sdk := stscreds.NewWebIdentityRoleProvider(client, role, stscreds.IdentityTokenFile(tokenFile), func(o *stscreds.WebIdentityRoleOptions) { o.RoleSessionName = "gha-run" })
	if _, err := sdk.Retrieve(context.Background()); err != nil {
		t.Fatalf("stscreds against the fake STS: %v", err)
	}
	calls := fake.Calls()
	if len(calls) != 3 {
		t.Fatalf("STS calls %+v", calls)
	}
	for i, c := range calls {
		if c.Err != nil || c.Action != "AssumeRoleWithWebIdentity" || c.Form.Encode() != calls[2].Form.Encode() {
			t.Errorf("call %d: %+v, want the form stscreds sent: %s", i, c, calls[2].Form.Encode())
		}
	}
}
