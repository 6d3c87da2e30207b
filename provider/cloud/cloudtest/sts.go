package cloudtest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// STS is a fake AWS Security Token Service on 127.0.0.1. It answers
// AssumeRoleWithWebIdentity (an unsigned query: the web identity token
// is the credential, checked against WebIdentityToken) and AssumeRole
// (signed: the SigV4 signature is recomputed with the SDK's signer from
// Caller, for service sts in Region, as Verify does). Each success issues
// new credentials, numbered, that expire after Lifetime (0: at once, so
// the next use refreshes them); a refusal is STS's XML error document.
type STS struct {
	URL              string
	Region           string
	WebIdentityToken string
	// Caller are the credentials an AssumeRole must be signed with.
	Caller   aws.Credentials
	Lifetime time.Duration
	// Issued, when set, is told each issue's credentials before STS
	// answers.
	Issued func(aws.Credentials)

	srv    *httptest.Server
	mu     sync.Mutex
	calls  []STSCall
	issued []aws.Credentials
}

// STSCall is one request STS took.
type STSCall struct {
	Action, RoleArn, SessionName, ExternalID string
	// Form is the request's whole form, ContentType its media type.
	Form        url.Values
	ContentType string
	// Err is why it was refused; nil when it was answered.
	Err error
}

// NewSTS starts a fake STS.
func NewSTS(region string) *STS {
	s := &STS{Region: region}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *STS) Close() { s.srv.Close() }

// Calls returns the requests taken, in order.
func (s *STS) Calls() []STSCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]STSCall(nil), s.calls...)
}

// Latest is the credentials issued last (the zero value before any).
func (s *STS) Latest() aws.Credentials {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.issued) == 0 {
		return aws.Credentials{}
	}
	return s.issued[len(s.issued)-1]
}

// Issue returns credentials numbered n, as STS would issue them.
func Issue(n int) aws.Credentials {
	return aws.Credentials{AccessKeyID: fmt.Sprintf("ASIASTS%013d", n), SecretAccessKey: fmt.Sprintf("sts-secret-%d-Zm9vYmFyYmF6cXV4", n),
		SessionToken: fmt.Sprintf("sts-session-token-%d-SENTINEL-IQoJb3JpZ2lu", n)}
}

func (s *STS) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(body))
	call := STSCall{Action: form.Get("Action"), RoleArn: form.Get("RoleArn"), SessionName: form.Get("RoleSessionName"), ExternalID: form.Get("ExternalId"),
		Form: form, ContentType: r.Header.Get("Content-Type")}
	code, msg := "", ""
	switch {
	case r.Method != http.MethodPost || form.Get("Version") != "2011-06-15" || call.RoleArn == "" || call.SessionName == "":
		code, msg = "ValidationError", "1 validation error detected: RoleArn, RoleSessionName and Version are required"
	case call.Action == "AssumeRoleWithWebIdentity" && r.Header.Get("Authorization") != "":
		code, msg = "ValidationError", "AssumeRoleWithWebIdentity is not signed"
	case call.Action == "AssumeRoleWithWebIdentity" && (s.WebIdentityToken == "" || form.Get("WebIdentityToken") != s.WebIdentityToken):
		code, msg = "InvalidIdentityToken", "Incorrect token audience"
	case call.Action == "AssumeRoleWithWebIdentity":
	case call.Action == "AssumeRole":
		if err := Verify(r, body, s.Caller, s.Region, "sts", time.Now()); err != nil {
			code, msg = "SignatureDoesNotMatch", err.Error()
		}
	default:
		code, msg = "InvalidAction", "Could not find operation "+call.Action+" for version 2011-06-15"
	}
	w.Header().Set("Content-Type", "text/xml")
	if code != "" {
		call.Err = fmt.Errorf("%s: %s", code, msg)
		s.mu.Lock()
		s.calls = append(s.calls, call)
		s.mu.Unlock()
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ErrorResponse>`, code, xmlEscape(msg))
		return
	}
	s.mu.Lock()
	c := Issue(len(s.issued) + 1)
	c.CanExpire, c.Expires = true, time.Now().Add(s.Lifetime).UTC().Truncate(time.Second)
	s.issued = append(s.issued, c)
	s.calls = append(s.calls, call)
	s.mu.Unlock()
	if s.Issued != nil {
		s.Issued(c)
	}
	fmt.Fprintf(w, `<%[1]sResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <%[1]sResult>
    <Credentials>
      <AccessKeyId>%[2]s</AccessKeyId>
      <SecretAccessKey>%[3]s</SecretAccessKey>
      <SessionToken>%[4]s</SessionToken>
      <Expiration>%[5]s</Expiration>
    </Credentials>
    <AssumedRoleUser><Arn>%[6]s/%[7]s</Arn><AssumedRoleId>AROA3XFRBF535PLBIFPI4:%[7]s</AssumedRoleId></AssumedRoleUser>
  </%[1]sResult>
  <ResponseMetadata><RequestId>ad4156e9-bce1-11e2-82e6-6b6efEXAMPLE</RequestId></ResponseMetadata>
</%[1]sResponse>`, call.Action, c.AccessKeyID, c.SecretAccessKey, c.SessionToken, c.Expires.Format(time.RFC3339), call.RoleArn, call.SessionName)
}

func xmlEscape(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			out = append(out, "&lt;"...)
		case '>':
			out = append(out, "&gt;"...)
		case '&':
			out = append(out, "&amp;"...)
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}
