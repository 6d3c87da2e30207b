package trace

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is the tracing set-up the standard OpenTelemetry variables ask for.
type Config struct {
	// Endpoint is the full URL spans are POSTed to.
	Endpoint string
	Headers  map[string]string
	// Resource is the resource's attributes: OTEL_RESOURCE_ATTRIBUTES,
	// then service.name (OTEL_SERVICE_NAME, default "awl").
	Resource []KV
	// CaptureContent is OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
	CaptureContent bool
	// TraceID and Parent come from TRACEPARENT (Parent zero: no parent,
	// and TraceID is new); TraceState from TRACESTATE.
	TraceID    [16]byte
	Parent     [8]byte
	TraceState string
	// Root is the run span's id, chosen up front so that tools can be
	// given it as their TRACEPARENT.
	Root [8]byte
	// Timeout bounds the export at exit: 1 s, or OTEL_EXPORTER_OTLP_TIMEOUT.
	Timeout time.Duration
	// Gzip is OTEL_EXPORTER_OTLP_COMPRESSION=gzip: the export's body (the
	// gRPC message) is sent gzip-compressed.
	Gzip bool
	// TLS is what OTEL_EXPORTER_OTLP_CERTIFICATE (the roots that verify
	// the collector) and OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and
	// _CLIENT_KEY (awl's certificate) ask for; nil: the system's roots.
	TLS *tls.Config
	// GRPC is OTEL_EXPORTER_OTLP_PROTOCOL=grpc: Endpoint is the
	// collector's gRPC address, and the export is a unary gRPC call over
	// HTTP/2 (cleartext for http://, TLS for https://).
	GRPC bool

	// transport, when set, replaces the network (tests: it sees the
	// export's request, and the deadline its context carries).
	transport http.RoundTripper
}

// FromEnv returns the configuration getenv asks for, nil when tracing is
// off: no OTLP endpoint, OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
// warn is a problem to report on stderr; tracing is then off too.
func FromEnv(getenv func(string) string) (cfg *Config, warn string) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, ""
	}
	proto := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if proto == "" {
		proto = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	grpc := proto == "grpc"
	endpoint := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	if endpoint == "" {
		base := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
		if base == "" {
			return nil, ""
		}
		// A gRPC endpoint is the collector's address; OTLP/HTTP's
		// base URL gets the traces path.
		endpoint = base
		if !grpc {
			endpoint = strings.TrimRight(base, "/") + "/v1/traces"
		}
	}
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "", "otlp":
	case "none":
		return nil, ""
	default:
		return nil, fmt.Sprintf("OTEL_TRACES_EXPORTER=%s: awl exports traces with otlp only; tracing is off", exp)
	}
	if proto != "" && proto != "http/protobuf" && !grpc {
		return nil, fmt.Sprintf("OTLP protocol %s: awl sends http/protobuf or grpc; tracing is off", proto)
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Sprintf("OTLP endpoint %q is not an http or https URL; tracing is off", endpoint)
	}
	cfg = &Config{Endpoint: endpoint, Headers: map[string]string{}, Timeout: time.Second, GRPC: grpc}
	if warn := cfg.exportOptions(getenv); warn != "" {
		return nil, warn + "; tracing is off"
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		for k, val := range parseList(getenv(v)) {
			cfg.Headers[k] = val
		}
	}
	cfg.Resource = append(cfg.Resource, Str("telemetry.sdk.name", "awl"), Str("telemetry.sdk.language", "go"))
	attrs := parseList(getenv("OTEL_RESOURCE_ATTRIBUTES"))
	service := strings.TrimSpace(getenv("OTEL_SERVICE_NAME"))
	if service == "" {
		service = attrs["service.name"]
	}
	if service == "" {
		service = "awl"
	}
	delete(attrs, "service.name")
	cfg.Resource = append(cfg.Resource, Str("service.name", service))
	for _, k := range sortedKeys(attrs) {
		cfg.Resource = append(cfg.Resource, Str(k, attrs[k]))
	}
	cfg.CaptureContent = strings.EqualFold(strings.TrimSpace(getenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")), "true")
	if tid, sid, ok := ParseTraceparent(getenv("TRACEPARENT")); ok {
		cfg.TraceID, cfg.Parent = tid, sid
		cfg.TraceState = strings.TrimSpace(getenv("TRACESTATE"))
	} else {
		rand.Read(cfg.TraceID[:])
	}
	rand.Read(cfg.Root[:])
	return cfg, ""
}

// otlpVar is the value of OTEL_EXPORTER_OTLP_TRACES_<name>, or else of
// OTEL_EXPORTER_OTLP_<name>, and the variable it came from.
func otlpVar(getenv func(string) string, name string) (val, from string) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_" + name, "OTEL_EXPORTER_OTLP_" + name} {
		if val = strings.TrimSpace(getenv(v)); val != "" {
			return val, v
		}
	}
	return "", ""
}

