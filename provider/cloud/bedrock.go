package cloud

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/awlrun/awl/provider"
)

// NameBedrock is Amazon Bedrock's provider name.
const NameBedrock = "bedrock"

// bedrockSpec is Amazon Bedrock: Anthropic's models through
// InvokeModelWithResponseStream.
var bedrockSpec = provider.Spec{
	Name: NameBedrock, Wire: provider.WireAnthropic, Family: provider.NameAnthropic,
	BaseURLVar:   "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
	DefaultModel: "global.anthropic.claude-sonnet-5-5",
	MoreSecretVars: []string{"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK",
		"AWS_CONTAINER_AUTHORIZATION_TOKEN"},
	AnthropicVersion: "bedrock-2023-05-31", OmitStream: true,
	Cloud:      newBedrock,
	TableModel: bedrockTableModel,
	// Bedrock's own tiers (InvokeModelWithResponseStream's
	// X-Amzn-Bedrock-Service-Tier: default, flex, priority), for the
	// models Bedrock offers them on; it has no auto, whose nearest is
	// its default, asked for by sending nothing.
	ServiceTiers: func(tier string) (string, bool) {
		switch tier {
		case "auto":
			return "", true
		case "default", "flex", "priority":
			return tier, true
		}
		return "", false
	},
	TierHeader: bedrockTierHeader,
	CacheTTL:   bedrockCacheTTL,
}

// bedrockCacheTTL: Bedrock keeps Claude's cache 5 minutes, or an hour
// (cache_control's ttl "1h") on Claude Haiku, Sonnet and Opus 4.5 and
// later models; a model the table does not know is asked as given.
func bedrockCacheTTL(model, ttl string) (bool, string) {
	if ttl != "1h" {
		return false, "Bedrock keeps Claude's prompt cache 5 minutes, or 1 hour on Claude 4.5 and later models (--cache-ttl 5m or 1h)"
	}
	if major, minor, ok := claudeVersion(model); ok && (major < 4 || major == 4 && minor < 5) {
		return false, fmt.Sprintf("Bedrock offers the 1-hour prompt cache on Claude Haiku, Sonnet and Opus 4.5 and later models, not on %s", model)
	}
	return true, ""
}

// claudeVersion reads the version of a Claude model's table name:
// claude-sonnet-4-5 is 4.5, claude-3-7-sonnet 3.7, claude-opus-4 4.0.
func claudeVersion(name string) (major, minor int, ok bool) {
	rest, found := strings.CutPrefix(name, "claude-")
	if !found {
		return 0, 0, false
	}
	var nums []int
	for _, part := range strings.Split(rest, "-") {
		n, err := strconv.Atoi(part)
		switch {
		case err == nil && n < 100:
			nums = append(nums, n)
		case len(nums) > 0:
			return nums[0], append(nums, 0)[1], true
		}
	}
	if len(nums) == 0 {
		return 0, 0, false
	}
	return nums[0], append(nums, 0)[1], true
}

// bedrock is Amazon Bedrock's runtime endpoint in one region, with the
// credentials of the AWS chain (or a Bedrock API key).
type bedrock struct {
	base   string
	region string
	setup  *awsSetup
	bearer string // AWS_BEARER_TOKEN_BEDROCK: a Bedrock API key, sent instead of a signature
	signer *v4.Signer
	now    func() time.Time
}

