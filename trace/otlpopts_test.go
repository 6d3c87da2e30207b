package trace

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "google.golang.org/grpc/encoding/gzip" // the receiver takes gzip
)

// TestExportOptions: the timeout, compression and certificate variables,
// each in its _TRACES_ form winning over the general one, and a value
// awl cannot use said on stderr (tracing off), never ignored.
func TestExportOptions(t *testing.T) {
	const ep = "http://127.0.0.1:4318"
	cfg, warn := FromEnv(env("OTEL_EXPORTER_OTLP_ENDPOINT", ep, "OTEL_EXPORTER_OTLP_TIMEOUT", "2500", "OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"))
	if cfg == nil || cfg.Timeout != 2500*time.Millisecond || !cfg.Gzip || cfg.TLS != nil {
		t.Fatalf("cfg %+v, warn %q", cfg, warn)
	}
	cfg, _ = FromEnv(env("OTEL_EXPORTER_OTLP_ENDPOINT", ep, "OTEL_EXPORTER_OTLP_TIMEOUT", "2500", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "300",
		"OTEL_EXPORTER_OTLP_COMPRESSION", "gzip", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "none"))
	if cfg == nil || cfg.Timeout != 300*time.Millisecond || cfg.Gzip {
		t.Fatalf("the _TRACES_ forms do not win: %+v", cfg)
	}
	if cfg, _ := FromEnv(env("OTEL_EXPORTER_OTLP_ENDPOINT", ep)); cfg == nil || cfg.Timeout != time.Second || cfg.Gzip {
		t.Fatalf("defaults: %+v", cfg)
	}
	for _, c := range []struct{ k, v, warn string }{
		{"OTEL_EXPORTER_OTLP_TIMEOUT", "10s", "OTEL_EXPORTER_OTLP_TIMEOUT=10s is not a positive number of milliseconds; tracing is off"},
		{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "0", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT=0 is not a positive number of milliseconds"},
		{"OTEL_EXPORTER_OTLP_COMPRESSION", "zstd", "OTEL_EXPORTER_OTLP_COMPRESSION=zstd: awl compresses with gzip or none"},
		{"OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/ca.pem", "OTEL_EXPORTER_OTLP_CERTIFICATE: open /nonexistent/ca.pem: no such file or directory"},
		{"OTEL_EXPORTER_OTLP_CLIENT_KEY", "/k.pem", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY go together"},
	} {
		cfg, warn := FromEnv(env("OTEL_EXPORTER_OTLP_ENDPOINT", ep, c.k, c.v))
		if cfg != nil || !strings.Contains(warn, c.warn) {
			t.Errorf("%s=%s: cfg %v, warn %q; want off, saying %q", c.k, c.v, cfg != nil, warn, c.warn)
		}
	}
}

// TestExportGzip: with gzip the OTLP/HTTP body says so and inflates to
// the request, and a real gRPC receiver takes the compressed message.
func TestExportGzip(t *testing.T) {
	var got []byte
	var encoding string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encoding = r.Header.Get("Content-Encoding")
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		got, _ = io.ReadAll(zr)
	}))
	defer srv.Close()
	cfg, warn := FromEnv(env("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL, "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip", "OTEL_EXPORTER_OTLP_TIMEOUT", "60000"))
	if cfg == nil {
		t.Fatal(warn)
	}
	req := oneRun(cfg)
	if err := cfg.Export(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if encoding != "gzip" || !bytes.Equal(got, req) {
		t.Fatalf("Content-Encoding %q, inflated body equal: %v", encoding, bytes.Equal(got, req))
	}

	svc, endpoint := grpcReceiver(t)
	cfg, warn = FromEnv(env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_COMPRESSION", "gzip", "OTEL_EXPORTER_OTLP_TIMEOUT", "60000"))
	if cfg == nil {
		t.Fatal(warn)
	}
	if err := cfg.Export(context.Background(), oneRun(cfg)); err != nil {
		t.Fatal(err)
	}
	svc.mu.Lock()
	defer svc.mu.Unlock()
	if len(svc.reqs) != 1 || svc.reqs[0].ResourceSpans[0].ScopeSpans[0].Spans[0].Name != "invoke_agent awl" {
		t.Fatalf("received %v", svc.reqs)
	}
}

// oneRun is the export request of a trace of one run span.
func oneRun(cfg *Config) []byte {
	b := NewBuilder(cfg, time.Now(), "v1", nil)
	b.Write([]byte(`{"type":"session","session_id":"s1","provider":"anthropic","model":"m"}` + "\n" +
		`{"type":"result","session_id":"s1","exit_code":0,"reason":"completed"}` + "\n"))
	return b.Request()
}

// TestExportTLSFiles: a collector whose certificate only
// OTEL_EXPORTER_OTLP_CERTIFICATE vouches for, and that asks for a client
// certificate, takes the export with the certificate variables and
// refuses it without them.
func TestExportTLSFiles(t *testing.T) {
	dir := t.TempDir()
	clientCert, clientKey := selfSigned(t, dir)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(readFile(t, clientCert))
	exports := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { exports++ }))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	// The export's own 1 s bound is not under test: a TLS handshake on a
	// loaded machine may take longer (seen at load 27).
	base := []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", srv.URL + "/v1/traces", "OTEL_EXPORTER_OTLP_TIMEOUT", "60000"}
	for _, c := range []struct {
		env  []string
		fail string
	}{
		{nil, "certificate"},
		{[]string{"OTEL_EXPORTER_OTLP_CERTIFICATE", ca}, "certificate"},
		{[]string{"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", ca, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", clientCert, "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY", clientKey}, ""},
	} {
		cfg, warn := FromEnv(env(append(base, c.env...)...))
		if cfg == nil {
			t.Fatal(warn)
		}
		before := exports
		err := cfg.Export(context.Background(), oneRun(cfg))
		switch {
		case c.fail == "" && (err != nil || exports != before+1):
			t.Errorf("%v: %v, %d exports", c.env, err, exports-before)
		case c.fail != "" && (err == nil || !strings.Contains(err.Error(), c.fail) || exports != before):
			t.Errorf("%v: err %v; want a TLS failure", c.env, err)
		}
	}
}

// selfSigned writes a self-signed client certificate and its key as PEM
// files in dir.
func selfSigned(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "awl"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
