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
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/awlrun/awl/provider"
)

// NameVertex is Google Vertex AI's provider name.
const NameVertex = "vertex"

// vertexScope is the OAuth scope Vertex AI's endpoints take.
const vertexScope = "https://www.googleapis.com/auth/cloud-platform"

// vertexSpec is Google Vertex AI: Anthropic's models through
// streamRawPredict, with Application Default Credentials.
var vertexSpec = provider.Spec{
	Name: NameVertex, Wire: provider.WireAnthropic, Family: provider.NameAnthropic,
	BaseURLVar:       "ANTHROPIC_VERTEX_BASE_URL",
	DefaultModel:     "claude-sonnet-5-5",
	AnthropicVersion: "vertex-2023-10-16",
	Cloud:            newVertex,
	TableModel:       vertexTableModel,
	// Vertex AI serves Claude pay-as-you-go, or from the project's
	// Provisioned Throughput first when it has some: streamRawPredict
	// takes no service tier. auto and default are what it does anyway.
	ServiceTiers: func(tier string) (string, bool) { return "", tier == "auto" || tier == "default" },
	NoTier:       "Claude on Vertex AI has no flex or priority tier: it is served pay-as-you-go, or from the project's Provisioned Throughput when it has some",
	CacheTTL: func(_, ttl string) (bool, string) {
		return ttl == "1h", "Vertex AI keeps Claude's prompt cache 5 minutes or 1 hour (--cache-ttl 5m or 1h)"
	},
}

// vertex is Vertex AI's endpoint for one project and region, with the
// Application Default Credentials' tokens.
type vertex struct {
	base, project, region string
	tokens                oauth2.TokenSource
	secrets               *secretSet
}

// newVertex finds the Application Default Credentials as Google's
// libraries do (GOOGLE_APPLICATION_CREDENTIALS: a service account's key,
// an external_account file such as google-github-actions/auth writes for
// workload identity federation, an authorized user; else gcloud's
// application_default_credentials.json; else the metadata server) and
// takes a first token, so a run without credentials fails at start.
func newVertex(opts provider.Options) (provider.Cloud, error) {
	getenv := env(opts)
	v := &vertex{secrets: newSecrets(opts)}
	v.region, _ = first(getenv, "CLOUD_ML_REGION", "GOOGLE_CLOUD_LOCATION", "VERTEX_LOCATION")
	if v.region == "" {
		v.region = "global"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	creds, err := google.FindDefaultCredentialsWithParams(ctx, google.CredentialsParams{Scopes: []string{vertexScope}})
	if err != nil {
		return nil, configErr(NameVertex, "no Google credentials: set GOOGLE_APPLICATION_CREDENTIALS to a key or workload identity file (google-github-actions/auth writes one), or run `gcloud auth application-default login`: "+err.Error())
	}
	v.project, _ = first(getenv, "ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT", "GCLOUD_PROJECT")
	if v.project == "" {
		v.project = creds.ProjectID
	}
	if v.project == "" {
		return nil, configErr(NameVertex, "no Google Cloud project: set GOOGLE_CLOUD_PROJECT (or ANTHROPIC_VERTEX_PROJECT_ID)")
	}
	v.fileSecrets(creds.JSON)
	v.tokens = oauth2.ReuseTokenSource(nil, creds.TokenSource)
	if _, err := v.token(); err != nil {
		return nil, configErr(NameVertex, "Google credentials: "+err.Error())
	}
	v.base = opts.BaseURL
	if v.base == "" {
		host := "aiplatform.googleapis.com"
		if v.region != "global" {
			host = v.region + "-" + host
		}
		v.base = "https://" + host
	}
	v.base = strings.TrimRight(v.base, "/")
	return v, nil
}

// token is a current access token, recorded for the redactor.
func (v *vertex) token() (string, error) {
	t, err := v.tokens.Token()
	if err != nil {
		return "", err
	}
	v.secrets.add("GOOGLE_ACCESS_TOKEN", t.AccessToken)
	return t.AccessToken, nil
}

// fileSecrets records the secrets of the credentials file: a service
// account's private key, a user's refresh token and client secret, a
// workload identity file's subject token (the file it names), and those
// of an impersonating file's source credentials.
func (v *vertex) fileSecrets(data []byte) {
	type file struct {
		PrivateKey       string `json:"private_key"`
		RefreshToken     string `json:"refresh_token"`
		ClientSecret     string `json:"client_secret"`
		CredentialSource struct {
			File string `json:"file"`
		} `json:"credential_source"`
	}
	var f struct {
		file
		Source *file `json:"source_credentials"`
	}
	if json.Unmarshal(data, &f) != nil {
		return
	}
	for _, c := range []*file{&f.file, f.Source} {
		if c == nil {
			continue
		}
		v.secrets.add("GOOGLE_APPLICATION_CREDENTIALS", c.PrivateKey)
		v.secrets.add("GOOGLE_APPLICATION_CREDENTIALS", c.RefreshToken)
		v.secrets.add("GOOGLE_APPLICATION_CREDENTIALS", c.ClientSecret)
		if c.CredentialSource.File != "" {
			if tok, err := os.ReadFile(c.CredentialSource.File); err == nil {
				v.secrets.add("GOOGLE_APPLICATION_CREDENTIALS", strings.TrimSpace(string(tok)))
			}
		}
	}
}

// URL implements provider.Cloud.
func (v *vertex) URL(model string) string {
	return fmt.Sprintf("%s/v1/projects/%s/locations/%s/publishers/anthropic/models/%s:streamRawPredict",
		v.base, url.PathEscape(v.project), url.PathEscape(v.region), url.PathEscape(model))
}

// Authorize implements provider.Cloud: the ADC's access token.
func (v *vertex) Authorize(_ context.Context, req *http.Request, _ func() io.Reader) error {
	tok, err := v.token()
	if err != nil {
		return authErr(NameVertex, "Google credentials: "+err.Error())
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Del("anthropic-version") // the body's anthropic_version says it
	return nil
}

// Stream implements provider.Cloud: Vertex AI streams the Messages API's
// own server-sent events.
func (v *vertex) Stream(r io.Reader, h http.Header) (io.Reader, string) {
	return r, h.Get("Content-Type")
}

// Secrets implements provider.Cloud.
func (v *vertex) Secrets() []provider.Secret { return v.secrets.all() }

// vertexTableModel maps a Vertex AI model id to the model table's name:
// claude-sonnet-4-5@20250929 is claude-sonnet-4-5-20250929.
func vertexTableModel(id string) string { return strings.Replace(id, "@", "-", 1) }
