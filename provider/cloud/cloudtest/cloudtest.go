// Package cloudtest is a fake Amazon Bedrock runtime on 127.0.0.1 for
// tests: it checks each request's SigV4 signature as the service does,
// recomputing it with aws-sdk-go-v2's signer from known credentials, and
// answers with the AWS event stream built by the SDK's own encoder, its
// chunks the events of a recorded Messages API stream.
package cloudtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Request is one request the fake took, whatever it answered.
type Request struct {
	Path   string
	Header http.Header
	Body   []byte
	// SigErr is why its signature was refused; nil when it was good.
	SigErr error
}

// Answer is what the fake sends for one request: Status and Body (an
// HTTP error), or Frames of an event stream.
type Answer struct {
	Status int
	Body   string
	Frames [][]byte
	// Tier is the service tier the answer says served the request
	// (X-Amzn-Bedrock-Service-Tier), "" for none.
	Tier string
}

// Bedrock is the fake runtime endpoint.
type Bedrock struct {
	URL    string
	Region string
	// Creds are the credentials a request must be signed with; a
	// function, for credentials that change (STS's).
	Creds func() aws.Credentials
	// Bearer, when set, is the Bedrock API key a request may carry
	// instead of a signature.
	Bearer string
	Now    func() time.Time

	srv   *httptest.Server
	mu    sync.Mutex
	queue []Answer
	reqs  []Request
}

// NewBedrock starts a fake for region whose requests must be signed with
// creds.
func NewBedrock(region string, creds aws.Credentials) *Bedrock {
	b := &Bedrock{Region: region, Creds: func() aws.Credentials { return creds }, Now: time.Now}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	b.URL = b.srv.URL
	return b
}

// Close stops the server.
func (b *Bedrock) Close() { b.srv.Close() }

// Enqueue adds answers, sent in order.
func (b *Bedrock) Enqueue(a ...Answer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queue = append(b.queue, a...)
}

// Requests returns what the fake took, in order.
func (b *Bedrock) Requests() []Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Request(nil), b.reqs...)
}

func (b *Bedrock) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var err error
	if b.Bearer != "" && r.Header.Get("Authorization") == "Bearer "+b.Bearer {
		err = nil
	} else {
		err = Verify(r, body, b.Creds(), b.Region, "bedrock", b.Now())
	}
	b.mu.Lock()
	b.reqs = append(b.reqs, Request{Path: r.URL.EscapedPath(), Header: r.Header.Clone(), Body: body, SigErr: err})
	var a Answer
	if err == nil && len(b.queue) > 0 {
		a, b.queue = b.queue[0], b.queue[1:]
	}
	b.mu.Unlock()
	switch {
	case err != nil:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-ErrorType", "InvalidSignatureException")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"message":%q}`, err.Error())
	case a.Status != 0:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.Status)
		io.WriteString(w, a.Body)
	case a.Frames == nil:
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"message":"fake Bedrock: no answer queued"}`)
	default:
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		if a.Tier != "" {
			w.Header().Set("X-Amzn-Bedrock-Service-Tier", a.Tier)
		}
		w.Header().Set("X-Amzn-Bedrock-Content-Type", "application/json")
		for _, f := range a.Frames {
			w.Write(f)
			if fl, ok := w.(http.Flusher); ok {
				fl.Flush()
			}
		}
	}
}

// Verify checks r's SigV4 signature as AWS does: it signs a copy of the
// request with the SDK's signer, with creds for region and service at the
// request's own time, which must be within five minutes of now, over the
// body's hash, and compares the two.
func Verify(r *http.Request, body []byte, creds aws.Credentials, region, service string, now time.Time) error {
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") {
		return fmt.Errorf("missing SigV4 Authorization header")
	}
	signed := ""
	for _, part := range strings.Split(strings.TrimPrefix(auth, "AWS4-HMAC-SHA256 "), ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "SignedHeaders="); ok {
			signed = v
		}
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("bad X-Amz-Date: %v", err)
	}
	if d := now.Sub(at); d > 5*time.Minute || d < -5*time.Minute {
		return awsError(fmt.Sprintf("Signature expired: %s is now earlier than %s", at.Format("20060102T150405Z"), now.Add(-5*time.Minute).Format("20060102T150405Z")))
	}
	cp, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	for _, h := range strings.Split(signed, ";") {
		if h != "host" && h != "content-length" {
			cp.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	cp.Header.Del("X-Amz-Date")
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, cp, hex.EncodeToString(sum[:]), service, region, at); err != nil {
		return err
	}
	if cp.Header.Get("Authorization") != auth {
		return awsError("The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.")
	}
	return nil
}

// awsError is a refusal in AWS's own words.
type awsError string

func (e awsError) Error() string { return string(e) }

// Frames turns a recorded Messages API stream (server-sent events) into
// the event stream Bedrock sends: one chunk frame per event, its JSON in
// base64 under "bytes", as the SDK's encoder frames it.
func Frames(sse []byte) [][]byte {
	var out [][]byte
	for _, line := range strings.Split(string(sse), "\n") {
		data, ok := strings.CutPrefix(line, "data:")
		data = strings.TrimSpace(data)
		if !ok || data == "" || data[0] != '{' {
			continue
		}
		out = append(out, Chunk([]byte(data)))
	}
	return out
}

// Chunk is one chunk frame holding event.
func Chunk(event []byte) []byte {
	payload := fmt.Sprintf(`{"bytes":%q,"p":"abcdefghij"}`, base64.StdEncoding.EncodeToString(event))
	return frame(eventstream.Headers{
		{Name: ":event-type", Value: eventstream.StringValue("chunk")},
		{Name: ":content-type", Value: eventstream.StringValue("application/json")},
		{Name: ":message-type", Value: eventstream.StringValue("event")},
	}, []byte(payload))
}

// Exception is an exception frame of type typ (throttlingException, …).
func Exception(typ, message string) []byte {
	return frame(eventstream.Headers{
		{Name: ":exception-type", Value: eventstream.StringValue(typ)},
		{Name: ":content-type", Value: eventstream.StringValue("application/json")},
		{Name: ":message-type", Value: eventstream.StringValue("exception")},
	}, []byte(fmt.Sprintf(`{"message":%q}`, message)))
}

func frame(h eventstream.Headers, payload []byte) []byte {
	var buf bytes.Buffer
	if err := eventstream.NewEncoder().Encode(&buf, eventstream.Message{Headers: h, Payload: payload}); err != nil {
		panic(err)
	}
	return buf.Bytes()
}
