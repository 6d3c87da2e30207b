package cloud

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/tidwall/gjson"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/provider/cloud/cloudtest"
	"github.com/awlrun/awl/runner/modelinfo"
)

// The credentials the fakes expect; none is real.
var testCreds = aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}

// testEnv is a test's whole environment: no AWS_ variable, shared file or
// metadata service of the machine reaches a test. The process's own
// AWS_ variables are scrubbed too, for the SDK packages that read them
// (the IMDS client).
func testEnv(t *testing.T, vars map[string]string) func(string) string {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") || strings.HasPrefix(k, "GOOGLE_") || strings.HasPrefix(k, "AZURE_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	home := t.TempDir()
	env := map[string]string{"HOME": home, "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_CONFIG_FILE": filepath.Join(home, "no-config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(home, "no-credentials")}
	for k, v := range vars {
		env[k] = v
	}
	return func(k string) string { return env[k] }
}

func staticEnv(t *testing.T, region string, more map[string]string) func(string) string {
	vars := map[string]string{"AWS_ACCESS_KEY_ID": testCreds.AccessKeyID, "AWS_SECRET_ACCESS_KEY": testCreds.SecretAccessKey, "AWS_REGION": region}
	for k, v := range more {
		vars[k] = v
	}
	return testEnv(t, vars)
}

func recorded(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "wire", "anthropic", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func hello() provider.Request {
	return provider.Request{Model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", Reasoning: "low",
		Messages: []conv.Message{{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("hi")}}}}
}

func newBedrockProvider(t *testing.T, getenv func(string) string, base string, retries int) provider.Provider {
	t.Helper()
	p, err := provider.New(NameBedrock, provider.Options{BaseURL: base, Getenv: getenv, MaxRetries: retries,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBedrockStream: a signed InvokeModelWithResponseStream request with
// the Messages body Bedrock takes, and the recorded Messages stream sent
// back as event-stream frames decodes to the message the Anthropic API's
// own stream gives.
func TestBedrockStream(t *testing.T) {
	fake := cloudtest.NewBedrock("us-east-1", testCreds)
	defer fake.Close()
	sse := recorded(t, "thinking-text.sse")
	fake.Enqueue(cloudtest.Answer{Frames: cloudtest.Frames(sse)})
	p := newBedrockProvider(t, staticEnv(t, "us-east-1", nil), fake.URL, 0)
	var events []provider.Event
	msg, err := p.Stream(context.Background(), hello(), func(e provider.Event) { events = append(events, e) })
	if err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].SigErr != nil {
		t.Fatalf("requests %+v", reqs)
	}
	r := reqs[0]
	if r.Path != "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream" {
		t.Errorf("path %s", r.Path)
	}
	body := string(r.Body)
	if gjson.Get(body, "anthropic_version").Str != "bedrock-2023-05-31" || gjson.Get(body, "model").Exists() || gjson.Get(body, "stream").Exists() {
		t.Errorf("body %s", body)
	}
	if !strings.HasPrefix(body, `{"anthropic_version":"bedrock-2023-05-31","max_tokens":`) || gjson.Get(body, "thinking.type").Str != "enabled" {
		t.Errorf("body %s", body)
	}
	if r.Header.Get("Anthropic-Version") != "" || r.Header.Get("X-Api-Key") != "" {
		t.Errorf("headers %v", r.Header)
	}
	// The same stream from the Anthropic API.
	direct := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(sse)
	}))
	defer direct.Close()
	a, _ := provider.New(provider.NameAnthropic, provider.Options{APIKey: "k", BaseURL: direct.URL})
	want, err := a.Stream(context.Background(), hello(), nil)
	if err != nil {
		t.Fatal(err)
	}
	msg.Provider, want.Provider = "", ""
	if !reflect.DeepEqual(msg, want) || len(msg.Content) != 2 || msg.Content[0].Signature == "" {
		t.Errorf("bedrock %+v\nanthropic %+v", msg, want)
	}
	if len(events) == 0 {
		t.Error("no deltas")
	}
}

// TestBedrockSignatureChecked: the fake refuses what AWS refuses, and awl
// reports it as an auth failure: a signature for another region, a body
// changed after signing, a clock off by more than five minutes; and the
// verifier itself refuses another service's signature.
func TestBedrockSignatureChecked(t *testing.T) {
	t.Run("region", func(t *testing.T) {
		fake := cloudtest.NewBedrock("us-east-1", testCreds)
		defer fake.Close()
		p := newBedrockProvider(t, staticEnv(t, "eu-west-1", nil), fake.URL, 0)
		_, err := p.Stream(context.Background(), hello(), nil)
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindAuth || pe.Status != 403 || !strings.Contains(pe.Message, "signature we calculated does not match") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("payload", func(t *testing.T) {
		fake := cloudtest.NewBedrock("us-east-1", testCreds)
		defer fake.Close()
		// A proxy that changes the body after it was signed.
		target, _ := url.Parse(fake.URL)
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body := make([]byte, r.ContentLength)
			r.Body.Read(body)
			body = []byte(strings.Replace(string(body), `"hi"`, `"ho"`, 1))
			req, _ := http.NewRequest(r.Method, target.String()+r.URL.RequestURI(), strings.NewReader(string(body)))
			req.Header = r.Header.Clone()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				w.WriteHeader(502)
				return
			}
			defer resp.Body.Close()
			w.WriteHeader(resp.StatusCode)
			buf := make([]byte, 4096)
			n, _ := resp.Body.Read(buf)
			w.Write(buf[:n])
		}))
		defer proxy.Close()
		p := newBedrockProvider(t, staticEnv(t, "us-east-1", nil), proxy.URL, 0)
		_, err := p.Stream(context.Background(), hello(), nil)
		if reqs := fake.Requests(); len(reqs) != 1 || reqs[0].SigErr == nil {
			t.Fatalf("a changed body passed: %v %+v", err, reqs)
		}
	})
	t.Run("date", func(t *testing.T) {
		fake := cloudtest.NewBedrock("us-east-1", testCreds)
		defer fake.Close()
		fake.Now = func() time.Time { return time.Now().Add(10 * time.Minute) }
		p := newBedrockProvider(t, staticEnv(t, "us-east-1", nil), fake.URL, 0)
		_, err := p.Stream(context.Background(), hello(), nil)
		if err == nil || !strings.Contains(err.Error(), "Signature expired") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("service", func(t *testing.T) {
		fake := cloudtest.NewBedrock("us-east-1", testCreds)
		defer fake.Close()
		fake.Enqueue(cloudtest.Answer{Frames: cloudtest.Frames(recorded(t, "text-max-tokens.sse"))})
		p := newBedrockProvider(t, staticEnv(t, "us-east-1", nil), fake.URL, 0)
		if _, err := p.Stream(context.Background(), hello(), nil); err != nil {
			t.Fatal(err)
		}
		r := fake.Requests()[0]
		req, _ := http.NewRequest(http.MethodPost, fake.URL+r.Path, nil)
		req.Host = strings.TrimPrefix(fake.URL, "http://")
		req.Header = r.Header
		if err := cloudtest.Verify(req, r.Body, testCreds, "us-east-1", "bedrock", time.Now()); err != nil {
			t.Fatalf("the good request does not verify: %v", err)
		}
		if err := cloudtest.Verify(req, r.Body, testCreds, "us-east-1", "s3", time.Now()); err == nil {
			t.Fatal("a signature for bedrock verified as s3's")
		}
		other := testCreds
		other.SecretAccessKey = "another-secret"
		if err := cloudtest.Verify(req, r.Body, other, "us-east-1", "bedrock", time.Now()); err == nil {
			t.Fatal("another secret verified")
		}
	})
}

// TestBedrockBrokenStreams: a frame that fails its CRC check and a stream
// cut inside a frame are retried, and with no retry left are a transient
// failure (exit 5) that names what was wrong; a stream cut between frames
// is one that ended early. The stream's exceptions are the Messages API's
// errors: throttling is retried, a validation exception is not.
func TestBedrockBrokenStreams(t *testing.T) {
	good := cloudtest.Frames(recorded(t, "text-max-tokens.sse"))
	badCRC := append([][]byte(nil), good...)
	last := append([]byte(nil), good[2]...)
	last[len(last)-1] ^= 0xff
	badCRC[2] = last
	cut := append([][]byte(nil), good[:3]...)
	cut[2] = cut[2][:len(cut[2])-7]
	for _, tc := range []struct {
		name   string
		frames [][]byte
		want   string
		retry  bool
	}{
		{"crc", badCRC, "failed its CRC check", true},
		{"cut-frame", cut, "cut inside a frame", true},
		{"cut-between", good[:3], "stream ended before its terminal event", true},
		{"throttled", append(good[:2:2], cloudtest.Exception("throttlingException", "Too many requests, please wait before trying again.")), "throttlingException: Too many requests", true},
		{"validation", [][]byte{cloudtest.Exception("validationException", "messages: field required")}, "validationException: messages: field required", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := cloudtest.NewBedrock("us-east-1", testCreds)
			defer fake.Close()
			fake.Enqueue(cloudtest.Answer{Frames: tc.frames}, cloudtest.Answer{Frames: good})
			p := newBedrockProvider(t, staticEnv(t, "us-east-1", nil), fake.URL, 1)
			var retries []provider.Event
			msg, err := p.Stream(context.Background(), hello(), func(e provider.Event) {
				if e.Kind == provider.EventRetry {
					retries = append(retries, e)
				}
			})
			if !tc.retry {
				var pe *provider.Error
				if !errors.As(err, &pe) || pe.Kind != provider.KindRequest || !strings.Contains(pe.Message, tc.want) || len(fake.Requests()) != 1 {
					t.Fatalf("err %v after %d requests", err, len(fake.Requests()))
				}
				return
			}
			if err != nil || msg.Text() == "" || len(retries) != 1 || !strings.Contains(retries[0].Err, tc.want) {
				t.Fatalf("err %v, text %q, retries %+v", err, msg.Text(), retries)
			}
			// No retry left: exit 5's kind, naming the fault.
			fake.Enqueue(cloudtest.Answer{Frames: tc.frames})
			p = newBedrockProvider(t, staticEnv(t, "us-east-1", nil), fake.URL, 0)
			_, err = p.Stream(context.Background(), hello(), nil)
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Kind != provider.KindTransient || !strings.Contains(pe.Message, tc.want) {
				t.Fatalf("without retries: %v", err)
			}
		})
	}
}

