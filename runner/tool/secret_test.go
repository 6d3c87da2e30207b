package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/awlrun/awl/provider"
)

func TestBashNeverSeesProviderKeys(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-SENTINEL")
	t.Setenv("OPENAI_API_KEY", "sk-oai-SENTINEL")
	t.Setenv("AWL_KEEP_ME", "kept")
	bash := Builtins(Env{Dir: t.TempDir()})[0]
	res := bash.Run(context.Background(), json.RawMessage(`{"command":"env"}`))
	if res.IsError {
		t.Fatalf("bash env failed: %s", res.Content)
	}
	if strings.Contains(res.Content, "SENTINEL") {
		t.Fatalf("bash saw a provider key:\n%s", res.Content)
	}
	if !strings.Contains(res.Content, "AWL_KEEP_ME=kept") {
		t.Fatalf("bash lost an ordinary variable:\n%s", res.Content)
	}
}

func TestScrubEnviron(t *testing.T) {
	got := ScrubEnviron([]string{"A=1", "OPENAI_API_KEY=x", "ANTHROPIC_API_KEY=y", "OPENAI_API_KEY_FILE=z"})
	if strings.Join(got, ",") != "A=1,OPENAI_API_KEY_FILE=z" {
		t.Fatalf("ScrubEnviron = %v", got)
	}
}

// TestBashNeverSeesRegistryKeys covers every provider in the registry, so
// a provider added there is kept from tools without touching this list.
func TestBashNeverSeesRegistryKeys(t *testing.T) {
	for _, s := range provider.Specs() {
		t.Setenv(s.KeyVar, "SENTINEL-"+s.Name)
		for _, v := range s.MoreSecretVars {
			t.Setenv(v, "SENTINEL-"+v)
		}
	}
	bash := Builtins(Env{Dir: t.TempDir()})[0]
	res := bash.Run(context.Background(), json.RawMessage(`{"command":"env"}`))
	if res.IsError || strings.Contains(res.Content, "SENTINEL") {
		t.Fatalf("bash saw a provider key (or failed):\n%s", res.Content)
	}
}
