package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/oauth2"
)

// NewStdio is the transport of a stdio server: messages to w (its stdin),
// one a line, and from r (its stdout, through Lines). The process itself,
// and closing its stdin, are the caller's.
func NewStdio(r io.Reader, w io.Writer) Transport { return &stdioTransport{r: r, w: w} }

// stdioTransport is a stdio server's stdin and stdout: one message a line.
type stdioTransport struct {
	r  io.Reader // the server's stdout, JSON-RPC lines only (Lines)
	w  io.Writer // its stdin
	mu sync.Mutex
}

func (s *stdioTransport) send(_ context.Context, data []byte, _ string) error {
	line := append(bytes.Clone(data), '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.w.Write(line); err != nil {
		return fmt.Errorf("%w: write to the server: %v", ErrConnClosed, err)
	}
	return nil
}

func (s *stdioTransport) start(deliver func([]byte), _ func(string, error), fail func(error)) {
	go func() {
		// Lines passes on no line over MaxMessage (a longer one is
		// replaced as it is read), so a line is bounded here.
		br := bufio.NewReaderSize(s.r, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				deliver(line)
			}
			if err != nil {
				if err == io.EOF {
					err = errors.New("the server's stdout closed")
				}
				fail(err)
				return
			}
		}
	}()
}

func (s *stdioTransport) initialized(string) {}
func (s *stdioTransport) ready()             {}
func (s *stdioTransport) close()             {}

// The headers of streamable HTTP (MCP 2025-03-26 and later).
const (
	sessionIDHeader       = "Mcp-Session-Id"
	protocolVersionHeader = "MCP-Protocol-Version"
	lastEventIDHeader     = "Last-Event-ID"
)

// httpTransport is MCP's streamable HTTP transport, client side: every
// message is POSTed to the endpoint; the answer to a request comes as JSON
// or as a stream of server-sent events, which may carry the server's own
// requests before it; a stream that ends before the answer is resumed with
// GET and Last-Event-ID after the server's retry delay; after initialize, a
// GET stream carries what the server sends on its own (a server without
// one answers 405). OAuth: a token from the handler on every request, and
// its Authorize on 401 or 403, then the request once more.
type httpTransport struct {
	url        string
	client     *http.Client
	oauth      Authorizer // nil: no OAuth
	maxRetries int        // reconnections of a stream without progress

	ctx    context.Context // the connection's; cancelled by close
	cancel context.CancelFunc

	deliver func([]byte)
	answer  func(string, error)
	fail    func(error)

	tokMu sync.Mutex // held while a token is asked for

	mu        sync.Mutex
	sessionID string
	version   string // the agreed protocol version, once initialized
	closed    bool
	missing   bool // the server answered 404 for the session
	// legacy is the endpoint of a 2024-11-05 server (HTTP+SSE), where
	// every message is POSTed; "" for streamable HTTP (legacysse.go).
	legacy string
}

// Authorizer gets the tokens of one HTTP server: the transport sends what
// TokenSource gives, and calls Authorize on a 401 or 403 (which reads and
// closes the response) before sending once more.
type Authorizer interface {
	TokenSource(context.Context) (oauth2.TokenSource, error)
	Authorize(ctx context.Context, req *http.Request, resp *http.Response) error
}

// Prover is an Authorizer whose tokens may be bound to a key (DPoP, RFC
// 9449): the transport adds Proof to every request that carries such a
// token, and sends a request once more when Nonce says the server asked
// for a nonce it now has.
type Prover interface {
	Proof(method string, u *url.URL, accessToken string) (string, error)
	Nonce(resp *http.Response) bool
}

// NewHTTP is the streamable HTTP transport to url: client makes the
// requests, oauth (nil for none) authorizes them, and an interrupted
// response stream is resumed maxRetries times without progress before the
// request fails.
func NewHTTP(url string, client *http.Client, oauth Authorizer, maxRetries int) Transport {
	return newHTTP(url, client, oauth, maxRetries)
}

