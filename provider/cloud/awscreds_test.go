package cloud

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/provider/cloud/cloudtest"
)

// stsCreds are what the fake STS gives for a good token.
var stsCreds = aws.Credentials{AccessKeyID: "ASIASTSEXAMPLE", SecretAccessKey: "sts-secret-0123456789", SessionToken: "sts-session-token-abcdef"}

// fakeSTS answers AssumeRoleWithWebIdentity as STS does: the form's
// action, version, role and token are checked; a token it does not know
// is refused with STS's error document.
func fakeSTS(t *testing.T, role, token string) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		w.Header().Set("Content-Type", "text/xml")
		if r.Method != http.MethodPost || form.Get("Action") != "AssumeRoleWithWebIdentity" || form.Get("Version") != "2011-06-15" ||
			form.Get("RoleArn") != role || form.Get("RoleSessionName") == "" || r.Header.Get("Authorization") != "" {
			w.WriteHeader(400)
			fmt.Fprint(w, `<ErrorResponse><Error><Type>Sender</Type><Code>ValidationError</Code><Message>bad request</Message></Error></ErrorResponse>`)
			return
		}
		if form.Get("WebIdentityToken") != token {
			w.WriteHeader(400)
			fmt.Fprint(w, `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code><Message>Incorrect token audience</Message></Error><RequestId>c6104cbe</RequestId></ErrorResponse>`)
			return
		}
		fmt.Fprintf(w, `<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleWithWebIdentityResult>
    <SubjectFromWebIdentityToken>repo:octo/app:ref:refs/heads/main</SubjectFromWebIdentityToken>
    <Credentials>
      <SessionToken>%s</SessionToken>
      <SecretAccessKey>%s</SecretAccessKey>
      <Expiration>%s</Expiration>
      <AccessKeyId>%s</AccessKeyId>
    </Credentials>
  </AssumeRoleWithWebIdentityResult>
</AssumeRoleWithWebIdentityResponse>`, stsCreds.SessionToken, stsCreds.SecretAccessKey, time.Now().Add(time.Hour).UTC().Format(time.RFC3339), stsCreds.AccessKeyID)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBedrockWebIdentity: a GitHub Actions OIDC token in a file and a
// role, as aws-actions/configure-aws-credentials leaves them, are
// exchanged at STS (pointed at 127.0.0.1 by AWS_ENDPOINT_URL_STS) for
// credentials the request is signed with; their secrets join the run's
// redactor.
func TestBedrockWebIdentity(t *testing.T) {
	const role = "arn:aws:iam::123456789012:role/ci"
	dir := t.TempDir()
	tokenFile := write(t, dir, "token", "eyJhbGciOiJSUzI1NiJ9.oidc-token.sig\n")
	sts, calls := fakeSTS(t, role, "eyJhbGciOiJSUzI1NiJ9.oidc-token.sig")
	fake := cloudtest.NewBedrock("us-west-2", stsCreds)
	defer fake.Close()
	fake.Enqueue(cloudtest.Answer{Frames: cloudtest.Frames(recorded(t, "text-max-tokens.sse"))})
	getenv := testEnv(t, map[string]string{"AWS_WEB_IDENTITY_TOKEN_FILE": tokenFile, "AWS_ROLE_ARN": role,
		"AWS_REGION": "us-west-2", "AWS_ENDPOINT_URL_STS": sts.URL})
	p := newBedrockProvider(t, getenv, fake.URL, 0)
	if _, err := p.Stream(context.Background(), hello(), nil); err != nil {
		t.Fatal(err)
	}
	r := fake.Requests()[0]
	if r.SigErr != nil || r.Header.Get("X-Amz-Security-Token") != stsCreds.SessionToken || calls.Load() != 1 {
		t.Fatalf("sig %v, token %q, STS calls %d", r.SigErr, r.Header.Get("X-Amz-Security-Token"), calls.Load())
	}
	got := map[string]string{}
	for _, s := range provider.Secrets(p) {
		got[s.Value] = s.Name
	}
	for _, v := range []string{stsCreds.SecretAccessKey, stsCreds.SessionToken, "eyJhbGciOiJSUzI1NiJ9.oidc-token.sig"} {
		if got[v] == "" {
			t.Errorf("secret %q is not for the redactor: %v", v, got)
		}
	}

	// A token STS refuses: a config error with STS's own words, before
	// anything is sent.
	write(t, dir, "token", "stale")
	_, err := provider.New(NameBedrock, provider.Options{BaseURL: fake.URL, Getenv: getenv})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindConfig || !strings.Contains(pe.Message, "InvalidIdentityToken: Incorrect token audience") {
		t.Fatalf("err %v", err)
	}
}

