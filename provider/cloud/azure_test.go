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
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/runner/modelinfo"
)

// fakeAzure is an Azure OpenAI resource's v1 API on 127.0.0.1: a request
// must carry the API key (api-key) or the bearer token; it answers with
// a recorded stream of the API the path names.
type fakeAzure struct {
	*httptest.Server
	key, bearer string
	mu          sync.Mutex
	reqs        []*http.Request
	bodies      []string
}

func newFakeAzure(t *testing.T, key, bearer string) *fakeAzure {
	f := &fakeAzure{key: key, bearer: bearer}
	responses := wireFile(t, "openai-responses", "reasoning-summary.sse")
	chat := wireFile(t, "openai-chat", "tool-call.sse")
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs, f.bodies = append(f.reqs, r), append(f.bodies, string(body))
		f.mu.Unlock()
		ok := f.key != "" && r.Header.Get("api-key") == f.key && r.Header.Get("Authorization") == "" ||
			f.bearer != "" && r.Header.Get("Authorization") == "Bearer "+f.bearer
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			io.WriteString(w, `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		switch r.URL.Path {
		case "/openai/v1/responses":
			w.Write(responses)
		case "/openai/v1/chat/completions":
			w.Write(chat)
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func wireFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "wire", dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func azureHello(deployment string) provider.Request {
	return provider.Request{Model: deployment, Messages: []conv.Message{{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("hi")}}}}
}

// TestAzureAPIKey: the v1 API of the resource AZURE_OPENAI_ENDPOINT names,
// Responses and Chat Completions alike, with the key as api-key (never as
// a bearer token); a wrong key is an auth failure.
func TestAzureAPIKey(t *testing.T) {
	f := newFakeAzure(t, "azure-key-0123456789", "")
	for _, name := range []string{NameAzure, NameAzureChat} {
		getenv := testEnv(t, map[string]string{"AZURE_OPENAI_ENDPOINT": f.URL + "/"})
		p, err := provider.New(name, provider.Options{APIKey: "azure-key-0123456789", Getenv: getenv})
		if err != nil {
			t.Fatal(err)
		}
		msg, err := p.Stream(context.Background(), azureHello("my-gpt-deployment"), nil)
		if err != nil || len(msg.Content) == 0 {
			t.Fatalf("%s: %v %+v", name, err, msg)
		}
		if got := gjson.Get(f.bodies[len(f.bodies)-1], "model").Str; got != "my-gpt-deployment" {
			t.Errorf("%s: model %q, want the deployment", name, got)
		}
		p, _ = provider.New(name, provider.Options{APIKey: "wrong-key-0123", Getenv: getenv})
		_, err = p.Stream(context.Background(), azureHello("d"), nil)
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindAuth || pe.Status != 401 {
			t.Errorf("%s: wrong key: %v", name, err)
		}
	}
}

// TestAzureEntraID: a fixed Entra ID token (AZURE_OPENAI_AD_TOKEN), and a
// service principal's token for a federated token file, exchanged at an
// Entra ID token endpoint on 127.0.0.1 (AZURE_AUTHORITY_HOST) that checks
// the client, the scope and the assertion; the tokens and the assertion
// join the redactor. Nothing at all is exit 4, saying what to set.
func TestAzureEntraID(t *testing.T) {
	const federated = "eyJ.github-oidc.sig"
	entra := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/tenant-1/oauth2/v2.0/token" || form.Get("client_id") != "client-1" || form.Get("scope") != azureScope ||
			form.Get("grant_type") != "client_credentials" || form.Get("client_assertion") != federated ||
			form.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
			w.WriteHeader(400)
			io.WriteString(w, `{"error":"invalid_client","error_description":"AADSTS700213: No matching federated identity record found for presented assertion subject."}`)
			return
		}
		fmt.Fprint(w, `{"token_type":"Bearer","expires_in":3599,"access_token":"entra-access-token-0123"}`)
	}))
	defer entra.Close()
	f := newFakeAzure(t, "", "entra-access-token-0123")
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "token")
	os.WriteFile(tokFile, []byte(federated+"\n"), 0o600)
	getenv := testEnv(t, map[string]string{"AZURE_OPENAI_ENDPOINT": f.URL, "AZURE_CLIENT_ID": "client-1", "AZURE_TENANT_ID": "tenant-1",
		"AZURE_FEDERATED_TOKEN_FILE": tokFile, "AZURE_AUTHORITY_HOST": entra.URL})
	p, err := provider.New(NameAzure, provider.Options{Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stream(context.Background(), azureHello("gpt-5.5"), nil); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, s := range provider.Secrets(p) {
		got[s.Value] = true
	}
	if !got[federated] || !got["entra-access-token-0123"] {
		t.Errorf("secrets %v", got)
	}

	os.WriteFile(tokFile, []byte("another-subject"), 0o600)
	_, err = provider.New(NameAzure, provider.Options{Getenv: getenv})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindConfig || !strings.Contains(pe.Message, "AADSTS700213") {
		t.Fatalf("refused assertion: %v", err)
	}

	getenv = testEnv(t, map[string]string{"AZURE_OPENAI_ENDPOINT": f.URL, "AZURE_OPENAI_AD_TOKEN": "entra-access-token-0123"})
	p, _ = provider.New(NameAzureChat, provider.Options{Getenv: getenv})
	if _, err := p.Stream(context.Background(), azureHello("gpt-5.5"), nil); err != nil {
		t.Fatal(err)
	}
	for env, want := range map[string]string{"": "no Azure OpenAI endpoint", f.URL: "no Azure OpenAI credentials: set AZURE_OPENAI_API_KEY"} {
		_, err = provider.New(NameAzure, provider.Options{Getenv: testEnv(t, map[string]string{"AZURE_OPENAI_ENDPOINT": env})})
		if !errors.As(err, &pe) || pe.Kind != provider.KindConfig || !strings.Contains(pe.Message, want) {
			t.Errorf("%q: %v", env, err)
		}
	}
}

// TestAzureDeployments: a deployment named as its model is priced as the
// model; another is priced once a pricing file gives it as an alias, and
// has no price before.
func TestAzureDeployments(t *testing.T) {
	table := modelinfo.Default()
	if m, ok := table.Lookup(NameAzure, "gpt-5.5"); !ok || m.Name != "gpt-5.5" {
		t.Errorf("gpt-5.5: %v %v", m.Name, ok)
	}
	if _, ok := table.Lookup(NameAzureChat, "prod-chat"); ok {
		t.Error("an unmapped deployment has a price")
	}
	file := filepath.Join(t.TempDir(), "prices.json")
	os.WriteFile(file, []byte(`{"models":[{"provider":"openai","model":"gpt-5.4","aliases":["prod-chat"],"input":2.5,"output":15}]}`), 0o600)
	table, err := modelinfo.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := table.Lookup(NameAzureChat, "prod-chat"); !ok || m.Input != 2.5 {
		t.Errorf("prod-chat: %+v %v", m, ok)
	}
}

// TestAzureEntraRefreshTold: an Entra ID token within five minutes of
// its expiry is fetched anew, with the federated token file read again
// (the CI rewrites it); each new access token and assertion is told to
// OnSecret (the run's redactor) before it is used, once per value.
func TestAzureEntraRefreshTold(t *testing.T) {
	var n atomic.Int32
	entra := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		k := n.Add(1)
		if form.Get("client_assertion") != fmt.Sprintf("eyJ.oidc-%d.sig", k) {
			w.WriteHeader(400)
			io.WriteString(w, `{"error":"invalid_client","error_description":"AADSTS700024: Client assertion is not within its valid time range."}`)
			return
		}
		fmt.Fprintf(w, `{"token_type":"Bearer","expires_in":120,"access_token":"entra-access-%d-SENTINEL"}`, k)
	}))
	defer entra.Close()
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "token")
	var told []string
	secrets := newSecrets(provider.Options{OnSecret: func(s provider.Secret) { told = append(told, s.Name+"="+s.Value) }})
	e, err := newEntraToken(testEnv(t, map[string]string{"AZURE_CLIENT_ID": "client-1", "AZURE_TENANT_ID": "tenant-1",
		"AZURE_FEDERATED_TOKEN_FILE": tokFile, "AZURE_AUTHORITY_HOST": entra.URL}), secrets)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		os.WriteFile(tokFile, []byte(fmt.Sprintf("eyJ.oidc-%d.sig\n", i)), 0o600)
		tok, err := e.get(context.Background())
		want := fmt.Sprintf("entra-access-%d-SENTINEL", i)
		if err != nil || tok != want {
			t.Fatalf("get %d: %q %v", i, tok, err)
		}
		if !slices.Contains(told, "AZURE_OPENAI_AD_TOKEN="+want) || !slices.Contains(told, fmt.Sprintf("AZURE_FEDERATED_TOKEN_FILE=eyJ.oidc-%d.sig", i)) {
			t.Errorf("after refresh %d, told %v", i, told)
		}
	}
	if len(told) != 4 {
		t.Errorf("told %d values, want 4 (two tokens, two assertions): %v", len(told), told)
	}
}
