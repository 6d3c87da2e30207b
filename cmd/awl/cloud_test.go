package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/tidwall/gjson"
	"google.golang.org/protobuf/proto"

	"github.com/awlrun/awl/provider/cloud/cloudtest"
	"github.com/awlrun/awl/provider/providertest"
)

// awsTestCreds sign the requests to the fake Bedrock; none is real.
var awsTestCreds = aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "aws-SENTINEL-secret-0123456789", SessionToken: "aws-SENTINEL-session-token"}

// bedrockEnv is a run's environment for the fake Bedrock: every AWS_,
// GOOGLE_ and AZURE_ variable of the machine scrubbed, the instance
// metadata service off, no shared files, the test's credentials.
func bedrockEnv(t *testing.T, fake *cloudtest.Bedrock) string {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") || strings.HasPrefix(k, "GOOGLE_") || strings.HasPrefix(k, "AZURE_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	srv := providertest.New()
	t.Cleanup(srv.Close)
	tmp := keyEnv(t, srv)
	t.Setenv("HOME", tmp)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(tmp, "no-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(tmp, "no-credentials"))
	t.Setenv("AWS_ACCESS_KEY_ID", awsTestCreds.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", awsTestCreds.SecretAccessKey)
	t.Setenv("AWS_SESSION_TOKEN", awsTestCreds.SessionToken)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", fake.URL)
	return tmp
}

// frames is a scripted turn (providertest) as Bedrock's event stream,
// answered by the model Bedrock names in it, with usage.
func frames(t providertest.Turn) cloudtest.Answer {
	t.Model, t.InputTokens, t.OutputTokens = "claude-sonnet-4-5-20250929", 1000, 100
	return cloudtest.Answer{Frames: cloudtest.Frames(providertest.Stream("anthropic", t).Body)}
}

func toolTurn(id, command string) providertest.Turn {
	input, _ := json.Marshal(map[string]string{"command": command})
	return providertest.Turn{Calls: []providertest.Call{{ID: id, Name: "bash", Input: string(input)}}}
}

func awl(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), append([]string{"run", "--no-stdin"}, args...), nil, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestBedrockRun: awl run --provider bedrock signs its requests, prices
// an inference profile as its model, keeps the cloud's secrets from the
// tools (and, with --share-cloud-credentials, passes them, redacted in
// what is recorded), and a resumed session's requests extend the first
// run's byte for byte.
func TestBedrockRun(t *testing.T) {
	fake := cloudtest.NewBedrock("us-east-1", awsTestCreds)
	defer fake.Close()
	bedrockEnv(t, fake)
	const model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	fake.Enqueue(frames(toolTurn("toolu_1", "echo key=$AWS_SECRET_ACCESS_KEY token=$AWS_SESSION_TOKEN")),
		frames(providertest.Turn{Text: "done"}))
	code, out, errs := awl(t, "--provider", "bedrock", "--model", model, "-o", "json", "print the keys")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		CostUSD   *float64 `json:"cost_usd"`
		SessionID string   `json:"session_id"`
	}
	json.Unmarshal([]byte(out), &res)
	// 2000 input and 200 output tokens at claude-sonnet-4-5's $3 and $15.
	if res.CostUSD == nil || *res.CostUSD != 0.009 {
		t.Errorf("cost %v: the inference profile is not priced as claude-sonnet-4-5", res.CostUSD)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[0].SigErr != nil || reqs[1].SigErr != nil {
		t.Fatalf("requests %+v", reqs)
	}
	result := gjson.GetBytes(reqs[1].Body, `messages.#(role=="user")#.content.#(type=="tool_result").content`).String()
	if !strings.Contains(result, "key= token=") {
		t.Errorf("the tool saw the cloud's secrets: %s", result)
	}

	// Resumed, with the credentials shared: the tool has them, and what
	// is recorded and sent has them redacted.
	fake.Enqueue(frames(toolTurn("toolu_2", "echo key=$AWS_SECRET_ACCESS_KEY")),
		frames(providertest.Turn{Text: "again"}))
	code, _, errs = awl(t, "-c", "--provider", "bedrock", "--model", model, "--share-cloud-credentials", "and again")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	reqs = fake.Requests()
	last := string(reqs[3].Body)
	if !strings.Contains(last, "key=[redacted:AWS_SECRET_ACCESS_KEY]") || strings.Contains(last, awsTestCreds.SecretAccessKey) {
		t.Errorf("shared credentials: %s", last)
	}
	prev := gjson.Get(string(reqs[1].Body), "messages").Array()
	next := gjson.Get(last, "messages").Array()
	for i := range prev[:len(prev)-1] {
		if prev[i].Raw != next[i].Raw {
			t.Fatalf("message %d of the resumed request differs:\n%s\n%s", i, prev[i].Raw, next[i].Raw)
		}
	}
	sessions, _ := filepath.Glob(filepath.Join(os.Getenv("AWL_SESSION_DIR"), "*", "*.jsonl"))
	for _, s := range sessions {
		data, _ := os.ReadFile(s)
		if bytes.Contains(data, []byte(awsTestCreds.SecretAccessKey)) || bytes.Contains(data, []byte(awsTestCreds.SessionToken)) {
			t.Errorf("%s holds an AWS secret", s)
		}
		if !bytes.Contains(data, []byte(`"provider":"bedrock"`)) {
			t.Errorf("%s does not record bedrock", s)
		}
	}
}

// TestBedrockRunWithoutCredentials: no credentials anywhere is exit 4
// before anything is read or sent, saying what to set; --reasoning on a
// Bedrock model that does not reason is exit 2.
func TestBedrockRunWithoutCredentials(t *testing.T) {
	fake := cloudtest.NewBedrock("us-east-1", awsTestCreds)
	defer fake.Close()
	bedrockEnv(t, fake)
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	code, _, errs := awl(t, "--provider", "bedrock", "hi")
	if code != 4 || !strings.Contains(errs, "bedrock: no AWS credentials: set AWS_ACCESS_KEY_ID") || len(fake.Requests()) != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", awsTestCreds.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", awsTestCreds.SecretAccessKey)
	code, _, errs = awl(t, "--provider", "bedrock", "--model", "anthropic.claude-3-5-haiku-20241022-v1:0", "--reasoning", "low", "hi")
	if code != 2 || !strings.Contains(errs, `bedrock model "anthropic.claude-3-5-haiku-20241022-v1:0" does not reason`) {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// TestVertexRun: awl run --provider vertex with a service account's key
// (its token endpoint and the metadata server on 127.0.0.1) prices the
// Vertex AI id as its model, and a resumed session's requests extend the
// first run's byte for byte.
func TestVertexRun(t *testing.T) {
	fakeAWS := cloudtest.NewBedrock("us-east-1", awsTestCreds)
	defer fakeAWS.Close()
	tmp := bedrockEnv(t, fakeAWS)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	g := cloudtest.NewGoogle(key)
	defer g.Close()
	v := cloudtest.NewVertex(g.AccessToken)
	defer v.Close()
	keyFile := filepath.Join(tmp, "sa.json")
	os.WriteFile(keyFile, g.ServiceAccountJSON(), 0o600)
	t.Setenv("GCE_METADATA_HOST", g.Host())
	t.Setenv("CLOUDSDK_CONFIG", filepath.Join(tmp, "gcloud"))
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", keyFile)
	t.Setenv("ANTHROPIC_VERTEX_BASE_URL", v.URL)
	turn := func(text string) []byte {
		return providertest.Stream("anthropic", providertest.Turn{Model: "claude-sonnet-4-5-20250929", Text: text, InputTokens: 1000, OutputTokens: 100}).Body
	}
	v.Enqueue(turn("one"), turn("two"))
	const model = "claude-sonnet-4-5@20250929"
	code, out, errs := awl(t, "--provider", "vertex", "--model", model, "-o", "json", "first")
	if code != 0 || !strings.Contains(out, `"cost_usd":0.0045`) {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	code, _, errs = awl(t, "-c", "--provider", "vertex", "--model", model, "second")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	reqs := v.Requests()
	prev := gjson.GetBytes(reqs[0].Body, "messages").Array()
	next := gjson.GetBytes(reqs[1].Body, "messages").Array()
	for i := range prev[:len(prev)-1] {
		if prev[i].Raw != next[i].Raw {
			t.Fatalf("message %d of the resumed request differs", i)
		}
	}
	if !strings.Contains(reqs[0].Path, "/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict") {
		t.Errorf("path %s", reqs[0].Path)
	}
}

// TestAzureRun: awl run --provider azure sends the deployment as the
// model with the key as api-key; a deployment the model table does not
// know has no price, which --max-cost-usd refuses at start (exit 2), and
// a pricing file that names it as an alias of its model prices it.
func TestAzureRun(t *testing.T) {
	srv := providertest.New()
	defer srv.Close()
	fakeAWS := cloudtest.NewBedrock("us-east-1", awsTestCreds)
	defer fakeAWS.Close()
	tmp := bedrockEnv(t, fakeAWS)
	t.Setenv("AZURE_OPENAI_ENDPOINT", srv.URL)
	t.Setenv("AZURE_OPENAI_API_KEY", "azure-SENTINEL-key-0123")
	srv.Enqueue(providertest.Stream("openai", providertest.Turn{Model: "gpt-5.4-2026-03-05", Text: "hello", InputTokens: 1000, OutputTokens: 100}))
	code, out, errs := awl(t, "--provider", "azure", "--model", "prod-gpt", "--max-cost-usd", "1", "hi")
	if code != 2 || !strings.Contains(errs, `no price for azure model "prod-gpt"`) || len(srv.Requests()) != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	prices := filepath.Join(tmp, "prices.json")
	os.WriteFile(prices, []byte(`{"models":[{"provider":"openai","model":"gpt-5.4","aliases":["prod-gpt"],"input":2.5,"output":15}]}`), 0o600)
	code, out, errs = awl(t, "--provider", "azure", "--model", "prod-gpt", "--max-cost-usd", "1", "--pricing", prices, "-o", "json", "hi")
	if code != 0 || !strings.Contains(out, `"cost_usd":0.004`) {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	r := srv.Requests()[0]
	if r.Path != "/openai/v1/responses" || r.Header.Get("api-key") != "azure-SENTINEL-key-0123" || r.Header.Get("Authorization") != "" ||
		gjson.GetBytes(r.Body, "model").Str != "prod-gpt" {
		t.Errorf("request %s %v %s", r.Path, r.Header, r.Body)
	}
}

// TestBedrockHeldSecrets: credentials awl holds in no variable (a
// profile's secret key in the shared credentials file) are redacted like
// the variables: a tool that prints the file records them redacted, and
// the request that carries its result does not hold them.
func TestBedrockHeldSecrets(t *testing.T) {
	fake := cloudtest.NewBedrock("us-east-1", awsTestCreds)
	defer fake.Close()
	tmp := bedrockEnv(t, fake)
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_SESSION_TOKEN", "")
	creds := filepath.Join(tmp, "credentials")
	os.WriteFile(creds, []byte("[default]\naws_access_key_id = "+awsTestCreds.AccessKeyID+"\naws_secret_access_key = "+awsTestCreds.SecretAccessKey+
		"\naws_session_token = "+awsTestCreds.SessionToken+"\n"), 0o600)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
	fake.Enqueue(frames(toolTurn("toolu_1", "cat "+creds)), frames(providertest.Turn{Text: "done"}))
	code, out, errs := awl(t, "--provider", "bedrock", "--model", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "-o", "ndjson", "show the file")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[1].SigErr != nil {
		t.Fatalf("requests %+v", reqs)
	}
	for what, text := range map[string]string{"request": string(reqs[1].Body), "events": out, "stderr": errs} {
		if strings.Contains(text, awsTestCreds.SecretAccessKey) || strings.Contains(text, awsTestCreds.SessionToken) {
			t.Errorf("the %s holds a secret of the credentials file", what)
		}
	}
	if !strings.Contains(string(reqs[1].Body), "[redacted:AWS_SECRET_ACCESS_KEY]") || !strings.Contains(string(reqs[1].Body), "[redacted:AWS_SESSION_TOKEN]") {
		t.Errorf("tool result not redacted: %s", gjson.GetBytes(reqs[1].Body, "messages.#(role==\"user\")#.content").Raw)
	}
}

// TestCloudRefreshRedacted (issue 49): credentials awl obtains mid-run
// are redacted like those it started with. The web identity's STS
// credentials expire at once, so each request refreshes them; STS leaves
// each issue's secret key and session token in a file, and the tool that
// prints it runs after the refresh that obtained them. No session line,
// event, later request, span (content capture on), stderr line or HTML
// report holds any of them.
func TestCloudRefreshRedacted(t *testing.T) {
	fake := cloudtest.NewBedrock("us-east-1", awsTestCreds)
	defer fake.Close()
	tmp := bedrockEnv(t, fake)
	sts := cloudtest.NewSTS("us-east-1")
	defer sts.Close()
	fake.Creds = sts.Latest
	leak := filepath.Join(tmp, "issued")
	sts.WebIdentityToken = "eyJhbGciOiJSUzI1NiJ9.gh-oidc.SENTINEL-sig"
	sts.Issued = func(c aws.Credentials) {
		os.WriteFile(leak, []byte("secret="+c.SecretAccessKey+"\ntoken="+c.SessionToken+"\n"), 0o600)
	}
	tokenFile := filepath.Join(tmp, "oidc")
	os.WriteFile(tokenFile, []byte(sts.WebIdentityToken), 0o600)
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
		"AWS_WEB_IDENTITY_TOKEN_FILE": tokenFile, "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/ci", "AWS_ENDPOINT_URL_STS": sts.URL} {
		t.Setenv(k, v)
	}
	rcv := newOTLPReceiver(t)
	for k, v := range map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "", "OTEL_SDK_DISABLED": "",
		"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true", "OTEL_EXPORTER_OTLP_HEADERS": "", "TRACEPARENT": ""} {
		t.Setenv(k, v)
	}
	fake.Enqueue(frames(toolTurn("toolu_1", "cat "+leak)), frames(providertest.Turn{Text: "done"}))
	code, out, errs := awl(t, "--provider", "bedrock", "--model", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "-o", "ndjson", "show the file")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[0].SigErr != nil || reqs[1].SigErr != nil || len(sts.Calls()) != 3 {
		t.Fatalf("requests %+v, STS calls %+v", reqs, sts.Calls())
	}
	// The tool read what the refresh before the first request obtained.
	if got := reqs[0].Header.Get("X-Amz-Security-Token"); got != cloudtest.Issue(2).SessionToken {
		t.Fatalf("the first request carries %q, not the refreshed token", got)
	}
	_, trace := rcv.spans(t)
	wire, _ := proto.Marshal(trace)
	places := map[string][]byte{"stdout": []byte(out), "stderr": []byte(errs), "request 2": reqs[1].Body, "the trace": wire}
	sess, _ := filepath.Glob(filepath.Join(os.Getenv("AWL_SESSION_DIR"), "*", "*.jsonl"))
	if len(sess) != 1 {
		t.Fatalf("sessions %v", sess)
	}
	places["the session"], _ = os.ReadFile(sess[0])
	var html, herr bytes.Buffer
	if code := Main(context.Background(), []string{"sessions", "report", "--html", "-", sess[0]}, nil, &html, &herr); code != 0 {
		t.Fatalf("sessions report: exit %d: %s", code, herr.String())
	}
	places["the report"] = html.Bytes()
	for where, data := range places {
		for n := 1; n <= 3; n++ {
			c := cloudtest.Issue(n)
			if bytes.Contains(data, []byte(c.SecretAccessKey)) || bytes.Contains(data, []byte(c.SessionToken)) {
				t.Errorf("%s holds the credentials of STS issue %d", where, n)
			}
		}
	}
	for _, where := range []string{"request 2", "the session", "the trace"} {
		if !bytes.Contains(places[where], []byte("token=[redacted:AWS_SESSION_TOKEN]")) {
			t.Errorf("%s lacks the redacted tool output:\n%.3000s", where, places[where])
		}
	}
}

// TestBedrockTierAndCacheTTL (issue 51 on the clouds): --cache-ttl 1h on
// a Claude model Bedrock keeps no hour's cache for, and a Bedrock flex
// budget the table has no flex price for, are exit 2 before anything is
// sent; a flex run sends Bedrock's tier header, not the Messages API's
// service_tier, and its cost is unknown (null), not the standard price.
func TestBedrockTierAndCacheTTL(t *testing.T) {
	fake := cloudtest.NewBedrock("us-east-1", awsTestCreds)
	defer fake.Close()
	bedrockEnv(t, fake)
	const model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "anthropic.claude-3-5-haiku-20241022-v1:0", "--cache-ttl", "1h"},
			"--cache-ttl 1h: Bedrock offers the 1-hour prompt cache on Claude Haiku, Sonnet and Opus 4.5 and later models, not on claude-3-5-haiku"},
		{[]string{"--model", model, "--cache-ttl", "24h"}, "--cache-ttl 24h: Bedrock keeps Claude's prompt cache 5 minutes, or 1 hour"},
		{[]string{"--model", model, "--service-tier", "flex", "--max-cost-usd", "1"}, "--max-cost-usd cannot be kept: awl's price table has no flex price"},
	} {
		code, _, errs := awl(t, append(append([]string{"--provider", "bedrock"}, tc.args...), "hi")...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d: %s", tc.args, code, errs)
		}
	}
	if len(fake.Requests()) != 0 {
		t.Fatalf("a refused run sent %d requests", len(fake.Requests()))
	}
	fake.Enqueue(frames(providertest.Turn{Text: "done"}))
	code, out, errs := awl(t, "--provider", "bedrock", "--model", model, "--service-tier", "flex", "--cache-ttl", "1h", "-o", "json", "hi")
	if code != 0 || !strings.Contains(out, `"cost_usd":null`) {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	r := fake.Requests()[0]
	if r.Header.Get("X-Amzn-Bedrock-Service-Tier") != "flex" || gjson.GetBytes(r.Body, "service_tier").Exists() ||
		gjson.GetBytes(r.Body, "system.#.cache_control.ttl").String() != `["1h"]` {
		t.Errorf("header %q, body %s", r.Header.Get("X-Amzn-Bedrock-Service-Tier"), r.Body)
	}

	// The answer's header says which tier served it: flex asked, default
	// served, is recorded as default and priced at the standard list;
	// flex served stays unpriced.
	for _, tc := range []struct{ served, cost string }{{"default", `"cost_usd":0.0045`}, {"flex", `"cost_usd":null`}} {
		a := frames(providertest.Turn{Text: "done"})
		a.Tier = tc.served
		fake.Enqueue(a)
		code, out, errs = awl(t, "--provider", "bedrock", "--model", model, "--service-tier", "flex", "-o", "json", "hi")
		if code != 0 || !strings.Contains(out, tc.cost) {
			t.Fatalf("served %s: exit %d: %s %s", tc.served, code, out, errs)
		}
		path := gjson.Get(out, "session_path").Str
		data, _ := os.ReadFile(path)
		if !strings.Contains(string(data), `"serviceTier":"`+tc.served+`"`) {
			t.Errorf("served %s: the session does not record it:\n%s", tc.served, data)
		}
	}
}
