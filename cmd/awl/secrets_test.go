package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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

// TestKeyVarWinsOverKeyFile: with both ANTHROPIC_API_KEY and
// ANTHROPIC_API_KEY_FILE set, the variable's value is the key sent and the
// file is not read at all (a missing one is no error).
func TestKeyVarWinsOverKeyFile(t *testing.T) {
	const key = "sk-var-SENTINEL-0123456789"
	srv := providertest.New()
	defer srv.Close()
	tmp := keyEnv(t, srv)
	t.Setenv("ANTHROPIC_API_KEY", key)
	for _, file := range []string{"key", "missing"} {
		path := filepath.Join(tmp, file)
		if file == "key" {
			if err := os.WriteFile(path, []byte("sk-file-other-0123456789\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		t.Setenv("ANTHROPIC_API_KEY_FILE", path)
		srv.Enqueue(providertest.Text("anthropic", "done"))
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), []string{"run", "--no-stdin", "hi"}, nil, &stdout, &stderr); code != 0 {
			t.Fatalf("%s: exit %d\n%s", file, code, stderr.String())
		}
		reqs := srv.Requests()
		if got := reqs[len(reqs)-1].Header.Get("x-api-key"); got != key {
			t.Errorf("%s: sent key %q, want the variable's %q", file, got, key)
		}
	}
}

// TestHideFailureIsReported: when awl cannot blank its environment block
// it says so on stderr and runs on.
func TestHideFailureIsReported(t *testing.T) {
	srv := providertest.New()
	defer srv.Close()
	keyEnv(t, srv)
	t.Setenv("ANTHROPIC_API_KEY", "sk-hide-SENTINEL-0123456789")
	orig := hideEnviron
	defer func() { hideEnviron = orig }()
	var hidden []string
	hideEnviron = func(names []string) error {
		hidden = names
		return errors.New("open /proc/self/mem: permission denied")
	}
	srv.Enqueue(providertest.Text("anthropic", "done"))
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"run", "--no-stdin", "hi"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if !slices.Contains(hidden, "ANTHROPIC_API_KEY") {
		t.Errorf("hid %q, want ANTHROPIC_API_KEY among them", hidden)
	}
	if want := "could not be blanked in /proc/" + strconv.Itoa(os.Getpid()) + "/environ (open /proc/self/mem: permission denied)"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q does not report the failure %q", stderr.String(), want)
	}
}
