package oauth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// DPoP (RFC 9449, SEP-1932): where the authorization server lists ES256
// in dpop_signing_alg_values_supported, awl makes a P-256 key for the
// server's tokens, proves possession of it at the token endpoint (the token
// is then bound to it, token_type DPoP) and on every request to the MCP
// server (Authorization: DPoP, and a fresh proof naming the method, the URL
// and the token's hash). A server that answers use_dpop_nonce with a
// DPoP-Nonce header gets the request again, the nonce in the proof. The key
// is kept with the tokens in their file (0600) for as long as they live,
// since a refresh token bound to it is worthless without it; it is a secret
// like them (Env.Secret), and never leaves that file and this process.

// dpopKey is the key of one server's DPoP-bound tokens, and the nonces
// its servers gave, by origin.
type dpopKey struct {
	priv *ecdsa.PrivateKey
	jwk  map[string]string

	mu     sync.Mutex
	nonces map[string]string
}

func newDPoPKey() (*dpopKey, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return dpopKeyOf(priv), nil
}

func dpopKeyOf(priv *ecdsa.PrivateKey) *dpopKey {
	pub, _ := priv.PublicKey.ECDH()
	raw := pub.Bytes() // 0x04 || X || Y
	enc := base64.RawURLEncoding
	return &dpopKey{priv: priv, nonces: map[string]string{}, jwk: map[string]string{
		"kty": "EC", "crv": "P-256", "x": enc.EncodeToString(raw[1:33]), "y": enc.EncodeToString(raw[33:65]),
	}}
}

// pem is the private key as PKCS#8 PEM, as the token file keeps it.
func (k *dpopKey) pem() string {
	der, err := x509.MarshalPKCS8PrivateKey(k.priv)
	if err != nil {
		return ""
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// parseDPoPKey reads a key pem wrote.
func parseDPoPKey(s string) (*dpopKey, error) {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, errors.New("the DPoP key is not PEM")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, errors.New("the DPoP key is not a P-256 key")
	}
	return dpopKeyOf(ec), nil
}

// origin is the scheme and host of u, the key of a nonce.
func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// proof is a DPoP proof for a request (method, URL), with the access
// token's hash when there is one, and the nonce the URL's server gave.
func (k *dpopKey) proof(method string, u *url.URL, accessToken string) (string, error) {
	htu := *u
	htu.RawQuery, htu.Fragment, htu.User = "", "", nil
	jti := make([]byte, 16)
	rand.Read(jti)
	claims := map[string]any{"jti": hex.EncodeToString(jti), "htm": method, "htu": htu.String(), "iat": time.Now().Unix()}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	k.mu.Lock()
	if n := k.nonces[origin(u)]; n != "" {
		claims["nonce"] = n
	}
	k.mu.Unlock()
	hdr, _ := json.Marshal(map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": k.jwk})
	body, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(hdr) + "." + enc.EncodeToString(body)
	sig, err := signES256(k.priv, input)
	if err != nil {
		return "", err
	}
	return input + "." + enc.EncodeToString(sig), nil
}

// signES256 is the JWS signature of input: r and s, 32 bytes each.
func signES256(priv *ecdsa.PrivateKey, input string) ([]byte, error) {
	sum := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, priv, sum[:])
	if err != nil {
		return nil, err
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return sig, nil
}

// noteNonce keeps the DPoP-Nonce of a response asking for one
// (use_dpop_nonce, RFC 9449 sections 8 and 9); it reports whether the
// request should be sent again with it.
func (k *dpopKey) noteNonce(resp *http.Response, body []byte) bool {
	n := resp.Header.Get("DPoP-Nonce")
	if n == "" || resp.Request == nil {
		return false
	}
	asked := bytes.Contains(body, []byte("use_dpop_nonce"))
	for _, h := range resp.Header.Values("WWW-Authenticate") {
		asked = asked || strings.Contains(h, "use_dpop_nonce")
	}
	if !asked {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	o := origin(resp.Request.URL)
	if k.nonces[o] == n {
		return false // the nonce it had: once is enough
	}
	k.nonces[o] = n
	return true
}

// dpopTransport adds a proof to each request to the token endpoint (the
// code exchange and every refresh), and sends one again with the nonce the
// authorization server asks for.
type dpopTransport struct {
	base http.RoundTripper
	key  *dpopKey
}

func (t dpopTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	send := func() (*http.Response, error) {
		r2 := r.Clone(r.Context())
		if r.GetBody != nil {
			b, err := r.GetBody()
			if err != nil {
				return nil, err
			}
			r2.Body = b
		}
		p, err := t.key.proof(r.Method, r.URL, "")
		if err != nil {
			return nil, err
		}
		r2.Header.Set("DPoP", p)
		return t.base.RoundTrip(r2)
	}
	resp, err := send()
	if err != nil || resp.StatusCode != http.StatusBadRequest || resp.Header.Get("DPoP-Nonce") == "" {
		return resp, err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if !t.key.noteNonce(resp, body) {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	return send()
}

// dpopClient is c with proofs at the token endpoint.
func dpopClient(c *http.Client, key *dpopKey) *http.Client {
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out := *c
	out.Transport = dpopTransport{base: base, key: key}
	return &out
}
