package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awlrun/awl/provider/providertest"
)

// keyEnv sets up an in-process run against srv with no key in the
// environment; it returns the work directory.
func keyEnv(t *testing.T, srv *providertest.Server) string {
	tmp := t.TempDir()
	for _, v := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "OPENAI_API_KEY_FILE", "OPENROUTER_API_KEY", "OPENROUTER_API_KEY_FILE", "AWL_PROVIDER", "AWL_MODEL", "AWL_REDACT_ENV", "GITHUB_ACTIONS"} {
		t.Setenv(v, "")
	}
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("AWL_SESSION_DIR", filepath.Join(tmp, "sessions"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config"))
	t.Chdir(tmp)
	return tmp
}

// TestKeyFromFile: ANTHROPIC_API_KEY_FILE is read once, its content (less
// the trailing newline) is the key sent, it is never exported to tools, and
// a tool that reads the file gets it redacted.
func TestKeyFromFile(t *testing.T) {
	const key = "sk-file-SENTINEL-0123456789"
	srv := providertest.New()
	defer srv.Close()
	tmp := keyEnv(t, srv)
	keyFile := filepath.Join(tmp, "key")
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ANTHROPIC_API_KEY_FILE", keyFile)
	srv.Enqueue(
		providertest.ToolCall("anthropic", "c1", "bash", `{"command":"echo \"k=$ANTHROPIC_API_KEY.\"; cat \"$ANTHROPIC_API_KEY_FILE\""}`),
		providertest.Text("anthropic", "done"),
	)
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"run", "--no-stdin", "-o", "ndjson", "hi"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for i, r := range reqs {
		if got := r.Header.Get("x-api-key"); got != key {
			t.Errorf("request %d sent key %q, want the file's content %q", i+1, got, key)
		}
		if bytes.Contains(r.Body, []byte(key)) {
			t.Errorf("request %d body holds the key", i+1)
		}
	}
	if !bytes.Contains(reqs[1].Body, []byte(`k=.\n[redacted:ANTHROPIC_API_KEY]\n`)) {
		t.Errorf("tool result in the second request: want k=. and the redacted key:\n%s", reqs[1].Body)
	}
	if strings.Contains(stdout.String()+stderr.String(), key) {
		t.Error("the key reached stdout or stderr")
	}
	if os.Getenv("ANTHROPIC_API_KEY") != "" {
		t.Error("the key was exported to awl's environment")
	}
}

func TestKeyFileErrors(t *testing.T) {
	srv := providertest.New()
	defer srv.Close()
	tmp := keyEnv(t, srv)
	empty := filepath.Join(tmp, "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	for file, want := range map[string]string{
		filepath.Join(tmp, "missing"): "ANTHROPIC_API_KEY_FILE: open " + filepath.Join(tmp, "missing") + ": no such file or directory",
		empty:                         "ANTHROPIC_API_KEY_FILE: " + empty + " is empty",
	} {
		t.Setenv("ANTHROPIC_API_KEY_FILE", file)
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), []string{"run", "--no-stdin", "hi"}, nil, &stdout, &stderr); code != 4 || !strings.Contains(stderr.String(), want) {
			t.Errorf("%s: exit %d, stderr %q; want 4 and %q", file, code, stderr.String(), want)
		}
	}
	if len(srv.Requests()) != 0 {
		t.Error("a run without a usable key sent a request")
	}
}
