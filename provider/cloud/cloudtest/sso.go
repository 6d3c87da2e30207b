package cloudtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// SSO is a fake IAM Identity Center portal (the SSO service's
// GetRoleCredentials, GET /federation/credentials) on 127.0.0.1, as the
// portal checks a request: the access token `aws sso login` cached must be
// AccessToken, sent in the x-amz-sso_bearer_token header, and the
// account and role must be the ones it grants. Each success issues new
// credentials (Issue's, numbered after STS's range) that expire after
// Lifetime. It is the SSO OIDC service too: CreateToken (POST /token)
// with the refresh_token grant, for ClientID and ClientSecret and
// RefreshToken, gives a new AccessToken (which the portal then takes)
// and a new RefreshToken, as the service rotates them.
type SSO struct {
	URL         string
	AccessToken string
	AccountID   string
	RoleName    string
	Lifetime    time.Duration

	ClientID, ClientSecret, RefreshToken string
	// Refreshes are the CreateToken bodies taken, decoded.
	Refreshes []map[string]any

	srv    *httptest.Server
	mu     sync.Mutex
	calls  []SSOCall
	issued []aws.Credentials
}

// SSOCall is one request the portal took.
type SSOCall struct {
	Method, Path, AccountID, RoleName, Token string
	Status                                   int
}

// NewSSO starts a fake portal that grants role in account to token.
func NewSSO(token, account, role string) *SSO {
	s := &SSO{AccessToken: token, AccountID: account, RoleName: role, Lifetime: time.Hour}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *SSO) Close() { s.srv.Close() }

// Calls returns the requests taken, in order.
func (s *SSO) Calls() []SSOCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SSOCall(nil), s.calls...)
}

// Token is the access token the portal takes now.
func (s *SSO) Token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.AccessToken
}

// Latest is the credentials issued last.
func (s *SSO) Latest() aws.Credentials {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.issued) == 0 {
		return aws.Credentials{}
	}
	return s.issued[len(s.issued)-1]
}

func (s *SSO) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/token" {
		s.createToken(w, r)
		return
	}
	io.Copy(io.Discard, r.Body)
	q := r.URL.Query()
	call := SSOCall{Method: r.Method, Path: r.URL.Path, AccountID: q.Get("account_id"), RoleName: q.Get("role_name"), Token: r.Header.Get("X-Amz-Sso_bearer_token")}
	w.Header().Set("Content-Type", "application/json")
	fail := func(status int, typ, msg string) {
		call.Status = status
		w.Header().Set("X-Amzn-Errortype", typ)
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"message":%q}`, msg)
	}
	switch {
	case r.Method != http.MethodGet || r.URL.Path != "/federation/credentials" || call.AccountID == "" || call.RoleName == "":
		fail(http.StatusBadRequest, "InvalidRequestException", "account_id and role_name are required")
	case call.Token == "" || call.Token != s.Token():
		fail(http.StatusUnauthorized, "UnauthorizedException", "Session token not found or invalid")
	case call.AccountID != s.AccountID || call.RoleName != s.RoleName:
		fail(http.StatusForbidden, "ForbiddenException", "No access")
	default:
		call.Status = http.StatusOK
		s.mu.Lock()
		c := Issue(1000 + len(s.issued) + 1)
		c.CanExpire, c.Expires = true, time.Now().Add(s.Lifetime).Truncate(time.Millisecond)
		s.issued = append(s.issued, c)
		s.mu.Unlock()
		fmt.Fprintf(w, `{"roleCredentials":{"accessKeyId":%q,"secretAccessKey":%q,"sessionToken":%q,"expiration":%d}}`,
			c.AccessKeyID, c.SecretAccessKey, c.SessionToken, c.Expires.UnixMilli())
	}
	s.mu.Lock()
	s.calls = append(s.calls, call)
	s.mu.Unlock()
}

// createToken is SSO OIDC's CreateToken for the refresh_token grant.
func (s *SSO) createToken(w http.ResponseWriter, r *http.Request) {
	var in map[string]any
	err := json.NewDecoder(r.Body).Decode(&in)
	w.Header().Set("Content-Type", "application/json")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Refreshes = append(s.Refreshes, in)
	switch {
	case err != nil || r.Method != http.MethodPost || in["grantType"] != "refresh_token":
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"invalid_request","error_description":"grantType refresh_token expected"}`)
	case in["clientId"] != s.ClientID || in["clientSecret"] != s.ClientSecret:
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":"invalid_client","error_description":"Client authentication failed"}`)
	case s.RefreshToken == "" || in["refreshToken"] != s.RefreshToken:
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"invalid_grant","error_description":"Invalid refresh token provided"}`)
	default:
		n := len(s.Refreshes)
		s.AccessToken = fmt.Sprintf("sso-refreshed-access-%d-SENTINEL", n)
		s.RefreshToken = fmt.Sprintf("sso-rotated-refresh-%d-SENTINEL", n)
		fmt.Fprintf(w, `{"accessToken":%q,"expiresIn":28800,"refreshToken":%q,"tokenType":"Bearer"}`, s.AccessToken, s.RefreshToken)
	}
}