// exportOptions reads the timeout, the compression and the TLS files of
// the export, each from its _TRACES_ variable or else the general one. It
// returns what is wrong with them, "" when nothing is.
func (c *Config) exportOptions(getenv func(string) string) string {
	if v, from := otlpVar(getenv, "TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return fmt.Sprintf("%s=%s is not a positive number of milliseconds", from, v)
		}
		c.Timeout = time.Duration(ms) * time.Millisecond
	}
	switch v, from := otlpVar(getenv, "COMPRESSION"); v {
	case "", "none":
	case "gzip":
		c.Gzip = true
	default:
		return fmt.Sprintf("%s=%s: awl compresses with gzip or none", from, v)
	}
	return c.tlsFiles(getenv)
}

// tlsFiles loads the certificate variables' files into c.TLS.
func (c *Config) tlsFiles(getenv func(string) string) string {
	ca, caFrom := otlpVar(getenv, "CERTIFICATE")
	cert, certFrom := otlpVar(getenv, "CLIENT_CERTIFICATE")
	key, keyFrom := otlpVar(getenv, "CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return ""
	}
	c.TLS = &tls.Config{}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return fmt.Sprintf("%s: %v", caFrom, err)
		}
		c.TLS.RootCAs = x509.NewCertPool()
		if !c.TLS.RootCAs.AppendCertsFromPEM(pem) {
			return fmt.Sprintf("%s: %s holds no PEM certificate", caFrom, ca)
		}
	}
	switch {
	case cert == "" && key == "":
	case cert == "" || key == "":
		return "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY go together: one is set, not the other"
	default:
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return fmt.Sprintf("%s, %s: %v", certFrom, keyFrom, err)
		}
		c.TLS.Certificates = []tls.Certificate{pair}
	}
	return ""
}

// body is what the export sends of msg: msg itself, or gzipped.
func (c *Config) body(msg []byte) []byte {
	if !c.Gzip {
		return msg
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(msg)
	zw.Close()
	return b.Bytes()
}

// Traceparent is the W3C traceparent of the run span, for child processes.
func (c *Config) Traceparent() string {
	return c.traceparent(c.Root)
}

// traceparent is the W3C traceparent of span span of the trace.
func (c *Config) traceparent(span [8]byte) string {
	return "00-" + hex.EncodeToString(c.TraceID[:]) + "-" + hex.EncodeToString(span[:]) + "-01"
}

// ParseTraceparent reads a W3C traceparent header (version 00, or a later
// one read as 00). An all-zero trace or span id is invalid.
func ParseTraceparent(s string) (trace [16]byte, span [8]byte, ok bool) {
	s = strings.TrimSpace(s)
	parts := strings.Split(s, "-")
	if len(parts) < 4 || len(parts[0]) != 2 || len(parts[1]) != 32 || len(parts[2]) != 16 || len(parts[3]) != 2 {
		return trace, span, false
	}
	if parts[0] == "ff" || (parts[0] == "00" && len(parts) != 4) || strings.ToLower(s) != s {
		return trace, span, false
	}
	if _, err := hex.Decode(trace[:], []byte(parts[1])); err != nil {
		return trace, span, false
	}
	if _, err := hex.Decode(span[:], []byte(parts[2])); err != nil {
		return trace, span, false
	}
	if _, err := hex.DecodeString(parts[0] + parts[3]); err != nil {
		return trace, span, false
	}
	if trace == ([16]byte{}) || span == ([8]byte{}) {
		return trace, span, false
	}
	return trace, span, true
}

// parseList reads "k1=v1,k2=v2" with percent-encoded values, as the OTLP
// headers and resource attributes variables are written. Malformed items
// are skipped.
func parseList(s string) map[string]string {
	out := map[string]string{}
	for item := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			continue
		}
		if dv, err := url.PathUnescape(strings.TrimSpace(v)); err == nil {
			v = dv
		}
		out[k] = strings.TrimSpace(v)
	}
	return out
}