// TestBedrockHTTPErrors: Bedrock's JSON error bodies, classified as the
// other providers' are; the thinking refusal is recognised.
func TestBedrockHTTPErrors(t *testing.T) {
	fake := cloudtest.NewBedrock("us-east-1", testCreds)
	defer fake.Close()
	fake.Enqueue(cloudtest.Answer{Status: 400, Body: `{"message":"\"thinking.type.enabled\" is not supported for this model. Use \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking behavior."}`},
		cloudtest.Answer{Status: 429, Body: `{"message":"Too many tokens, please wait before trying again."}`})
	p := newBedrockProvider(t, staticEnv(t, "us-east-1", nil), fake.URL, 0)
	_, err := p.Stream(context.Background(), hello(), nil)
	if !provider.RefusesBudgetThinking(err) {
		t.Fatalf("err %v", err)
	}
	_, err = p.Stream(context.Background(), hello(), nil)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindTransient || pe.Status != 429 {
		t.Fatalf("err %v", err)
	}
}

// TestBedrockModelIDs: model ids, inference profiles and ARNs find the
// model table's entries (window, prices, thinking form).
func TestBedrockModelIDs(t *testing.T) {
	table := modelinfo.Default()
	for id, want := range map[string]string{
		"anthropic.claude-sonnet-4-5-20250929-v1:0":                                             "claude-sonnet-4-5",
		"us.anthropic.claude-sonnet-4-5-20250929-v1:0":                                          "claude-sonnet-4-5",
		"global.anthropic.claude-sonnet-5-5":                                                    "claude-sonnet-5-5",
		"eu.anthropic.claude-opus-4-6-v1":                                                       "claude-opus-4-6",
		"anthropic.claude-3-5-haiku-20241022-v1:0":                                              "claude-3-5-haiku-latest",
		"apac.anthropic.claude-haiku-4-5-20251001-v1:0":                                         "claude-haiku-4-5",
		"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-opus-4-7": "claude-opus-4-7",
		"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3":           "",
		"amazon.nova-pro-v1:0":                                                                  "",
	} {
		m, ok := table.Lookup(NameBedrock, id)
		if ok != (want != "") || ok && m.Name != want {
			t.Errorf("%s: %q %v, want %q", id, m.Name, ok, want)
		}
	}
	if m, _ := table.Lookup(NameBedrock, "global.anthropic.claude-opus-4-7"); m.Thinking != modelinfo.ThinkingAdaptive {
		t.Errorf("opus 4.7 on bedrock thinks %q", m.Thinking)
	}
}

