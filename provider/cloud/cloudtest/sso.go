package cloudtest

import (
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
// Lifetime.
type SSO struct {
	URL         string
	AccessToken string
	AccountID   string
	RoleName    string
	Lifetime    time.Duration

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
	case call.Token == "" || call.Token != s.AccessToken:
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