func newHTTP(url string, client *http.Client, oauth Authorizer, maxRetries int) *httpTransport {
	ctx, cancel := context.WithCancel(context.Background())
	return &httpTransport{url: url, client: client, oauth: oauth, maxRetries: maxRetries, ctx: ctx, cancel: cancel}
}

func (h *httpTransport) start(deliver func([]byte), answer func(string, error), fail func(error)) {
	h.deliver, h.answer, h.fail = deliver, answer, fail
}

func (h *httpTransport) initialized(version string) {
	h.mu.Lock()
	h.version = version
	h.mu.Unlock()
}

// ready opens the server's own stream, once the handshake is complete: a
// GET before notifications/initialized would race it for the token (a
// token about to expire is refreshed by each request that asks for one).
func (h *httpTransport) ready() {
	h.mu.Lock()
	legacy := h.legacy != ""
	h.mu.Unlock()
	if !legacy {
		go h.listen()
	}
}

// bearer is the Authorization header for the handler's token now, "" when
// there is none to send.
func (h *httpTransport) bearer() (string, error) {
	if h.oauth == nil {
		return "", nil
	}
	// One request at a time asks for the token, so that two never refresh
	// it at once.
	h.tokMu.Lock()
	defer h.tokMu.Unlock()
	ts, err := h.oauth.TokenSource(h.ctx)
	if err != nil || ts == nil {
		return "", err
	}
	tok, err := ts.Token()
	var re *oauth2.RetrieveError
	switch {
	case err == nil && tok != nil && strings.EqualFold(tok.TokenType, "DPoP"):
		return "DPoP " + tok.AccessToken, nil
	case err == nil && tok != nil:
		return "Bearer " + tok.AccessToken, nil
	case err != nil && !(errors.As(err, &re) && re.ErrorCode == "invalid_grant"):
		return "", err
	}
	// invalid_grant (a refresh token no longer good): sent without a
	// token, the 401 starts the authorization again.
	return "", nil
}