// TestCloudThinkingReplay: a tool loop on a cloud sends its own thinking
// blocks back, signature and all, as the API requires before a tool
// result; thinking another provider signed is not sent.
func TestCloudThinkingReplay(t *testing.T) {
	for _, name := range []string{NameBedrock, NameVertex} {
		thinking := func(from, sig string) conv.Message {
			return conv.Message{Role: conv.RoleAssistant, Provider: from, Content: []conv.Block{
				{Type: conv.BlockThinking, Thinking: "let me look", Signature: sig},
				{Type: conv.BlockToolUse, ID: "toolu_1", Name: "ls", Input: "{}"}}}
		}
		result := conv.Message{Role: conv.RoleUser, Content: []conv.Block{{Type: conv.BlockToolResult, ToolUseID: "toolu_1", Content: "a.txt"}}}
		user := conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("hi")}}
		req := provider.Request{Model: "m", Reasoning: "low", Messages: []conv.Message{user, thinking(name, "sig-"+name), result}}
		body, err := provider.EncodeRequest(name, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := gjson.GetBytes(body, "messages.1.content.0.signature").Str; got != "sig-"+name {
			t.Errorf("%s: its own thinking not sent back: %s", name, body)
		}
		req.Messages[1] = thinking(provider.NameAnthropic, "sig-anthropic")
		body, _ = provider.EncodeRequest(name, req)
		if gjson.GetBytes(body, "messages.1.content.0.type").Str != "tool_use" {
			t.Errorf("%s: another provider's thinking sent: %s", name, body)
		}
	}
}