// newBedrock resolves the region, the endpoint and the credentials, and
// retrieves the credentials once: a run without any fails before it reads
// or sends anything, and the values join the run's redactor.
func newBedrock(opts provider.Options) (provider.Cloud, error) {
	getenv := env(opts)
	b := &bedrock{now: time.Now, signer: v4.NewSigner()}
	b.bearer = getenv("AWS_BEARER_TOKEN_BEDROCK")
	var err error
	if b.setup, err = awsChain(NameBedrock, getenv, &http.Client{Timeout: 30 * time.Second}, newSecrets(opts)); err != nil && b.bearer == "" {
		return nil, err
	}
	if b.setup == nil {
		b.setup = &awsSetup{secrets: newSecrets(opts)}
		b.setup.region, _ = first(getenv, "AWS_REGION", "AWS_DEFAULT_REGION")
	}
	b.region = b.setup.region
	b.base = opts.BaseURL
	if b.base == "" {
		b.base, _ = first(getenv, "AWS_ENDPOINT_URL")
	}
	if b.region == "" {
		return nil, configErr(NameBedrock, "no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION, or region in the profile)")
	}
	if b.base == "" {
		b.base = "https://bedrock-runtime." + b.region + ".amazonaws.com"
	}
	b.base = strings.TrimRight(b.base, "/")
	if !strings.HasPrefix(b.base, "https://") && !strings.HasPrefix(b.base, "http://") {
		return nil, configErr(NameBedrock, fmt.Sprintf("endpoint %q must start with http:// or https://", b.base))
	}
	if b.bearer != "" {
		b.setup.secrets.add("AWS_BEARER_TOKEN_BEDROCK", b.bearer)
		return b, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := b.setup.creds.Retrieve(ctx); err != nil {
		return nil, configErr(NameBedrock, fmt.Sprintf("AWS credentials from %s: %v", b.setup.source, err))
	}
	return b, nil
}

// URL implements provider.Cloud: the model id (a model, an inference
// profile or an ARN) is one escaped path segment, its colons escaped too,
// as the AWS SDKs send it.
func (b *bedrock) URL(model string) string {
	return b.base + "/model/" + strings.ReplaceAll(url.PathEscape(model), ":", "%3A") + "/invoke-with-response-stream"
}

// Authorize implements provider.Cloud: a SigV4 signature of the request
// for service bedrock in the region, or the Bedrock API key.
func (b *bedrock) Authorize(ctx context.Context, req *http.Request, body func() io.Reader) error {
	req.Header.Set("Accept", "application/vnd.amazon.eventstream")
	req.Header.Set("X-Amzn-Bedrock-Accept", "*/*")
	req.Header.Del("anthropic-version") // the body's anthropic_version says it
	if b.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+b.bearer)
		return nil
	}
	creds, err := b.setup.creds.Retrieve(ctx)
	if err != nil {
		return authErr(NameBedrock, fmt.Sprintf("AWS credentials from %s: %v", b.setup.source, err))
	}
	h := sha256.New()
	if _, err := io.Copy(h, body()); err != nil {
		return err
	}
	return b.signer.SignHTTP(ctx, creds, req, hex.EncodeToString(h.Sum(nil)), "bedrock", b.region, b.now())
}

// Stream implements provider.Cloud: the event stream, decoded to the
// Messages API's server-sent events.
func (b *bedrock) Stream(r io.Reader, h http.Header) (io.Reader, string) {
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "application/vnd.amazon.eventstream") {
		return r, ct
	}
	return &eventStreamSSE{src: bufio.NewReader(r), dec: eventstream.NewDecoder(), tier: h.Get(bedrockTierHeader)}, "text/event-stream"
}

// bedrockTierHeader asks for a service tier, and in the answer says which
// one served the request.
const bedrockTierHeader = "X-Amzn-Bedrock-Service-Tier"

// Secrets implements provider.Cloud.
func (b *bedrock) Secrets() []provider.Secret { return b.setup.secrets.all() }

// eventStreamSSE reads Bedrock's event stream (binary frames, each with a
// CRC) as server-sent events: a chunk's bytes are one Messages API event;
// an exception is an error event of the type the Messages API gives the
// same failure, so it is retried or not as it would be there. A frame
// that fails its CRC check, or a stream cut inside a frame, is a read
// error (the attempt is retried); a stream cut between frames ends as
// the Messages API's does, before its terminal event.
type eventStreamSSE struct {
	src     *bufio.Reader
	dec     *eventstream.Decoder
	out     bytes.Buffer
	err     error
	payload []byte
	// tier is the service tier the answer's header says served the
	// request, given to the message as its usage's service_tier (the
	// Messages API's place for it), which prices it.
	tier string
}