// HeaderValues returns the values of the OTLP header variables in env
// (collector credentials): secrets, to be redacted and kept from tools.
// Each is there decoded, as awl sends it, and, where it differs, as the
// variable spells it, percent-encoded (a tool that prints the variable,
// a log of the step's environment).
func HeaderValues(getenv func(string) string) []string {
	var out []string
	for _, v := range SecretVars {
		for _, val := range parseList(getenv(v)) {
			if val != "" {
				out = append(out, val)
			}
		}
		for item := range strings.SplitSeq(getenv(v), ",") {
			if k, raw, ok := strings.Cut(item, "="); ok && strings.TrimSpace(k) != "" {
				if raw = strings.TrimSpace(raw); raw != "" && !slices.Contains(out, raw) {
					out = append(out, raw)
				}
			}
		}
	}
	return out
}

// SecretVars are the variables that may hold collector credentials.
var SecretVars = []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// Export POSTs body (an encoded ExportTraceServiceRequest) to the
// endpoint, within the configured timeout.
func (c *Config) Export(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	if c.GRPC {
		return c.exportGRPC(ctx, body)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint, bytes.NewReader(c.body(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if c.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	c.setHeaders(req)
	resp, err := c.client(&http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: c.TLS}).Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("export to %s: no answer within %s", redactURL(c.Endpoint), c.Timeout)
		}
		return fmt.Errorf("export to %s: %v", redactURL(c.Endpoint), unwrapURLError(err))
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("export to %s: HTTP %d", redactURL(c.Endpoint), resp.StatusCode)
	}
	return nil
}

// client is the export's HTTP client, over t unless a test replaced the
// network.
func (c *Config) client(t *http.Transport) *http.Client {
	if c.transport != nil {
		return &http.Client{Transport: c.transport}
	}
	return &http.Client{Transport: t}
}

// grpcExport is the OTLP trace service's export method.
const grpcExport = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

// exportGRPC makes the unary gRPC call TraceService/Export with body: one
// length-prefixed message (gzipped with Gzip) over HTTP/2, the status in the
// grpc-status trailer (or header, for a trailers-only answer).
func (c *Config) exportGRPC(ctx context.Context, body []byte) error {
	u, err := url.Parse(c.Endpoint)
	if err != nil {
		return err
	}
	u.Path = strings.TrimRight(u.Path, "/") + grpcExport
	body = c.body(body)
	msg := make([]byte, 5, 5+len(body))
	if c.Gzip {
		msg[0] = 1 // the compressed flag
	}
	binary.BigEndian.PutUint32(msg[1:], uint32(len(body)))
	msg = append(msg, body...)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(msg))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	if c.Gzip {
		req.Header.Set("Grpc-Encoding", "gzip")
	}
	c.setHeaders(req)
	var protos http.Protocols
	if u.Scheme == "https" {
		protos.SetHTTP2(true)
	} else {
		protos.SetUnencryptedHTTP2(true)
	}
	resp, err := c.client(&http.Transport{Proxy: http.ProxyFromEnvironment, Protocols: &protos, TLSClientConfig: c.TLS}).Do(req)
	where := redactURL(c.Endpoint)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("export to %s: no answer within %s", where, c.Timeout)
		}
		return fmt.Errorf("export to %s: %v", where, unwrapURLError(err))
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return fmt.Errorf("export to %s: %v", where, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("export to %s: HTTP %d", where, resp.StatusCode)
	}
	status, msgText := resp.Trailer.Get("Grpc-Status"), resp.Trailer.Get("Grpc-Message")
	if status == "" {
		status, msgText = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	}
	if status != "0" {
		if m, err := url.PathUnescape(msgText); err == nil {
			msgText = m
		}
		return fmt.Errorf("export to %s: gRPC status %s: %s", where, cmpOr(status, "missing"), msgText)
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// redactURL drops credentials from a URL for messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "the OTLP endpoint"
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}

func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// setHeaders sets what every export request carries, over HTTP and gRPC
// alike: awl's User-Agent, then the configured headers
// (OTEL_EXPORTER_OTLP_HEADERS), which may replace it.
func (c *Config) setHeaders(req *http.Request) {
	req.Header.Set("User-Agent", "awl")
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
}
