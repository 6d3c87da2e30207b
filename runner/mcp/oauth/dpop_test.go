package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// verifyProof checks a DPoP proof as a server does (RFC 9449 section 4.3):
// its header, its signature by the key it carries, and its claims; it
// returns the claims.
func verifyProof(t *testing.T, proof string) map[string]any {
	t.Helper()
	parts := strings.Split(proof, ".")
	if len(parts) != 3 {
		t.Fatalf("proof %q is not a JWS", proof)
	}
	enc := base64.RawURLEncoding
	hb, _ := enc.DecodeString(parts[0])
	cb, _ := enc.DecodeString(parts[1])
	sig, _ := enc.DecodeString(parts[2])
	var hdr struct {
		Typ, Alg string
		JWK      map[string]string
	}
	var claims map[string]any
	if json.Unmarshal(hb, &hdr) != nil || json.Unmarshal(cb, &claims) != nil || hdr.Typ != "dpop+jwt" || hdr.Alg != "ES256" || hdr.JWK["kty"] != "EC" || hdr.JWK["d"] != "" {
		t.Fatalf("header %s, claims %s", hb, cb)
	}
	x, _ := enc.DecodeString(hdr.JWK["x"])
	y, _ := enc.DecodeString(hdr.JWK["y"])
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		t.Fatalf("the proof's jwk: %v", err)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatalf("the proof's signature does not verify")
	}
	if claims["jti"] == "" || claims["iat"] == nil {
		t.Errorf("claims %v", claims)
	}
	return claims
}

// The token endpoint gets a proof naming it (no query), and a request it
// refuses with use_dpop_nonce goes once more with the nonce; the proofs of
// the MCP requests carry the token's hash and the server's own nonce, each
// proof fresh. The key survives its PEM (the token file).
func TestDPoPProofs(t *testing.T) {
	key, err := newDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var tokenProofs []map[string]any
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims := verifyProof(t, r.Header.Get("DPoP"))
		mu.Lock()
		tokenProofs = append(tokenProofs, claims)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if claims["nonce"] != "as-n1" {
			w.Header().Set("DPoP-Nonce", "as-n1")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"use_dpop_nonce"}`)
			return
		}
		io.WriteString(w, `{"access_token":"at-1","token_type":"DPoP"}`)
	}))
	defer as.Close()
	c := dpopClient(as.Client(), key)
	resp, err := c.PostForm(as.URL+"/token?x=1", url.Values{"grant_type": {"authorization_code"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "at-1") || len(tokenProofs) != 2 {
		t.Fatalf("token request: %d %s after %d proofs", resp.StatusCode, b, len(tokenProofs))
	}
	if p := tokenProofs[1]; p["htm"] != "POST" || p["htu"] != as.URL+"/token" || p["ath"] != nil || p["jti"] == tokenProofs[0]["jti"] {
		t.Errorf("token proof %v", p)
	}

	again, err := parseDPoPKey(key.pem())
	if err != nil || again.jwk["x"] != key.jwk["x"] {
		t.Fatalf("the key from its PEM: %v", err)
	}
	h := &codeHandler{env: &Env{}, dpop: again}
	u, _ := url.Parse("https://mcp.example/mcp?tenant=a")
	p1, _ := h.Proof("POST", u, "at-1")
	resp401 := &http.Response{StatusCode: 401, Request: &http.Request{URL: u}, Header: http.Header{
		"Dpop-Nonce": {"rs-n1"}, "Www-Authenticate": {`DPoP error="use_dpop_nonce"`}}}
	if !h.Nonce(resp401) || h.Nonce(resp401) {
		t.Errorf("a new nonce asks for a retry, the same one again does not")
	}
	p2, _ := h.Proof("GET", u, "at-1")
	c1, c2 := verifyProof(t, p1), verifyProof(t, p2)
	ath := sha256.Sum256([]byte("at-1"))
	if c1["htu"] != "https://mcp.example/mcp" || c1["ath"] != base64.RawURLEncoding.EncodeToString(ath[:]) || c1["nonce"] != nil || c2["nonce"] != "rs-n1" || c2["htm"] != "GET" || c1["jti"] == c2["jti"] {
		t.Errorf("proofs %v %v", c1, c2)
	}
	if p, _ := (&codeHandler{env: &Env{}}).Proof("POST", u, "at-1"); p != "" {
		t.Errorf("a bearer token got a proof")
	}
}

// A DPoP key is kept with its tokens, in their 0600 file, and comes back
// from it with them; the redactor is told the key as it is loaded.
func TestDPoPKeyKeptWithTokens(t *testing.T) {
	dir := t.TempDir()
	var secrets []string
	env := &Env{Name: "web", URL: "https://mcp.example/mcp", TokenDir: dir, Secret: func(vs ...string) { secrets = append(secrets, vs...) }}
	key, err := newDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	cfg := &oauth2.Config{ClientID: "c", Endpoint: oauth2.Endpoint{TokenURL: "https://as.example/token"}}
	tok := &oauth2.Token{AccessToken: "at-1", RefreshToken: "rt-1", TokenType: "DPoP", Expiry: time.Now().Add(time.Hour)}
	env.storingSource(cfg, oauth2.StaticTokenSource(tok), tok, key)
	p := TokenFile(dir, "web", env.URL)
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	h, err := authCodeHandler(&Config{}, env)
	if err != nil {
		t.Fatal(err)
	}
	ch := h.(*codeHandler)
	if ch.dpop == nil || ch.dpop.jwk["x"] != key.jwk["x"] || !slices.Contains(secrets, key.pem()) {
		t.Fatalf("the key did not come back from the file, or the redactor was not told it")
	}
	ts, _ := ch.TokenSource(context.Background())
	if got, err := ts.Token(); err != nil || got.TokenType != "DPoP" || got.AccessToken != "at-1" {
		t.Fatalf("token: %+v %v", got, err)
	}
}
