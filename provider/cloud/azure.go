package cloud

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/awlrun/awl/provider"
)

// Azure OpenAI's provider names: its v1 Responses API, and its Chat
// Completions.
const (
	NameAzure     = "azure"
	NameAzureChat = "azure-chat"
)

// azureScope is the Microsoft Entra ID scope of Azure OpenAI.
const azureScope = "https://cognitiveservices.azure.com/.default"

func azureSpec(name string, wire provider.Wire, path string) provider.Spec {
	return provider.Spec{
		Name: name, Wire: wire, Family: provider.NameOpenAI,
		KeyVar: "AZURE_OPENAI_API_KEY", KeyFileVar: "AZURE_OPENAI_API_KEY_FILE",
		BaseURLVar:     "AZURE_OPENAI_BASE_URL",
		DefaultModel:   "gpt-5.5",
		MoreSecretVars: []string{"AZURE_OPENAI_AD_TOKEN", "AZURE_CLIENT_SECRET"},
		Cloud:          func(opts provider.Options) (provider.Cloud, error) { return newAzure(name, path, opts) },
	}
}

// azure is an Azure OpenAI resource's v1 API: the deployment is the
// request's model; a request carries the API key, or a Microsoft Entra ID
// token.
type azure struct {
	name, url string
	key       string
	entra     *entraToken // nil with a key or a fixed token
	token     string      // AZURE_OPENAI_AD_TOKEN
	secrets   *secretSet
}

// newAzure resolves the endpoint (--base-url or AZURE_OPENAI_BASE_URL,
// else AZURE_OPENAI_ENDPOINT's /openai/v1) and the credentials, in order:
// the API key (AZURE_OPENAI_API_KEY, or its _FILE), an Entra ID token
// (AZURE_OPENAI_AD_TOKEN), a service principal's token for a federated
// token (AZURE_FEDERATED_TOKEN_FILE, as workload identity gives one) or a
// client secret (AZURE_CLIENT_SECRET), with AZURE_CLIENT_ID and
// AZURE_TENANT_ID.
func newAzure(name, path string, opts provider.Options) (provider.Cloud, error) {
	getenv := env(opts)
	a := &azure{name: name, key: opts.APIKey, secrets: newSecrets(opts)}
	base := opts.BaseURL
	if base == "" {
		ep := strings.TrimRight(getenv("AZURE_OPENAI_ENDPOINT"), "/")
		if ep == "" {
			return nil, configErr(name, "no Azure OpenAI endpoint: set AZURE_OPENAI_ENDPOINT (https://RESOURCE.openai.azure.com) or AZURE_OPENAI_BASE_URL")
		}
		base = ep + "/openai/v1"
	}
	if !strings.HasPrefix(base, "https://") && !strings.HasPrefix(base, "http://") {
		return nil, configErr(name, fmt.Sprintf("endpoint %q must start with https:// or http://", base))
	}
	a.url = strings.TrimRight(base, "/") + path
	a.secrets.add("AZURE_OPENAI_API_KEY", a.key)
	if a.key != "" {
		return a, nil
	}
	if a.token = getenv("AZURE_OPENAI_AD_TOKEN"); a.token != "" {
		return a, nil
	}
	e, err := newEntraToken(getenv, a.secrets)
	if err != nil {
		return nil, configErr(name, err.Error())
	}
	if e == nil {
		return nil, configErr(name, "no Azure OpenAI credentials: set AZURE_OPENAI_API_KEY, AZURE_OPENAI_AD_TOKEN (az account get-access-token --resource https://cognitiveservices.azure.com), or AZURE_CLIENT_ID and AZURE_TENANT_ID with AZURE_FEDERATED_TOKEN_FILE or AZURE_CLIENT_SECRET")
	}
	a.entra = e
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.get(ctx); err != nil {
		return nil, configErr(name, "Microsoft Entra ID: "+err.Error())
	}
	return a, nil
}

// URL implements provider.Cloud: the model is the deployment, in the body.
func (a *azure) URL(string) string { return a.url }

// Authorize implements provider.Cloud.
func (a *azure) Authorize(ctx context.Context, req *http.Request, _ func() io.Reader) error {
	switch {
	case a.key != "":
		req.Header.Del("Authorization")
		req.Header.Set("api-key", a.key)
	case a.token != "":
		req.Header.Set("Authorization", "Bearer "+a.token)
	default:
		tok, err := a.entra.get(ctx)
		if err != nil {
			return authErr(a.name, "Microsoft Entra ID: "+err.Error())
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return nil
}

// Stream implements provider.Cloud: the OpenAI APIs' own stream.
func (a *azure) Stream(r io.Reader, h http.Header) (io.Reader, string) {
	return r, h.Get("Content-Type")
}

// Secrets implements provider.Cloud.
func (a *azure) Secrets() []provider.Secret { return a.secrets.all() }

// entraToken is a service principal's access token from Microsoft Entra
// ID's token endpoint (the client credentials grant, with a federated
// token as the client's assertion, or its secret), kept until five
// minutes before it expires.
type entraToken struct {
	endpoint, client, secret, assertionFile string
	secrets                                 *secretSet
	mu                                      sync.Mutex
	token                                   string
	expires                                 time.Time
}

// newEntraToken is the service principal the environment names, nil for
// none.
func newEntraToken(getenv func(string) string, secrets *secretSet) (*entraToken, error) {
	client, tenant := getenv("AZURE_CLIENT_ID"), getenv("AZURE_TENANT_ID")
	file, secret := getenv("AZURE_FEDERATED_TOKEN_FILE"), getenv("AZURE_CLIENT_SECRET")
	if file == "" && secret == "" {
		return nil, nil
	}
	if client == "" || tenant == "" {
		return nil, fmt.Errorf("a service principal needs AZURE_CLIENT_ID and AZURE_TENANT_ID")
	}
	authority := strings.TrimRight(getenv("AZURE_AUTHORITY_HOST"), "/")
	if authority == "" {
		authority = "https://login.microsoftonline.com"
	}
	secrets.add("AZURE_CLIENT_SECRET", secret)
	return &entraToken{endpoint: authority + "/" + url.PathEscape(tenant) + "/oauth2/v2.0/token", client: client,
		secret: secret, assertionFile: file, secrets: secrets}, nil
}

func (e *entraToken) get(ctx context.Context) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.token != "" && time.Until(e.expires) > 5*time.Minute {
		return e.token, nil
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {e.client}, "scope": {azureScope}}
	if e.assertionFile != "" {
		data, err := os.ReadFile(e.assertionFile)
		if err != nil {
			return "", fmt.Errorf("AZURE_FEDERATED_TOKEN_FILE: %w", err)
		}
		assertion := strings.TrimSpace(string(data))
		e.secrets.add("AZURE_FEDERATED_TOKEN_FILE", assertion)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", assertion)
	} else {
		form.Set("client_secret", e.secret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if json.Unmarshal(body, &out) != nil || out.AccessToken == "" {
		if out.Error == "" {
			out.Error, out.Description = resp.Status, strings.TrimSpace(string(body))
		}
		return "", fmt.Errorf("token for %s: %s: %s", e.client, out.Error, out.Description)
	}
	e.token, e.expires = out.AccessToken, time.Now().Add(time.Duration(out.ExpiresIn)*time.Second)
	e.secrets.add("AZURE_OPENAI_AD_TOKEN", out.AccessToken)
	return e.token, nil
}
