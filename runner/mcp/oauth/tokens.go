package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/oauth2"

	"github.com/awlrun/awl/internal/atomicfile"
)

// tokens is a handler's token source now: the transport's requests read
// it while an authorization may replace it.
type tokens struct {
	tsMu sync.Mutex
	ts   oauth2.TokenSource
}

func (t *tokens) TokenSource(context.Context) (oauth2.TokenSource, error) {
	t.tsMu.Lock()
	defer t.tsMu.Unlock()
	return t.ts, nil
}

func (t *tokens) set(ts oauth2.TokenSource) {
	t.tsMu.Lock()
	t.ts = ts
	t.tsMu.Unlock()
}

// storedTokens is what the token file holds: the token and what refreshing
// it takes.
type storedTokens struct {
	Server       string        `json:"server"`
	URL          string        `json:"url"`
	ClientID     string        `json:"client_id"`
	ClientSecret string        `json:"client_secret,omitempty"`
	AuthURL      string        `json:"auth_url"`
	TokenURL     string        `json:"token_url"`
	AuthStyle    int           `json:"auth_style"`
	Scopes       []string      `json:"scopes,omitempty"`
	Token        *oauth2.Token `json:"token"`
	// DPoPKey is the PKCS#8 PEM key the tokens are bound to (DPoP); ""
	// for bearer tokens.
	DPoPKey string `json:"dpop_key,omitempty"`
}

func (st *storedTokens) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID: st.ClientID, ClientSecret: st.ClientSecret, Scopes: st.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: st.AuthURL, TokenURL: st.TokenURL, AuthStyle: oauth2.AuthStyle(st.AuthStyle)},
	}
}

// TokenFile is where the tokens of the server named name at url are kept
// under dir.
func TokenFile(dir, name, url string) string {
	sum := sha256.Sum256([]byte(url))
	return filepath.Join(dir, name+"-"+hex.EncodeToString(sum[:6])+".json")
}

func (e *Env) tokenFile() string {
	if e.TokenDir == "" {
		return ""
	}
	return TokenFile(e.TokenDir, e.Name, e.URL)
}

func (e *Env) loadTokens() (*storedTokens, error) {
	p := e.tokenFile()
	if p == "" {
		return nil, nil
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st storedTokens
	if err := json.Unmarshal(b, &st); err != nil || st.Token == nil || st.URL != e.URL {
		return nil, fmt.Errorf("%s: not a token file of this server", p)
	}
	return &st, nil
}

// saveTokens writes the file at 0600 (its directory 0700), replacing it
// whole.
func (e *Env) saveTokens(c *oauth2.Config, tok *oauth2.Token, key *dpopKey) error {
	p := e.tokenFile()
	if p == "" {
		return nil
	}
	st := storedTokens{Server: e.Name, URL: e.URL, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
		AuthURL: c.Endpoint.AuthURL, TokenURL: c.Endpoint.TokenURL, AuthStyle: int(c.Endpoint.AuthStyle), Scopes: c.Scopes, Token: tok}
	if key != nil {
		st.DPoPKey = key.pem()
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(p, b, 0o600)
}

// storingSource stores each new token of ts (a refresh gives one).
func (e *Env) storingSource(c *oauth2.Config, ts oauth2.TokenSource, first *oauth2.Token, key *dpopKey) oauth2.TokenSource {
	st := &storingSource{e: e, c: c, ts: ts, key: key}
	if first != nil {
		e.secret(first.AccessToken, first.RefreshToken)
		st.last = first.AccessToken
		if err := e.saveTokens(c, first, key); err != nil {
			e.warnf("mcp server %s: tokens not stored: %v", e.Name, err)
		}
	}
	return st
}

type storingSource struct {
	e    *Env
	c    *oauth2.Config
	ts   oauth2.TokenSource
	key  *dpopKey
	mu   sync.Mutex
	last string
}

func (t *storingSource) Token() (*oauth2.Token, error) {
	tok, err := t.ts.Token()
	if err != nil {
		return nil, errors.New(t.e.redact(err.Error()))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if tok.AccessToken != t.last {
		t.last = tok.AccessToken
		t.e.secret(tok.AccessToken, tok.RefreshToken)
		if err := t.e.saveTokens(t.c, tok, t.key); err != nil {
			t.e.warnf("mcp server %s: refreshed tokens not stored: %v", t.e.Name, err)
		}
	}
	return tok, nil
}
