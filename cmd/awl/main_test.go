package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner/mcp/mcptest"
)

// sentinelKey is the API key every script runs with; no file, event or
// message may ever contain it.
const sentinelKey = "sk-awl-SENTINEL-0123456789abcdef"

func TestMain(m *testing.M) {
	testscript.Main(cleanupRun{m}, map[string]func(){
		"awl": func() {
			// A script may run awl as on a kernel with another Landlock
			// ABI (-1: none), as TestSandboxUnsupported does in-process.
			if v := os.Getenv("AWL_TEST_ASSUME_ABI"); v != "" {
				assumeABI, _ = strconv.Atoi(v)
			}
			stdout, stderr, catchPipe := stdStreams()
			ctx, stop := signalContext(context.Background(), catchPipe)
			code := mainAt(ctx, processStart, os.Args[1:], os.Stdin, stdout, stderr)
			stop()
			os.Exit(code)
		},
		// fakemcp MODE is a misbehaving MCP server (runner/mcp/mcptest).
		"fakemcp": func() { mcptest.Main(os.Args[1]) },
	})
}

// TestScripts runs testdata/script/*.txtar against the real awl binary and a
// fake provider on 127.0.0.1. A script's canned responses are
// provider/N.sse (or .json, .status, .headers); the requests awl sent are
// written to requests/N.json. $REPO is the repository root.
func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams(t, "testdata/script", scriptCmds()))
}

// scriptParams runs the scripts of dir (or, when dir names a .txtar file,
// that one) with cmds, each against the fake provider that its Setup
// starts.
func scriptParams(t *testing.T, dir string, cmds map[string]func(*testscript.TestScript, bool, []string)) testscript.Params {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	p := testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: false,
		Setup: func(env *testscript.Env) error {
			srv := providertest.NewDir(env.WorkDir)
			env.Defer(srv.Close)
			env.Setenv("FAKE_URL", srv.URL)
			env.Setenv("REPO", repo) // the repository root, for examples/ and scripts/
			env.Setenv("ANTHROPIC_BASE_URL", srv.URL)
			env.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
			// Presets point at the fake server too: a test never reaches a
			// real provider.
			env.Setenv("OPENROUTER_BASE_URL", srv.URL+"/v1")
			env.Setenv("OLLAMA_BASE_URL", srv.URL+"/v1")
			env.Setenv("ANTHROPIC_API_KEY", sentinelKey)
			env.Setenv("SENTINEL", sentinelKey)
			env.Setenv("AWL_SESSION_DIR", filepath.Join(env.WorkDir, "sessions"))
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, "home", ".config"))
			env.Setenv("TZ", "UTC")
			// The npm-installed MCP servers (runner/mcp/testdata/npm).
			env.Setenv("MCP_NPM", filepath.Join(repo, "runner", "mcp", "testdata", "npm", "node_modules", ".bin"))
			return nil
		},
		Cmds:      cmds,
		Condition: scriptCondition,
	}
	if strings.HasSuffix(dir, ".txtar") {
		p.Dir, p.Files = "", []string{dir}
	}
	return p
}

// cmdExitcode runs `exitcode N cmd args...` and fails unless cmd exits N.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
}
