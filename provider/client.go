package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/awlrun/awl/conv"
)

// defaultIdleTimeout is used when Options.IdleTimeout is zero.
const defaultIdleTimeout = 90 * time.Second

// DefaultStallBudget is used when Options.StallBudget is zero: a server
// that goes silent costs a request at most this long in all, not 5
// attempts of 90 s.
const DefaultStallBudget = 3 * time.Minute

// New returns the provider called name: one of Names (see the registry).
// An unknown name or a malformed base URL is a KindConfig *Error. A missing
// API key is not an error here: local compatible servers need none.
func New(name string, opts Options) (Provider, error) {
	return newClient(name, opts, true)
}

// newClient is New; without cloud, a cloud provider is made without its
// credentials (EncodeRequest, which sends nothing).
func newClient(name string, opts Options, cloud bool) (Provider, error) {
	spec, ok := Lookup(name)
	if !ok {
		return nil, unknownProvider(name)
	}
	if spec.Open != nil {
		return spec.Open(opts)
	}
	var w wire
	switch spec.Wire {
	case WireAnthropic:
		w = anthropicWire{version: spec.AnthropicVersion, omitStream: spec.OmitStream, self: name}
	case WireResponses:
		w = responsesWire{}
	case WireChat:
		w = chatWire{name: name}
	default:
		return nil, &Error{Kind: KindConfig, Provider: name, Message: fmt.Sprintf("unknown wire API %q", spec.Wire)}
	}
	base := strings.TrimRight(opts.BaseURL, "/")
	if base == "" {
		base = spec.BaseURL
	}
	if (base != "" || spec.Cloud == nil) && !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, &Error{Kind: KindConfig, Provider: name,
			Message: fmt.Sprintf("base URL %q must start with http:// or https://", base)}
	}
	opts.BaseURL = base
	var wd *warmDialer
	if opts.HTTPClient == nil {
		// Its own transport, configured as http.DefaultTransport, whose
		// dial can take a connection opened ahead (Warm).
		wd = &warmDialer{}
		opts.HTTPClient = &http.Client{Transport: newWarmTransport(wd)}
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = defaultIdleTimeout
	}
	if opts.StallBudget <= 0 {
		opts.StallBudget = DefaultStallBudget
	}
	if opts.Sleep == nil {
		opts.Sleep = sleepContext
	}
	if opts.MaxRetries < 0 {
		opts.MaxRetries = 0
	}
	c := &client{name: name, keyVar: spec.KeyVar, url: base + w.path(), opts: opts, w: w, maxEvent: maxEventBytes, warm: wd,
		tiers: spec.ServiceTiers, tierHeader: spec.TierHeader}
	if spec.Cloud != nil && cloud {
		var err error
		if c.cloud, err = spec.Cloud(opts); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// EncodeRequest returns the request body that provider name would send for
// req: a pure function of its arguments, the same bytes every time. A
// missing model is the provider's default, as in Stream.
func EncodeRequest(name string, req Request) ([]byte, error) {
	p, err := newClient(name, Options{HTTPClient: http.DefaultClient}, false)
	if err != nil {
		return nil, err
	}
	c := p.(*client)
	if req.Model == "" {
		req.Model = DefaultModel(name)
	}
	b, err := c.w.encode(req)
	return b.bytes(), err
}

// sleepContext waits for d or until ctx is done.
func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wire is one wire API: how to address it, project a request and decode a
// response. Implementations hold no state; decoders hold one response's.
type wire interface {
	// path is appended to the base URL.
	path() string
	// setHeaders sets authentication and fixed headers.
	setHeaders(h http.Header, apiKey string)
	// encode projects req (with its model resolved) to the request body.
	encode(req Request) (reqBody, error)
	// decoder returns a decoder for one response, reporting to emit
	// (never nil).
	decoder(provider string, emit func(Event)) decoder
}

// decoder turns one response into a message.
type decoder interface {
	// event consumes one SSE event and reports whether it was the
	// terminal one. A failure reported inside the stream is a *wireError.
	event(name, data []byte) (done bool, err error)
	// whole decodes a complete, non-streamed JSON response body.
	whole(body []byte) error
	// message returns the completed message after the terminal event.
	message() conv.Message
}

// client implements Provider for any wire API.
type client struct {
	name string
	// keyVar is the variable that holds the API key, for the placeholder
	// that stands for it in an error that echoes it.
	keyVar string
	url    string
	opts   Options
	w      wire
	// maxEvent bounds one SSE event's data and a non-streamed body
	// (maxEventBytes; tests lower it).
	maxEvent int
	// warm opens the first request's connection ahead (Warm); nil for
	// an HTTPClient given in Options.
	warm *warmDialer
	// cloud, for a cloud provider, makes each request's endpoint and
	// credentials, and reads its stream (cloud.go).
	cloud Cloud
	// tiers and tierHeader are the cloud's --service-tier values and the
	// header that carries them (Spec.ServiceTiers, Spec.TierHeader).
	tiers      func(string) (string, bool)
	tierHeader string
}

// endpoint is where one request goes: its URL, and headers of its own
// besides the wire API's and the credentials.
type endpoint struct {
	url    string
	header http.Header
}

var (
	_ Provider = (*client)(nil)
	_ Warmer   = (*client)(nil)
)

// Name implements Provider.
func (c *client) Name() string { return c.name }

// Stream implements Provider. A panic while streaming (a decoder bug met
// by an unforeseen stream) is returned as a provider error rather than
// crashing the caller, which then ends its run as for any failed request.
func (c *client) Stream(ctx context.Context, req Request, emit func(Event)) (msg conv.Message, err error) {
	defer func() {
		if r := recover(); r != nil {
			msg, err = conv.Message{}, &Error{Kind: KindRequest, Provider: c.name,
				Message: fmt.Sprintf("internal error while reading the response (please report it): %v", r)}
		}
	}()
	if emit == nil {
		emit = func(Event) {}
	}
	if req.Model == "" {
		req.Model = DefaultModel(c.name)
	}
	to := endpoint{url: c.url}
	if c.tiers != nil {
		// A cloud's tier is its own: in its header, or nowhere; never the
		// wire API's service_tier in the body.
		if v, _ := c.tiers(req.ServiceTier); v != "" && c.tierHeader != "" {
			to.header = http.Header{c.tierHeader: {v}}
		}
		req.ServiceTier = ""
	}
	body, err := c.w.encode(req)
	if err != nil {
		return conv.Message{}, &Error{Kind: KindRequest, Provider: c.name, Message: "encode request: " + err.Error()}
	}
	if c.cloud != nil {
		to.url = c.cloud.URL(req.Model)
	}
	return c.retry(ctx, to, body, emit)
}

// errStall is the cancellation cause of an attempt that went quiet.
var errStall = errors.New("stream stalled")

// attempt sends body once and decodes the answer. A failure is a *wireError
// that says whether another attempt may succeed, or ctx's error.
func (c *client) attempt(ctx context.Context, to endpoint, body reqBody, emit func(Event), idleTimeout time.Duration) (conv.Message, error) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := time.AfterFunc(idleTimeout, func() { cancel(errStall) })
	defer idle.Stop()

	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, to.url, body.reader())
	if err != nil {
		return conv.Message{}, &wireError{kind: KindConfig, msg: "build request: " + err.Error()}
	}
	// Set as NewRequest sets them for one bytes.Reader, for a body in
	// pieces too.
	hreq.ContentLength = int64(body.size())
	hreq.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(body.reader()), nil }
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream, application/json")
	c.w.setHeaders(hreq.Header, c.opts.APIKey)
	for k, v := range to.header {
		hreq.Header[k] = v
	}
	if c.cloud != nil {
		if err := c.cloud.Authorize(actx, hreq, body.reader); err != nil {
			if ctx.Err() != nil {
				return conv.Message{}, ctx.Err()
			}
			return conv.Message{}, err
		}
	}

	resp, err := c.opts.HTTPClient.Do(hreq)
	if err != nil {
		return conv.Message{}, transportError(ctx, actx, idleTimeout, "send request", err)
	}
	defer resp.Body.Close()
	r := &idleReader{r: resp.Body, t: idle, d: idleTimeout}

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, err := io.ReadAll(io.LimitReader(r, 1<<20))
		if err != nil && ctx.Err() != nil {
			return conv.Message{}, ctx.Err()
		}
		return conv.Message{}, classifyStatus(resp.StatusCode, resp.Header, data)
	}

	dec := c.w.decoder(c.name, emit)
	if rd, ok := dec.(interface{ setRequest(reqBody) }); ok {
		rd.setRequest(body)
	}
	ct := resp.Header.Get("Content-Type")
	var in io.Reader = r
	if c.cloud != nil {
		in, ct = c.cloud.Stream(r, resp.Header)
	}
	mt, _, _ := mime.ParseMediaType(ct)
	if mt != "application/json" {
		// A proxy's login page or a wrong base URL answers 200 with a web
		// page: no retry makes it an API answer.
		if err := c.checkWebPage(mt, ct, resp.StatusCode, in, &in); err != nil {
			return conv.Message{}, err
		}
	}
	if mt == "application/json" {
		data, err := io.ReadAll(io.LimitReader(in, int64(c.maxEvent)+1))
		if err != nil {
			return conv.Message{}, transportError(ctx, actx, idleTimeout, "read response", err)
		}
		if len(data) > c.maxEvent {
			return conv.Message{}, tooLarge("a JSON response body", c.maxEvent)
		}
		if err := dec.whole(data); err != nil {
			return conv.Message{}, err
		}
		return dec.message(), nil
	}
	msg, err := decodeStream(in, dec, c.maxEvent)
	if err != nil {
		var we *wireError
		if !errors.As(err, &we) {
			return conv.Message{}, transportError(ctx, actx, idleTimeout, "read stream", err)
		}
		return conv.Message{}, err
	}
	return msg, nil
}