// headers sets the token, the protocol version and the session id.
func (h *httpTransport) headers(req *http.Request) error {
	b, err := h.bearer()
	if err != nil {
		return err
	}
	if b != "" {
		req.Header.Set("Authorization", b)
	}
	if tok, ok := strings.CutPrefix(b, "DPoP "); ok {
		if p, ok := h.oauth.(Prover); ok {
			proof, err := p.Proof(req.Method, req.URL, tok)
			if err != nil {
				return err
			}
			req.Header.Set("DPoP", proof)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.version != "" && h.legacy == "" {
		req.Header.Set(protocolVersionHeader, h.version)
	}
	if h.sessionID != "" {
		req.Header.Set(sessionIDHeader, h.sessionID)
	}
	return nil
}

// post sends data once to the URL, authorizing and sending again on 401
// or 403.
func (h *httpTransport) post(ctx context.Context, data []byte) (*http.Response, error) {
	return h.postTo(ctx, h.url, data)
}

// postTo is post to target.
func (h *httpTransport) postTo(ctx context.Context, target string, data []byte) (*http.Response, error) {
	do := func() (*http.Request, *http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(data))
		if err != nil {
			return nil, nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if err := h.headers(req); err != nil {
			return nil, nil, err
		}
		h.standardHeaders(ctx, req, data)
		resp, err := h.client.Do(req)
		return req, resp, err
	}
	req, resp, err := do()
	if err != nil {
		return nil, err
	}
	if p, ok := h.oauth.(Prover); ok && resp.StatusCode == http.StatusUnauthorized && req.Header.Get("DPoP") != "" && p.Nonce(resp) {
		// The server asks for its nonce in the proof (RFC 9449
		// section 9): once more with it.
		resp.Body.Close()
		if req, resp, err = do(); err != nil {
			return nil, err
		}
	}
	if sent := req.Header.Get("Authorization"); resp.StatusCode == http.StatusUnauthorized && sent != "" {
		// Requests run side by side: another may have refreshed the
		// token after this one took it, and the server knows only the
		// newest. With a newer token, once more before authorizing.
		if now, err := h.bearer(); err == nil && now != "" && now != sent {
			resp.Body.Close()
			if req, resp, err = do(); err != nil {
				return nil, err
			}
		}
	}
	if (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) && h.oauth != nil {
		// Authorize reads and closes the response.
		if err := h.oauth.Authorize(ctx, req, resp); err != nil {
			return nil, err
		}
		if _, resp, err = do(); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// transientStatus is a status that fails this request but not the session.
func transientStatus(code int) bool {
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable,
		http.StatusGatewayTimeout, http.StatusTooManyRequests:
		return true
	}
	return false
}

// ErrSessionMissing is a 404 for the session: the server forgot it (it
// restarted, or expired the session). The spec says the client then starts
// a new session with a new initialize.
var ErrSessionMissing = errors.New("the server no longer knows the session")

// check reads a failed response: a 404 to a request with a session id is
// the session lost, whatever its body says (the TypeScript SDK sends a
// JSON-RPC error, -32001 "Session not found"); otherwise a JSON-RPC error
// in its body is the request's answer; a transient status fails the
// request; anything else fails the session too (fatal).
func (h *httpTransport) check(what string, resp *http.Response) (fatal bool, err error) {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return false, nil
	}
	defer resp.Body.Close()
	status := fmt.Sprintf("%s: HTTP %d %s", what, resp.StatusCode, http.StatusText(resp.StatusCode))
	if transientStatus(resp.StatusCode) {
		return false, errors.New(status)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var m message
	rpcErr := json.Unmarshal(body, &m) == nil && m.Error != nil
	if resp.StatusCode == http.StatusNotFound && resp.Request != nil && resp.Request.Header.Get(sessionIDHeader) != "" {
		h.mu.Lock()
		h.missing = true
		h.mu.Unlock()
		if rpcErr {
			return true, fmt.Errorf("%s: %w (%s)", status, ErrSessionMissing, m.Error.Message)
		}
		return true, fmt.Errorf("%s: %w", status, ErrSessionMissing)
	}
	if rpcErr {
		return false, fmt.Errorf("%s: %w", status, m.Error)
	}
	return true, errors.New(status)
}

func (h *httpTransport) send(ctx context.Context, data []byte, id string) error {
	what := "sending a response"
	var m struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(data, &m) == nil && m.Method != "" {
		what = fmt.Sprintf("sending %q", m.Method)
	}
	h.mu.Lock()
	legacy, sid := h.legacy, h.sessionID
	h.mu.Unlock()
	if legacy != "" {
		return h.sendLegacy(ctx, what, legacy, data)
	}
	resp, err := h.post(ctx, data)
	if err != nil {
		if ctx.Err() == nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)) {
			// net/http says `Post "…": EOF`.
			return fmt.Errorf("%s: the server closed the connection before it answered", what)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	if m.Method == "initialize" && sid == "" && legacyStatus(resp.StatusCode) {
		return h.initializeRefused(ctx, what, data, resp)
	}
	if fatal, err := h.check(what, resp); err != nil {
		// server/discover is a probe: a server that refuses it is one of
		// an older version, and gets initialize on the same connection.
		if fatal && m.Method != "server/discover" {
			h.fail(err)
		}
		return err
	}
	if sid := resp.Header.Get(sessionIDHeader); sid != "" {
		h.mu.Lock()
		had := h.sessionID
		if had == "" {
			h.sessionID = sid
		}
		h.mu.Unlock()
		if had != "" && had != sid {
			resp.Body.Close()
			return fmt.Errorf("%s: the server changed the session id from %q to %q", what, had, sid)
		}
	}
	if id == "" {
		// A notification or a response: 202 Accepted, no body.
		resp.Body.Close()
		return nil
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		defer resp.Body.Close()
		h.readJSON(resp.Body)
	case "text/event-stream":
		go h.stream(ctx, what, resp, id)
	default:
		resp.Body.Close()
		return fmt.Errorf("%s: the server answered with content type %q", what, ct)
	}
	return nil
}

// readJSON delivers a JSON response body: held whole up to MaxMessage, a
// longer one scanned as it is read and replaced, as on stdio.
func (h *httpTransport) readJSON(body io.Reader) {
	data, _ := io.ReadAll(io.LimitReader(body, MaxMessage+1))
	if len(data) <= MaxMessage {
		h.deliver(data)
		return
	}
	big := &bigMessage{}
	big.Write(data)
	io.Copy(big, body)
	if msg, _ := big.replacement(); msg != nil {
		h.deliver(msg)
	}
}

// stream reads a response stream for request id until its answer, resuming
// it with GET and Last-Event-ID when it ends before; it gives up after
// maxRetries resumptions that brought nothing new.
func (h *httpTransport) stream(ctx context.Context, what string, resp *http.Response, id string) {
	prev, stale := "", 0
	for {
		last, delay, answered := h.events(resp, id)
		if answered || ctx.Err() != nil || h.ctx.Err() != nil {
			return
		}
		if last == "" {
			if id != "" {
				h.answer(id, fmt.Errorf("%s: the server ended the response stream without an answer", what))
			}
			return
		}
		if last != prev {
			prev, stale = last, 0
		} else if stale++; stale > h.maxRetries {
			if id != "" {
				h.answer(id, fmt.Errorf("%s: the stream was resumed %d times without anything new", what, h.maxRetries))
			}
			return
		}
		next, err := h.resume(ctx, last, delay)
		if err != nil {
			if id != "" && ctx.Err() == nil {
				h.answer(id, fmt.Errorf("%s: resuming the stream: %w", what, err))
			}
			return
		}
		if fatal, err := h.check(what+" (resumed)", next); err != nil {
			if fatal {
				h.fail(err)
			} else if id != "" {
				h.answer(id, err)
			}
			return
		}
		resp = next
	}
}

// events delivers the messages of one response stream: the id of its last
// event, the retry delay it asked for, and whether the answer to id came.
func (h *httpTransport) events(resp *http.Response, id string) (last string, delay time.Duration, answered bool) {
	defer resp.Body.Close()
	sc := newEventScanner(resp.Body)
	for sc.next() {
		if sc.id != "" {
			last = sc.id
		}
		if sc.retry >= 0 {
			delay = time.Duration(sc.retry) * time.Millisecond
		}
		if sc.name != "" && sc.name != "message" || len(bytes.TrimSpace(sc.data)) == 0 {
			continue
		}
		h.deliver(sc.data)
		if id != "" && answers(sc.data, id) {
			return last, delay, true
		}
	}
	return last, delay, false
}

// answers reports whether msg is the response to the request id.
func answers(msg []byte, id string) bool {
	var m message
	return json.Unmarshal(msg, &m) == nil && m.Method == "" && idKey(m.ID) == id
}

// resume opens the stream again after delay (the server's, or a backoff),
// trying maxRetries times when the request itself fails.
func (h *httpTransport) resume(ctx context.Context, last string, delay time.Duration) (*http.Response, error) {
	var err error
	for attempt := 1; attempt <= max(h.maxRetries, 1); attempt++ {
		if delay <= 0 {
			delay = backoff(attempt)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-h.ctx.Done():
			return nil, errors.New("the connection was closed")
		case <-time.After(delay):
		}
		var resp *http.Response
		if resp, err = h.get(ctx, last); err == nil {
			return resp, nil
		}
		delay = 0
	}
	return nil, err
}

// backoff is the wait before the attempt-th reconnection the server did not
// time: 0.5 s doubling, at most 10 s, with up to as much again at random.
func backoff(attempt int) time.Duration {
	d := min(500*time.Millisecond<<min(attempt-1, 5), 10*time.Second)
	return d + rand.N(d)
}

// get opens a GET stream, resuming after the event last when it is set.
func (h *httpTransport) get(ctx context.Context, last string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url, nil)
	if err != nil {
		return nil, err
	}
	if err := h.headers(req); err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if last != "" {
		req.Header.Set(lastEventIDHeader, last)
	}
	return h.client.Do(req)
}

// listen opens the GET stream on which the server sends what it sends on
// its own (its requests, notifications). A server without one answers 405;
// a 4xx, or an answer that is not a stream, is taken the same way.
func (h *httpTransport) listen() {
	resp, err := h.get(h.ctx, "")
	if err != nil {
		return
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		resp.Body.Close()
		return
	}
	h.stream(h.ctx, "the server's own stream", resp, "")
}

func (h *httpTransport) close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	sid := h.sessionID
	if h.missing {
		sid = "" // nothing to end on the server
	}
	h.mu.Unlock()
	if sid != "" {
		// The session ends on the server too.
		ctx, cancel := context.WithTimeout(h.ctx, 2*time.Second)
		if req, err := http.NewRequestWithContext(ctx, http.MethodDelete, h.url, nil); err == nil && h.headers(req) == nil {
			if resp, err := h.client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	h.cancel()
}

// eventScanner reads server-sent events: data lines joined with "\n", the
// event's id, name and retry. Lines end in LF or CRLF. An event's data past
// MaxMessage is scanned as it is read and replaced (bigMessage), as a stdio
// line is: a 50 MB result is never held.
type eventScanner struct {
	br *bufio.Reader
	// The event just read.
	id, name string
	retry    int64 // -1: none
	data     []byte
}

func newEventScanner(r io.Reader) *eventScanner {
	return &eventScanner{br: bufio.NewReaderSize(r, 64<<10)}
}

// maxEventLine is the most of one line the scanner holds; the rest of a longer
// data line goes to bigMessage, of any other line is dropped.
const maxEventLine = MaxMessage + 64<<10

// next reads the next event with data, an id or a retry; false at the
// stream's end (an event cut by the end is dropped, as the format says).
func (s *eventScanner) next() bool {
	s.id, s.name, s.retry, s.data = "", "", -1, s.data[:0]
	var big *bigMessage
	seen := false
	for {
		line, long, err := s.readLine()
		if err != nil {
			return false
		}
		if len(line) == 0 && !long {
			if !seen {
				continue
			}
			if big != nil {
				msg, _ := big.replacement()
				s.data = append(s.data[:0], msg...)
			}
			return true
		}
		if line[0] == ':' {
			if long {
				s.restOfLine(io.Discard)
			}
			continue // a comment
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		if string(field) != "data" {
			if long {
				s.restOfLine(io.Discard)
				continue
			}
		}
		switch string(field) {
		case "data":
			seen = true
			switch {
			case big != nil:
				big.Write([]byte("\n"))
				big.Write(value)
			case long || len(s.data)+len(value) > MaxMessage:
				big = &bigMessage{}
				big.Write(s.data)
				if len(s.data) > 0 {
					big.Write([]byte("\n"))
				}
				big.Write(value)
				s.data = s.data[:0]
			default:
				if len(s.data) > 0 {
					s.data = append(s.data, '\n')
				}
				s.data = append(s.data, value...)
			}
			if long {
				s.restOfLine(big)
			}
		case "id":
			if !bytes.ContainsRune(value, 0) {
				seen = true
				s.id = string(value)
			}
		case "event":
			s.name = string(value)
		case "retry":
			if n, err := strconv.ParseInt(string(value), 10, 64); err == nil && n >= 0 {
				seen = true
				s.retry = n
			}
		}
	}
}

// readLine reads a line without its end. A line over maxEventLine comes back
// cut there, long set, the reader in its middle: restOfLine reads the rest.
// A line cut by the end of the stream is an error, as is any read error.
func (s *eventScanner) readLine() (line []byte, long bool, err error) {
	for {
		chunk, err := s.br.ReadSlice('\n')
		line = append(line, chunk...)
		switch {
		case err == bufio.ErrBufferFull:
			if len(line) >= maxEventLine {
				return line, true, nil
			}
			continue
		case err != nil:
			return nil, false, err
		}
		line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
		return line, false, nil
	}
}

// restOfLine copies the rest of a long line, without its end, to w.
func (s *eventScanner) restOfLine(w io.Writer) {
	for {
		chunk, err := s.br.ReadSlice('\n')
		if err == nil {
			w.Write(bytes.TrimSuffix(chunk[:len(chunk)-1], []byte("\r")))
			return
		}
		w.Write(chunk)
		if err != bufio.ErrBufferFull {
			return
		}
	}
}
