package tool

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestBashRunsWithEnviron: bash runs with the environment it is handed,
// which the caller scrubbed, not awl's own.
func TestBashRunsWithEnviron(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-SENTINEL")
	t.Setenv("AWL_KEEP_ME", "kept")
	env := Env{Dir: t.TempDir(), Environ: ScrubEnviron(os.Environ(), "ANTHROPIC_API_KEY")}
	bash := Builtins(env)[0]
	res := bash.Run(context.Background(), json.RawMessage(`{"command":"env"}`))
	if res.IsError {
		t.Fatalf("bash env failed: %s", res.Content)
	}
	if strings.Contains(res.Content, "SENTINEL") {
		t.Fatalf("bash saw a scrubbed variable:\n%s", res.Content)
	}
	if !strings.Contains(res.Content, "AWL_KEEP_ME=kept") {
		t.Fatalf("bash lost an ordinary variable:\n%s", res.Content)
	}
}

// TestRunCommandRunsWithEnviron: a --check command gets the environment it
// is handed, as bash does.
func TestRunCommandRunsWithEnviron(t *testing.T) {
	t.Setenv("MY_TOKEN", "SENTINEL")
	res := RunCommand(context.Background(), t.TempDir(), ScrubEnviron(os.Environ(), "MY_TOKEN"), `echo "[$MY_TOKEN]"`, DefaultBashTimeout, nil)
	if res.IsError || !strings.Contains(res.Content, "[]") {
		t.Fatalf("the command saw a scrubbed variable (or failed):\n%s", res.Content)
	}
}

func TestScrubEnviron(t *testing.T) {
	got := ScrubEnviron([]string{"A=1", "OPENAI_API_KEY=x", "ANTHROPIC_API_KEY=y", "OPENAI_API_KEY_FILE=z"}, "OPENAI_API_KEY", "ANTHROPIC_API_KEY")
	if strings.Join(got, ",") != "A=1,OPENAI_API_KEY_FILE=z" {
		t.Fatalf("ScrubEnviron = %v", got)
	}
}