// checkWebPage fails, for good, a 2xx answer that is a web page: HTML by
// its media type mt, or by its first byte '<' (no SSE stream starts so). The error names the status, the Content-Type ct and the first bytes
// of the page. Otherwise *body becomes r with the byte it looked at.
func (c *client) checkWebPage(mt, ct string, status int, r io.Reader, body *io.Reader) error {
	html := mt == "text/html" || mt == "application/xhtml+xml"
	var head []byte
	if !html {
		first := make([]byte, 1)
		n, _ := io.ReadFull(r, first)
		head = first[:n]
		*body = io.MultiReader(bytes.NewReader(head), r)
		if n == 0 || head[0] != '<' {
			return nil
		}
	}
	rest, _ := io.ReadAll(io.LimitReader(r, 512))
	page := strings.Join(strings.Fields(strings.ToValidUTF8(string(append(head, rest...)), "\uFFFD")), " ")
	if len(page) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(page[cut]) {
			cut--
		}
		page = page[:cut] + "…"
	}
	if ct == "" {
		ct = "none"
	}
	return &wireError{kind: KindRequest, status: status, msg: fmt.Sprintf("the answer is a web page, not an API response (Content-Type %s; a proxy's login page, or a wrong base URL?): %q", ct, page)}
}

// decodeStream feeds the SSE events read from r to dec until the terminal
// event. A stream that ends before it is a retryable *wireError; a read
// error is returned as is.
func decodeStream(r io.Reader, dec decoder, maxEvent int) (conv.Message, error) {
	sse := newSSEDecoder(r)
	sse.maxEvent = maxEvent
	for {
		name, data, err := sse.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return conv.Message{}, &wireError{retry: true, msg: "stream ended before its terminal event"}
			}
			return conv.Message{}, err
		}
		done, err := dec.event(name, data)
		if err != nil {
			return conv.Message{}, err
		}
		if done {
			return dec.message(), nil
		}
	}
}

// transportError classifies a failure to send or read: the caller's
// cancellation, a stall, or a retryable network error.
func transportError(ctx, actx context.Context, idle time.Duration, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(context.Cause(actx), errStall) {
		return &wireError{retry: true, stall: idle, msg: fmt.Sprintf("%s: no data for %s", errStall, idle)}
	}
	return &wireError{retry: true, msg: what + ": " + err.Error()}
}

// idleReader re-arms the stall timer around every read, so it fires only
// while the reader waits on the network for longer than d.
type idleReader struct {
	r io.Reader
	t *time.Timer
	d time.Duration
}

func (r *idleReader) Read(p []byte) (int, error) {
	r.t.Reset(r.d)
	n, err := r.r.Read(p)
	r.t.Stop()
	return n, err
}