// TestBedrockProfiles: the shared files' profile gives keys and region;
// a profile AWS_PROFILE names that is missing, a profile awl cannot
// follow (SSO), half a key pair and no credentials at all are config
// errors that say what to set.
func TestBedrockProfiles(t *testing.T) {
	dir := t.TempDir()
	creds := write(t, dir, "credentials", "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = default-secret\n\n[ci]\naws_access_key_id=AKIDEXAMPLE\naws_secret_access_key=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY\n")
	config := write(t, dir, "config", "[profile ci]\nregion = eu-central-1\ns3 =\n  max_concurrent_requests = 20\n\n[profile sso]\nsso_session = corp\nregion = us-east-1\n")
	files := map[string]string{"AWS_SHARED_CREDENTIALS_FILE": creds, "AWS_CONFIG_FILE": config}
	with := func(more map[string]string) func(string) string {
		m := map[string]string{}
		for k, v := range files {
			m[k] = v
		}
		for k, v := range more {
			m[k] = v
		}
		return testEnv(t, m)
	}
	fake := cloudtest.NewBedrock("eu-central-1", testCreds)
	defer fake.Close()
	fake.Enqueue(cloudtest.Answer{Frames: cloudtest.Frames(recorded(t, "text-max-tokens.sse"))})
	p := newBedrockProvider(t, with(map[string]string{"AWS_PROFILE": "ci"}), fake.URL, 0)
	if _, err := p.Stream(context.Background(), hello(), nil); err != nil || fake.Requests()[0].SigErr != nil {
		t.Fatalf("profile ci: %v", err)
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"AWS_PROFILE": "nope"}, `AWS_PROFILE: profile "nope" is in neither`},
		{map[string]string{"AWS_PROFILE": "sso"}, `profile "sso": sso_session "corp" has no [sso-session corp] section`},
		{map[string]string{"AWS_ACCESS_KEY_ID": "AKID", "AWS_REGION": "us-east-1"}, "must be set together"},
		{map[string]string{"AWS_PROFILE": "ci", "AWS_REGION": "", "AWS_CONFIG_FILE": "/nonexistent"}, "no AWS region: set AWS_REGION"},
		{map[string]string{"AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_REGION": "us-east-1"}, "no AWS credentials: set AWS_ACCESS_KEY_ID"},
	} {
		m := map[string]string{}
		for k, v := range files {
			m[k] = v
		}
		for k, v := range tc.env {
			m[k] = v
		}
		_, err := provider.New(NameBedrock, provider.Options{Getenv: testEnv(t, m)})
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindConfig || !strings.Contains(pe.Message, tc.want) {
			t.Errorf("%v: err %v, want %q", tc.env, err, tc.want)
		}
	}
}

