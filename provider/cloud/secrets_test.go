package cloud

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/awlrun/awl/provider"
)

// recorder is a secret set whose OnSecret keeps what it was told, in
// order, as NAME=VALUE.
func recorder() (*secretSet, *[]string) {
	var told []string
	return newSecrets(provider.Options{OnSecret: func(s provider.Secret) { told = append(told, s.Name+"="+s.Value) }}), &told
}

// TestCredentialFileSecretsTold: every secret of a Google credentials
// file is told to the redactor when the file is read: an authorized_user
// file's refresh token and client secret as a service account's key.
func TestCredentialFileSecretsTold(t *testing.T) {
	s, told := recorder()
	v := &vertex{secrets: s}
	v.fileSecrets([]byte(`{"type":"authorized_user","client_id":"764086051850-x.apps.googleusercontent.com",
		"client_secret":"d-FL95Q19q7MQmFpd7hHD0Ty","refresh_token":"1//0gRefreshToken-0123456789"}`))
	for _, want := range []string{"GOOGLE_APPLICATION_CREDENTIALS=d-FL95Q19q7MQmFpd7hHD0Ty", "GOOGLE_APPLICATION_CREDENTIALS=1//0gRefreshToken-0123456789"} {
		if !slices.Contains(*told, want) {
			t.Errorf("told %q, want %q among them", *told, want)
		}
	}
	if slices.Contains(*told, "GOOGLE_APPLICATION_CREDENTIALS=764086051850-x.apps.googleusercontent.com") {
		t.Errorf("told %q: the client id is no secret", *told)
	}
	// An impersonation file's source credentials are the same secrets.
	s, told = recorder()
	v = &vertex{secrets: s}
	v.fileSecrets([]byte(`{"type":"impersonated_service_account","service_account_impersonation_url":"https://x",
		"source_credentials":{"type":"authorized_user","client_secret":"src-client-secret-0123","refresh_token":"1//0gSourceRefresh-0123"}}`))
	if !slices.Equal(*told, []string{"GOOGLE_APPLICATION_CREDENTIALS=1//0gSourceRefresh-0123", "GOOGLE_APPLICATION_CREDENTIALS=src-client-secret-0123"}) {
		t.Errorf("told %q, want the source credentials' refresh token and client secret", *told)
	}
}

// TestAzureClientSecretTold: a service principal's AZURE_CLIENT_SECRET is
// told to the redactor as soon as the credentials are set up, before any
// token is asked for with it.
func TestAzureClientSecretTold(t *testing.T) {
	s, told := recorder()
	getenv := testEnv(t, map[string]string{"AZURE_CLIENT_ID": "client-1", "AZURE_TENANT_ID": "tenant-1",
		"AZURE_CLIENT_SECRET": "Q~8Ywclientsecret0123456789", "AZURE_AUTHORITY_HOST": "http://127.0.0.1:1"})
	e, err := newEntraToken(getenv, s)
	if err != nil || e == nil {
		t.Fatalf("%v %v", e, err)
	}
	if !slices.Equal(*told, []string{"AZURE_CLIENT_SECRET=Q~8Ywclientsecret0123456789"}) {
		t.Errorf("told %q, want the client secret", *told)
	}
}

// TestKeysJoinTheRedactor: an Azure OpenAI API key and a Bedrock API key
// are among the cloud's secrets, whatever variable they came from.
func TestKeysJoinTheRedactor(t *testing.T) {
	f := newFakeAzure(t, "azure-key-0123456789", "")
	p, err := provider.New(NameAzure, provider.Options{APIKey: "azure-key-0123456789", Getenv: testEnv(t, map[string]string{"AZURE_OPENAI_ENDPOINT": f.URL + "/"})})
	if err != nil {
		t.Fatal(err)
	}
	b := newBedrockProvider(t, testEnv(t, map[string]string{"AWS_REGION": "us-east-1", "AWS_BEARER_TOKEN_BEDROCK": "bedrock-api-key-0123456789"}), "http://127.0.0.1:1", 0)
	for key, p := range map[string]provider.Provider{"azure-key-0123456789": p, "bedrock-api-key-0123456789": b} {
		if !slices.ContainsFunc(provider.Secrets(p), func(s provider.Secret) bool { return s.Value == key }) {
			t.Errorf("%s is not among the secrets %v", key, provider.Secrets(p))
		}
	}
}

// TestWebIdentityRefreshTold: the web identity token is read again at
// each refresh (a CI job's OIDC token expires); the new one is told to
// the redactor before it is sent to STS.
func TestWebIdentityRefreshTold(t *testing.T) {
	const role = "arn:aws:iam::123456789012:role/ci"
	tokenFile := write(t, t.TempDir(), "token", "eyJhbGciOiJSUzI1NiJ9.refreshed-token.sig\n")
	sts, calls := fakeSTS(t, role, "eyJhbGciOiJSUzI1NiJ9.refreshed-token.sig")
	s, told := recorder()
	setup := &awsSetup{secrets: s, region: "us-west-2"}
	w := &webIdentity{sts: setup.sts(testEnv(t, map[string]string{"AWS_ENDPOINT_URL_STS": sts.URL}), http.DefaultClient),
		tokenFile: tokenFile, role: role, session: "awl", secrets: s}
	if _, err := w.Retrieve(context.Background()); err != nil || calls.Load() != 1 {
		t.Fatalf("%v, %d STS calls", err, calls.Load())
	}
	if !slices.Contains(*told, "AWS_WEB_IDENTITY_TOKEN_FILE=eyJhbGciOiJSUzI1NiJ9.refreshed-token.sig") {
		t.Errorf("told %q, want the token read at the refresh", *told)
	}
}
