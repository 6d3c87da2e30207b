package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The HTTP+SSE transport of protocol 2024-11-05, which streamable HTTP
// replaced: the client opens a GET event stream, whose first event,
// "endpoint", names the URL to POST messages to; every message of the
// server's, answers included, comes on that stream. The spec's advice to a
// client that supports both: POST the initialize request to the URL; when
// that fails with 400, 404 or 405, GET the URL and take the server for an
// old one if an "endpoint" event arrives. awl does so (legacyFallback), so
// a server given as "url" works whichever transport it speaks.

// legacyStatus is a status with which a 2024-11-05 server may refuse the
// POST of initialize to its event-stream URL.
func legacyStatus(code int) bool {
	return code == http.StatusBadRequest || code == http.StatusNotFound || code == http.StatusMethodNotAllowed
}

// legacyFallback tries the URL as a 2024-11-05 server's event stream after
// the POST of initialize (data) was refused with status. It reports whether
// the server is one; err is why the initialize could not be sent to it
// after all.
func (h *httpTransport) legacyFallback(ctx context.Context, data []byte, status string) (legacy bool, err error) {
	// The stream outlives this request: the connection's context.
	resp, err := h.get(h.ctx, "")
	if err != nil {
		return false, nil
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		resp.Body.Close()
		return false, nil
	}
	sc := newEventScanner(resp.Body)
	// The endpoint event comes first; a server that sends anything else
	// first is not one of these.
	first := make(chan string, 1)
	go func() {
		if sc.next() && sc.name == "endpoint" {
			first <- strings.TrimSpace(string(sc.data))
		}
		close(first)
	}()
	var ep string
	select {
	case ep = <-first:
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}
	if ep == "" {
		resp.Body.Close()
		return false, nil
	}
	base, _ := url.Parse(h.url)
	target, err := base.Parse(ep)
	if err != nil || target.Scheme != base.Scheme || target.Host != base.Host {
		// A server may not send awl's messages, and its token, to
		// another origin.
		resp.Body.Close()
		return true, fmt.Errorf("%s; the URL's event stream (the 2024-11-05 HTTP+SSE transport) names an endpoint on another origin, %q: refused", status, ep)
	}
	h.mu.Lock()
	h.legacy = target.String()
	h.mu.Unlock()
	go h.legacyStream(resp, sc)
	r, err := h.postTo(ctx, h.legacy, data)
	if err != nil {
		return true, err
	}
	defer r.Body.Close()
	if r.StatusCode < 200 || r.StatusCode > 299 {
		return true, fmt.Errorf("HTTP %d %s from the 2024-11-05 endpoint %s", r.StatusCode, http.StatusText(r.StatusCode), h.legacy)
	}
	return true, nil
}

// legacyStream delivers the messages of a 2024-11-05 server's event stream
// until it ends, which ends the connection.
func (h *httpTransport) legacyStream(resp *http.Response, sc *eventScanner) {
	defer resp.Body.Close()
	for sc.next() {
		if sc.name != "" && sc.name != "message" {
			continue
		}
		h.deliver(sc.data)
	}
	if h.ctx.Err() == nil {
		h.fail(fmt.Errorf("%w: the server's event stream (2024-11-05 HTTP+SSE) ended", ErrConnClosed))
	}
}

// sendLegacy POSTs a message to a 2024-11-05 server's endpoint: its answer
// comes on the event stream.
func (h *httpTransport) sendLegacy(ctx context.Context, what, endpoint string, data []byte) error {
	resp, err := h.postTo(ctx, endpoint, data)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := fmt.Errorf("%s: HTTP %d %s", what, resp.StatusCode, http.StatusText(resp.StatusCode))
		if resp.StatusCode == http.StatusNotFound {
			// The endpoint names the server's session: it is gone.
			h.fail(fmt.Errorf("%w: %v", ErrConnClosed, err))
		}
		return err
	}
	return nil
}

// initializeRefused handles a 400, 404 or 405 to the POST of initialize:
// the server may be a 2024-11-05 one, whose URL is its event stream. If it
// is not, the refusal stands, with a word on what was tried when the
// server said nothing in JSON-RPC.
func (h *httpTransport) initializeRefused(ctx context.Context, what string, data []byte, resp *http.Response) error {
	fatal, cerr := h.check(what, resp)
	legacy, err := h.legacyFallback(ctx, data, cerr.Error())
	switch {
	case legacy && err != nil:
		return fmt.Errorf("%s: %w", what, err)
	case legacy:
		return nil
	}
	var re *Error
	if !errors.As(cerr, &re) {
		cerr = fmt.Errorf("%w; %w", cerr, errNotLegacy)
	}
	if fatal {
		h.fail(cerr)
	}
	return cerr
}

// errNotLegacy is what a failed initialize says when the URL's GET is no
// 2024-11-05 event stream either.
var errNotLegacy = errors.New("a GET of the URL brought no 2024-11-05 event stream either (the HTTP+SSE transport's \"endpoint\" event): is it an MCP endpoint?")