// TestBedrockMachineCredentials: the container's credentials endpoint
// (with its authorization token file) and the instance metadata service
// (IMDSv2, pointed at 127.0.0.1) are asked when nothing else is set.
func TestBedrockMachineCredentials(t *testing.T) {
	body := fmt.Sprintf(`{"AccessKeyId":%q,"SecretAccessKey":%q,"Token":%q,"Expiration":%q}`,
		stsCreds.AccessKeyID, stsCreds.SecretAccessKey, stsCreds.SessionToken, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	t.Run("container", func(t *testing.T) {
		dir := t.TempDir()
		tokFile := write(t, dir, "auth", "container-auth-token\n")
		ep := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "container-auth-token" {
				w.WriteHeader(401)
				return
			}
			fmt.Fprint(w, body)
		}))
		defer ep.Close()
		fake := cloudtest.NewBedrock("us-east-1", stsCreds)
		defer fake.Close()
		fake.Enqueue(cloudtest.Answer{Frames: cloudtest.Frames(recorded(t, "text-max-tokens.sse"))})
		p := newBedrockProvider(t, testEnv(t, map[string]string{"AWS_REGION": "us-east-1",
			"AWS_CONTAINER_CREDENTIALS_FULL_URI": ep.URL + "/creds", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": tokFile}), fake.URL, 0)
		if _, err := p.Stream(context.Background(), hello(), nil); err != nil || fake.Requests()[0].SigErr != nil {
			t.Fatalf("%v %+v", err, fake.Requests())
		}
		// The endpoint's credentials are in no variable: the redactor
		// learns them from the provider.
		held := map[string]bool{}
		for _, s := range provider.Secrets(p) {
			held[s.Value] = true
		}
		if !held[stsCreds.SecretAccessKey] || !held[stsCreds.SessionToken] {
			t.Errorf("the container's credentials are not for the redactor: %v", held)
		}
	})
	t.Run("imds", func(t *testing.T) {
		var puts atomic.Int32
		md := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Method == http.MethodPut && r.URL.Path == "/latest/api/token":
				puts.Add(1)
				w.Header().Set("X-Aws-Ec2-Metadata-Token-Ttl-Seconds", "21600")
				fmt.Fprint(w, "imds-session")
			case r.Header.Get("X-Aws-Ec2-Metadata-Token") != "imds-session":
				w.WriteHeader(401)
			case r.URL.Path == "/latest/meta-data/iam/security-credentials/":
				fmt.Fprint(w, "ci-role")
			case r.URL.Path == "/latest/meta-data/iam/security-credentials/ci-role":
				fmt.Fprintf(w, `{"Code":"Success","Type":"AWS-HMAC",%s`, body[1:])
			default:
				w.WriteHeader(404)
			}
		}))
		defer md.Close()
		fake := cloudtest.NewBedrock("us-east-1", stsCreds)
		defer fake.Close()
		fake.Enqueue(cloudtest.Answer{Frames: cloudtest.Frames(recorded(t, "text-max-tokens.sse"))})
		getenv := testEnv(t, map[string]string{"AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "false", "AWS_EC2_METADATA_SERVICE_ENDPOINT": md.URL})
		t.Setenv("AWS_EC2_METADATA_DISABLED", "false")
		p := newBedrockProvider(t, getenv, fake.URL, 0)
		if _, err := p.Stream(context.Background(), hello(), nil); err != nil || fake.Requests()[0].SigErr != nil || puts.Load() == 0 {
			t.Fatalf("%v %+v, %d token requests", err, fake.Requests(), puts.Load())
		}
	})
}

// TestBedrockAPIKey: a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK) is sent
// as a bearer token, with no signature and no credential chain.
func TestBedrockAPIKey(t *testing.T) {
	fake := cloudtest.NewBedrock("us-east-1", testCreds)
	defer fake.Close()
	fake.Bearer = "bedrock-api-key-0123456789"
	fake.Enqueue(cloudtest.Answer{Frames: cloudtest.Frames(recorded(t, "text-max-tokens.sse"))})
	p := newBedrockProvider(t, testEnv(t, map[string]string{"AWS_REGION": "us-east-1", "AWS_BEARER_TOKEN_BEDROCK": fake.Bearer}), fake.URL, 0)
	if _, err := p.Stream(context.Background(), hello(), nil); err != nil {
		t.Fatal(err)
	}
	if r := fake.Requests()[0]; r.SigErr != nil || r.Header.Get("X-Amz-Date") != "" {
		t.Fatalf("%+v", r)
	}
}

// TestXMLText: STS's flat answers, entities decoded; a missing or open
// element is "".
func TestXMLText(t *testing.T) {
	doc := "<R><Credentials><SecretAccessKey> a&amp;b&lt;c&gt;&quot;d&apos; </SecretAccessKey><Code>x</Code><Open>y</R>"
	for tag, want := range map[string]string{"SecretAccessKey": `a&b<c>"d'`, "Code": "x", "Open": "", "Missing": ""} {
		if got := xmlText(doc, tag); got != want {
			t.Errorf("%s: %q, want %q", tag, got, want)
		}
	}
}
