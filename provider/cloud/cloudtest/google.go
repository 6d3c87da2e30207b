package cloudtest

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Google is a fake of Google's token endpoints and metadata server on
// 127.0.0.1: the OAuth token endpoint a service account's signed JWT is
// exchanged at (the signature checked with the account's public key),
// the STS token exchange of workload identity federation (the subject
// token checked), and the metadata server's token (with its
// Metadata-Flavor header). Each gives AccessToken. The IAM Service
// Account Credentials API's generateAccessToken, which impersonation
// calls with one of those tokens, gives ImpersonatedToken for Target.
type Google struct {
	URL         string
	AccessToken string
	// Key is the service account's key; Subject the subject token a
	// workload identity pool takes; Email the account.
	Key     *rsa.PrivateKey
	Subject string
	Email   string
	Project string
	// Target is the service account the caller may impersonate, through
	// Delegates (each projects/-/serviceAccounts/EMAIL) when set;
	// ImpersonatedToken its access token.
	Target            string
	Delegates         []string
	ImpersonatedToken string
	// RefreshToken and ClientSecret are an authorized user's, as
	// `gcloud auth application-default login` stores them.
	RefreshToken, ClientSecret string

	srv   *httptest.Server
	mu    sync.Mutex
	calls []string
}

// NewGoogle starts the fake.
func NewGoogle(key *rsa.PrivateKey) *Google {
	g := &Google{AccessToken: "ya29.fake-access-token-0123456789", Key: key, Subject: "gh-oidc-subject-token", Email: "awl@proj-1.iam.gserviceaccount.com", Project: "proj-1",
		Target: "vertex-runner@proj-1.iam.gserviceaccount.com", ImpersonatedToken: "ya29.impersonated-SENTINEL-9876543210",
		RefreshToken: "1//user-refresh-SENTINEL-0123456789", ClientSecret: "d-FL95Q19q7MQmFpd7hHD0Ty"}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	g.URL = g.srv.URL
	return g
}

// Close stops the server.
func (g *Google) Close() { g.srv.Close() }

// Calls lists what was asked, "token", "sts", "metadata" or "iam", in
// order.
func (g *Google) Calls() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.calls...)
}

// Host is the fake's host:port, for GCE_METADATA_HOST.
func (g *Google) Host() string { return strings.TrimPrefix(g.URL, "http://") }

// ServiceAccountJSON is a service account key file whose token endpoint
// is the fake.
func (g *Google) ServiceAccountJSON() []byte {
	der := x509.MarshalPKCS1PrivateKey(g.Key)
	data, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": g.Project, "private_key_id": "k1",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der})), "client_email": g.Email,
		"client_id": "1", "token_uri": g.URL + "/token"})
	return data
}

// ExternalAccountJSON is a workload identity federation file, as
// google-github-actions/auth writes one, whose subject token is read
// from tokenFile and exchanged at the fake's STS.
func (g *Google) ExternalAccountJSON(tokenFile string) []byte {
	data, _ := json.Marshal(map[string]any{"type": "external_account",
		"audience":           "//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/ci/providers/github",
		"subject_token_type": "urn:ietf:params:oauth:token-type:jwt", "token_url": g.URL + "/v1/token",
		"credential_source": map[string]string{"file": tokenFile}})
	return data
}

// AuthorizedUserJSON is an authorized user's file, as `gcloud auth
// application-default login` writes one, whose token endpoint is the
// fake.
func (g *Google) AuthorizedUserJSON() []byte {
	data, _ := json.Marshal(map[string]string{"type": "authorized_user", "client_id": "764086051850-user.apps.googleusercontent.com",
		"client_secret": g.ClientSecret, "refresh_token": g.RefreshToken, "token_uri": g.URL + "/token"})
	return data
}

// ImpersonationURL is the generateAccessToken URL of account.
func (g *Google) ImpersonationURL(account string) string {
	return g.URL + "/v1/projects/-/serviceAccounts/" + account + ":generateAccessToken"
}

// ImpersonatedJSON is an impersonated_service_account file, as `gcloud
// auth application-default login --impersonate-service-account` writes
// one: source's credentials (a file's JSON) impersonate Target, through
// Delegates.
func (g *Google) ImpersonatedJSON(source []byte) []byte {
	data, _ := json.Marshal(map[string]any{"type": "impersonated_service_account",
		"service_account_impersonation_url": g.ImpersonationURL(g.Target), "delegates": g.Delegates,
		"source_credentials": json.RawMessage(source)})
	return data
}

// ExternalAccountImpersonatingJSON is ExternalAccountJSON with the
// service account impersonation google-github-actions/auth adds when
// given one (service_account): the federated token impersonates Target.
func (g *Google) ExternalAccountImpersonatingJSON(tokenFile string) []byte {
	var m map[string]any
	json.Unmarshal(g.ExternalAccountJSON(tokenFile), &m)
	m["service_account_impersonation_url"] = g.ImpersonationURL(g.Target)
	data, _ := json.Marshal(m)
	return data
}

func (g *Google) record(what string) {
	g.mu.Lock()
	g.calls = append(g.calls, what)
	g.mu.Unlock()
}

