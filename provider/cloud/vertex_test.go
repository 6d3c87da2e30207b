package cloud

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"golang.org/x/oauth2"

	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/provider/cloud/cloudtest"
	"github.com/awlrun/awl/runner/modelinfo"
)

// googleEnv is a test's environment for Vertex AI: every GOOGLE_ (and
// AWS_, AZURE_) variable scrubbed, HOME a temporary directory (no gcloud
// file), the metadata server pinned to 127.0.0.1 (metadata, or a refused
// port when ""), and vars set; the Google libraries read the process's
// environment.
func googleEnv(t *testing.T, metadata string, vars map[string]string) func(string) string {
	t.Helper()
	getenv := testEnv(t, vars)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLOUDSDK_CONFIG", filepath.Join(home, "gcloud"))
	if metadata == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		metadata = l.Addr().String()
		l.Close()
	}
	t.Setenv("GCE_METADATA_HOST", metadata)
	for k, v := range vars {
		t.Setenv(k, v)
	}
	return getenv
}

func newKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func vertexHello() provider.Request {
	r := hello()
	r.Model = "claude-sonnet-4-5@20250929"
	return r
}

// TestVertexServiceAccount: a service account key file signs a JWT that
// the token endpoint (on 127.0.0.1, the file's token_uri) checks with the
// account's public key; its token authorises a streamRawPredict request
// whose body is the Messages body Vertex AI takes; the recorded stream
// decodes; the key and the token join the redactor.
func TestVertexServiceAccount(t *testing.T) {
	g := cloudtest.NewGoogle(newKey(t))
	defer g.Close()
	v := cloudtest.NewVertex(g.AccessToken)
	defer v.Close()
	v.Enqueue(recorded(t, "thinking-text.sse"))
	keyFile := write(t, t.TempDir(), "sa.json", string(g.ServiceAccountJSON()))
	getenv := googleEnv(t, "", map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": keyFile, "CLOUD_ML_REGION": "us-east5"})
	p, err := provider.New(NameVertex, provider.Options{BaseURL: v.URL, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := p.Stream(context.Background(), vertexHello(), nil)
	if err != nil || len(msg.Content) != 2 {
		t.Fatalf("%v %+v", err, msg)
	}
	r := v.Requests()[0]
	if r.Path != "/v1/projects/proj-1/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict" {
		t.Errorf("path %s", r.Path)
	}
	body := string(r.Body)
	if !strings.HasPrefix(body, `{"anthropic_version":"vertex-2023-10-16","max_tokens":`) || gjson.Get(body, "model").Exists() || !gjson.Get(body, "stream").Bool() {
		t.Errorf("body %.200s", body)
	}
	if calls := g.Calls(); !slices.Equal(calls, []string{"token"}) {
		t.Errorf("token endpoint calls %v", calls)
	}
	var values []string
	for _, s := range provider.Secrets(p) {
		values = append(values, s.Value)
	}
	if !slices.Contains(values, g.AccessToken) || !slices.ContainsFunc(values, func(s string) bool { return strings.Contains(s, "PRIVATE KEY") }) {
		t.Errorf("secrets %d values, want the token and the key", len(values))
	}
	// Another account's key: refused at the token endpoint, at start.
	other := cloudtest.NewGoogle(newKey(t))
	defer other.Close()
	other.URL = g.URL // its file names g's endpoint, which knows another key
	bad := write(t, t.TempDir(), "sa.json", string(other.ServiceAccountJSON()))
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", bad)
	_, err = provider.New(NameVertex, provider.Options{BaseURL: v.URL, Getenv: getenv})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindConfig || !strings.Contains(pe.Message, "Invalid JWT Signature") {
		t.Fatalf("err %v", err)
	}
}

// TestVertexWorkloadIdentity: an external_account file (workload identity
// federation, as google-github-actions/auth writes it) has its subject
// token, read from a file, exchanged at STS on 127.0.0.1; the subject
// token joins the redactor.
func TestVertexWorkloadIdentity(t *testing.T) {
	g := cloudtest.NewGoogle(newKey(t))
	defer g.Close()
	v := cloudtest.NewVertex(g.AccessToken)
	defer v.Close()
	v.Enqueue(recorded(t, "text-max-tokens.sse"))
	dir := t.TempDir()
	tok := write(t, dir, "oidc", g.Subject)
	cred := write(t, dir, "wif.json", string(g.ExternalAccountJSON(tok)))
	getenv := googleEnv(t, "", map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": cred, "GOOGLE_CLOUD_PROJECT": "proj-wif"})
	p, err := provider.New(NameVertex, provider.Options{BaseURL: v.URL, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stream(context.Background(), vertexHello(), nil); err != nil {
		t.Fatal(err)
	}
	if r := v.Requests()[0]; !strings.HasPrefix(r.Path, "/v1/projects/proj-wif/locations/global/") {
		t.Errorf("path %s", r.Path)
	}
	if calls := g.Calls(); !slices.Equal(calls, []string{"sts"}) {
		t.Errorf("calls %v", calls)
	}
	found := false
	for _, s := range provider.Secrets(p) {
		found = found || s.Value == g.Subject
	}
	if !found {
		t.Error("the subject token is not for the redactor")
	}
}

// TestVertexMetadataServer: with no credentials file, the metadata server
// (GCE_METADATA_HOST, 127.0.0.1) gives the token and the project; with
// neither, the run fails at start saying what to set.
func TestVertexMetadataServer(t *testing.T) {
	g := cloudtest.NewGoogle(newKey(t))
	defer g.Close()
	v := cloudtest.NewVertex(g.AccessToken)
	defer v.Close()
	v.Enqueue(recorded(t, "text-max-tokens.sse"))
	getenv := googleEnv(t, g.Host(), nil)
	p, err := provider.New(NameVertex, provider.Options{BaseURL: v.URL, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stream(context.Background(), vertexHello(), nil); err != nil {
		t.Fatal(err)
	}
	if r := v.Requests()[0]; !strings.HasPrefix(r.Path, "/v1/projects/proj-1/") || !slices.Contains(g.Calls(), "metadata") {
		t.Errorf("path %s, calls %v", r.Path, g.Calls())
	}

	getenv = googleEnv(t, "", map[string]string{"GOOGLE_CLOUD_PROJECT": "p"})
	_, err = provider.New(NameVertex, provider.Options{Getenv: getenv})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindConfig || !strings.Contains(pe.Message, "Google credentials") {
		t.Fatalf("err %v", err)
	}
}

// TestVertexModelIDs: Vertex AI's ids find the model table's entries.
func TestVertexModelIDs(t *testing.T) {
	table := modelinfo.Default()
	for id, want := range map[string]string{"claude-sonnet-4-5@20250929": "claude-sonnet-4-5", "claude-opus-4-7": "claude-opus-4-7", "claude-haiku-4-5@20251001": "claude-haiku-4-5"} {
		if m, ok := table.Lookup(NameVertex, id); !ok || m.Name != want {
			t.Errorf("%s: %q %v", id, m.Name, ok)
		}
	}
}

// rotating is a token source whose every token is new and expires at
// once, as a refresh gives them.
type rotating struct{ n int }

func (r *rotating) Token() (*oauth2.Token, error) {
	r.n++
	return &oauth2.Token{AccessToken: fmt.Sprintf("ya29.rotated-%d-0123456789", r.n), Expiry: time.Now().Add(-time.Second)}, nil
}

// TestVertexRefreshTold: each access token a refresh gives is told to
// OnSecret (the run's redactor) before the request that carries it is
// sent, once per value.
func TestVertexRefreshTold(t *testing.T) {
	var told []string
	v := &vertex{secrets: newSecrets(provider.Options{OnSecret: func(s provider.Secret) { told = append(told, s.Name+"="+s.Value) }})}
	v.tokens = oauth2.ReuseTokenSource(nil, &rotating{})
	for i := 1; i <= 2; i++ {
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/", nil)
		if err := v.Authorize(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("ya29.rotated-%d-0123456789", i)
		if req.Header.Get("Authorization") != "Bearer "+want || len(told) != i || told[i-1] != "GOOGLE_ACCESS_TOKEN="+want {
			t.Fatalf("request %d: %q, told %v", i, req.Header.Get("Authorization"), told)
		}
	}
	v.secrets.add("GOOGLE_ACCESS_TOKEN", "ya29.rotated-1-0123456789")
	if len(told) != 2 {
		t.Errorf("a value told twice: %v", told)
	}
}

// TestVertexImpersonation: an impersonated_service_account file (gcloud's
// --impersonate-service-account) and an external_account file with
// service_account_impersonation_url (google-github-actions/auth given a
// service_account) have golang.org/x/oauth2/google take the source
// credentials' token (the service account's JWT grant, or the federated
// token at STS) to the IAM Service Account Credentials API's
// generateAccessToken on 127.0.0.1 (the file's URL), which checks the
// caller's token, the target account, the delegation chain and the
// scope as IAM does; Vertex AI is sent the impersonated account's token.
// It and the source key join the redactor; an account IAM refuses is a
// config error, at start, in IAM's words.
func TestVertexImpersonation(t *testing.T) {
	g := cloudtest.NewGoogle(newKey(t))
	defer g.Close()
	v := cloudtest.NewVertex(g.ImpersonatedToken)
	defer v.Close()
	dir := t.TempDir()
	run := func(t *testing.T, file []byte, want []string) provider.Provider {
		t.Helper()
		cred := write(t, dir, "adc.json", string(file))
		getenv := googleEnv(t, "", map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": cred, "GOOGLE_CLOUD_PROJECT": "proj-imp"})
		before := len(g.Calls())
		v.Enqueue(recorded(t, "text-max-tokens.sse"))
		p, err := provider.New(NameVertex, provider.Options{BaseURL: v.URL, Getenv: getenv})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Stream(context.Background(), vertexHello(), nil); err != nil {
			t.Fatal(err)
		}
		if calls := g.Calls()[before:]; !slices.Equal(calls, want) {
			t.Errorf("calls %v, want %v", calls, want)
		}
		return p
	}
	t.Run("service account source", func(t *testing.T) {
		p := run(t, g.ImpersonatedJSON(g.ServiceAccountJSON()), []string{"token", "iam"})
		held := map[string]bool{}
		key := false
		for _, s := range provider.Secrets(p) {
			held[s.Value] = true
			key = key || strings.Contains(s.Value, "PRIVATE KEY")
		}
		if !held[g.ImpersonatedToken] || !key {
			t.Errorf("the impersonated token or the source's key is not for the redactor")
		}
	})
	t.Run("user source", func(t *testing.T) {
		p := run(t, g.ImpersonatedJSON(g.AuthorizedUserJSON()), []string{"token", "iam"})
		held := map[string]bool{}
		for _, s := range provider.Secrets(p) {
			held[s.Value] = true
		}
		if !held[g.RefreshToken] || !held[g.ClientSecret] {
			t.Errorf("the source user's refresh token or client secret is not for the redactor")
		}
	})
	t.Run("delegates", func(t *testing.T) {
		g.Delegates = []string{"projects/-/serviceAccounts/middle@proj-1.iam.gserviceaccount.com"}
		defer func() { g.Delegates = nil }()
		run(t, g.ImpersonatedJSON(g.ServiceAccountJSON()), []string{"token", "iam"})
	})
	t.Run("workload identity", func(t *testing.T) {
		tok := write(t, dir, "oidc", g.Subject)
		run(t, g.ExternalAccountImpersonatingJSON(tok), []string{"sts", "iam"})
	})
	t.Run("refused", func(t *testing.T) {
		file := g.ImpersonatedJSON(g.ServiceAccountJSON())
		file = []byte(strings.Replace(string(file), g.Target, "someone-else@proj-1.iam.gserviceaccount.com", 1))
		cred := write(t, dir, "adc.json", string(file))
		getenv := googleEnv(t, "", map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": cred, "GOOGLE_CLOUD_PROJECT": "proj-imp"})
		_, err := provider.New(NameVertex, provider.Options{BaseURL: v.URL, Getenv: getenv})
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindConfig || !strings.Contains(pe.Message, "iam.serviceAccounts.getAccessToken' denied") {
			t.Fatalf("err %v", err)
		}
	})
}