func (e *eventStreamSSE) Read(p []byte) (int, error) {
	for e.out.Len() == 0 {
		if e.err != nil {
			return 0, e.err
		}
		e.err = e.next()
	}
	return e.out.Read(p)
}

// bedrockException maps the stream's exceptions to the Messages API's
// error types: the retryable ones are retried. (A switch: a package-level
// map is built by an initialiser at every start of awl.)
func bedrockException(code string) (typ string, ok bool) {
	switch code {
	case "throttlingException", "serviceQuotaExceededException":
		return "rate_limit_error", true
	case "serviceUnavailableException":
		return "overloaded_error", true
	case "internalServerException", "modelStreamErrorException":
		return "api_error", true
	case "modelTimeoutException":
		return "timeout_error", true
	case "validationException":
		return "invalid_request_error", true
	case "accessDeniedException":
		return "permission_error", true
	case "resourceNotFoundException":
		return "not_found_error", true
	}
	return "", false
}

// next decodes one frame into e.out.
func (e *eventStreamSSE) next() error {
	if _, err := e.src.Peek(1); err != nil {
		return err // io.EOF between frames: the stream's end
	}
	msg, err := e.dec.Decode(e.src, e.payload[:0])
	var crc eventstream.ChecksumError
	switch {
	case errors.As(err, &crc):
		return errors.New("event stream: a frame failed its CRC check")
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("event stream: cut inside a frame")
	case err != nil:
		return fmt.Errorf("event stream: %w", err)
	}
	e.payload = msg.Payload
	header := func(name string) string {
		if v := msg.Headers.Get(name); v != nil {
			return v.String()
		}
		return ""
	}
	switch header(":message-type") {
	case "event":
		if header(":event-type") != "chunk" {
			return nil
		}
		raw := gjson.GetBytes(msg.Payload, "bytes").Str
		data, err := base64.StdEncoding.DecodeString(raw)
		if err != nil || !gjson.ValidBytes(data) {
			return errors.New("event stream: a chunk whose bytes are not a JSON event")
		}
		typ := gjson.GetBytes(data, "type").Str
		if typ == "message_start" && e.tier != "" {
			data, _ = sjson.SetBytes(data, "message.usage.service_tier", e.tier)
		}
		e.event(typ, data)
	case "exception":
		typ := header(":exception-type")
		e.failure(typ, gjson.GetBytes(msg.Payload, "message").Str)
	case "error":
		e.failure(header(":error-code"), header(":error-message"))
	}
	return nil
}

// event writes one server-sent event.
func (e *eventStreamSSE) event(name string, data []byte) {
	e.out.WriteString("event: ")
	e.out.WriteString(name)
	for _, line := range bytes.Split(data, []byte("\n")) {
		e.out.WriteString("\ndata: ")
		e.out.Write(line)
	}
	e.out.WriteString("\n\n")
}

// failure writes an exception as the Messages API's error event.
func (e *eventStreamSSE) failure(code, message string) {
	typ, ok := bedrockException(code)
	if !ok {
		typ = "invalid_request_error"
	}
	if code == "" {
		code = "UnknownError"
	}
	text := code
	if message != "" {
		text += ": " + message
	}
	data, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": text}})
	e.event("error", data)
}

// bedrockTableModel maps a Bedrock model id to the model table's name: an
// ARN to its last part, an inference profile's geography (us., eu.,
// global., …) and "anthropic." away, and the version suffix (-v1:0)
// off. A model that is not Anthropic's, or an application inference
// profile's ARN, maps to "".
func bedrockTableModel(id string) string {
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	i := strings.Index(id, "anthropic.")
	if i < 0 {
		return ""
	}
	id = id[i+len("anthropic."):]
	if j := strings.LastIndex(id, "-v"); j > 0 {
		v := id[j+2:]
		if k := strings.IndexByte(v, ':'); k >= 0 {
			v = v[:k]
		}
		if v != "" && strings.Trim(v, "0123456789") == "" {
			id = id[:j]
		}
	}
	return id
}