func (g *Google) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(body))
	ok := false
	switch {
	case r.URL.Path == "/token" && form.Get("grant_type") == "refresh_token":
		g.record("token")
		ok = form.Get("refresh_token") == g.RefreshToken && form.Get("client_id") == "764086051850-user.apps.googleusercontent.com" && form.Get("client_secret") == g.ClientSecret
	case r.URL.Path == "/token":
		g.record("token")
		ok = form.Get("grant_type") == "urn:ietf:params:oauth:grant-type:jwt-bearer" && g.checkJWT(form.Get("assertion"))
	case r.URL.Path == "/v1/token":
		g.record("sts")
		ok = form.Get("grant_type") == "urn:ietf:params:oauth:grant-type:token-exchange" && form.Get("subject_token") == g.Subject &&
			strings.Contains(form.Get("scope"), "cloud-platform")
	case strings.HasPrefix(r.URL.Path, "/v1/projects/-/serviceAccounts/"):
		g.record("iam")
		g.impersonate(w, r, body)
		return
	case r.URL.Path == "/computeMetadata/v1/instance/service-accounts/default/token":
		g.record("metadata")
		ok = r.Header.Get("Metadata-Flavor") == "Google"
	case r.URL.Path == "/computeMetadata/v1/project/project-id" && r.Header.Get("Metadata-Flavor") == "Google":
		io.WriteString(w, g.Project)
		return
	case strings.HasPrefix(r.URL.Path, "/computeMetadata/"):
		w.WriteHeader(http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`)
		return
	}
	fmt.Fprintf(w, `{"access_token":%q,"expires_in":3599,"token_type":"Bearer","issued_token_type":"urn:ietf:params:oauth:token-type:access_token"}`, g.AccessToken)
}

// checkJWT verifies a service account's assertion: RS256 by the key, for
// the account, to the token endpoint, asking for cloud-platform.
func (g *Google) checkJWT(jwt string) bool {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return false
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(&g.Key.PublicKey, crypto.SHA256, sum[:], sig) != nil {
		return false
	}
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Iss   string `json:"iss"`
		Aud   string `json:"aud"`
		Scope string `json:"scope"`
	}
	return json.Unmarshal(raw, &claims) == nil && claims.Iss == g.Email && claims.Aud == g.URL+"/token" && strings.Contains(claims.Scope, "cloud-platform")
}

// Vertex is a fake Vertex AI endpoint: a request must carry the access
// token; the answer is a recorded Messages API stream.
type Vertex struct {
	URL   string
	Token string
	srv   *httptest.Server
	mu    sync.Mutex
	queue [][]byte
	reqs  []Request
}

// NewVertex starts the fake; a request must carry token.
func NewVertex(token string) *Vertex {
	v := &Vertex{Token: token}
	v.srv = httptest.NewServer(http.HandlerFunc(v.serve))
	v.URL = v.srv.URL
	return v
}

// Close stops the server.
func (v *Vertex) Close() { v.srv.Close() }

// Enqueue adds streams (server-sent events) to answer with, in order.
func (v *Vertex) Enqueue(sse ...[]byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.queue = append(v.queue, sse...)
}

// Requests returns what the fake took.
func (v *Vertex) Requests() []Request {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]Request(nil), v.reqs...)
}

func (v *Vertex) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	v.mu.Lock()
	var sse []byte
	authed := r.Header.Get("Authorization") == "Bearer "+v.Token
	if authed && len(v.queue) > 0 {
		sse, v.queue = v.queue[0], v.queue[1:]
	}
	v.reqs = append(v.reqs, Request{Path: r.URL.EscapedPath(), Header: r.Header.Clone(), Body: body})
	v.mu.Unlock()
	switch {
	case !authed:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"code":401,"message":"Request had invalid authentication credentials. Expected OAuth 2 access token.","status":"UNAUTHENTICATED"}}`)
	case sse == nil:
		w.WriteHeader(http.StatusInternalServerError)
	default:
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(sse)
	}
}

// impersonate is generateAccessToken as IAM checks it: a POST for Target
// with a caller's access token, the delegation chain the account
// allows, and a lifetime of at most an hour, for the cloud-platform
// scope.
func (g *Google) impersonate(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Delegates []string `json:"delegates"`
		Scope     []string `json:"scope"`
		Lifetime  string   `json:"lifetime"`
	}
	w.Header().Set("Content-Type", "application/json")
	deny := func(code int, status, msg string) {
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error":{"code":%d,"message":%q,"status":%q}}`, code, msg, status)
	}
	switch {
	case r.Header.Get("Authorization") != "Bearer "+g.AccessToken:
		deny(http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token.")
	case r.Method != http.MethodPost || r.URL.Path != "/v1/projects/-/serviceAccounts/"+g.Target+":generateAccessToken":
		deny(http.StatusForbidden, "PERMISSION_DENIED", "Permission 'iam.serviceAccounts.getAccessToken' denied on resource (or it may not exist).")
	case json.Unmarshal(body, &req) != nil || !slices.Contains(req.Scope, "https://www.googleapis.com/auth/cloud-platform"):
		deny(http.StatusBadRequest, "INVALID_ARGUMENT", "Request contains an invalid argument.")
	case !slices.Equal(req.Delegates, g.Delegates) && !(len(req.Delegates) == 0 && len(g.Delegates) == 0):
		deny(http.StatusForbidden, "PERMISSION_DENIED", "Permission 'iam.serviceAccounts.getAccessToken' denied on resource (or it may not exist).")
	case req.Lifetime != "" && req.Lifetime != "3600s":
		deny(http.StatusBadRequest, "INVALID_ARGUMENT", "The lifetime must be at most 3600s.")
	default:
		fmt.Fprintf(w, `{"accessToken":%q,"expireTime":%q}`, g.ImpersonatedToken, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	}
}
