package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestChildRequire is run by TestRequire in a child test binary
// (AWL_TESTENV_CHILD), so that its skip or failure is the child's outcome.
func TestChildRequire(t *testing.T) {
	if os.Getenv("AWL_TESTENV_CHILD") == "" {
		t.Skip("run by TestRequire")
	}
	RequireCommands(t, "sh")
	Require(t, "needs the moon")
	t.Log("went on after Require")
}

func TestRequire(t *testing.T) {
	for _, c := range []struct {
		ci       string
		fail     bool
		wantText string
	}{
		{"true", true, "needs the moon (CI=true: in CI this test must run, not skip)"},
		{"", false, "needs the moon (skipped; with CI=true this fails)"},
		{"1", false, "skipped"},
		{"false", false, "skipped"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildRequire$", "-test.v")
		cmd.Env = append(os.Environ(), "AWL_TESTENV_CHILD=1", "CI="+c.ci)
		out, err := cmd.CombinedOutput()
		if (err != nil) != c.fail {
			t.Errorf("CI=%q: failed=%v, want %v\n%s", c.ci, err != nil, c.fail, out)
		}
		if !strings.Contains(string(out), c.wantText) {
			t.Errorf("CI=%q: output lacks %q:\n%s", c.ci, c.wantText, out)
		}
		if strings.Contains(string(out), "went on after Require") {
			t.Errorf("CI=%q: the test went on after Require:\n%s", c.ci, out)
		}
	}
}

func TestMissing(t *testing.T) {
	t.Setenv("CI", "true")
	if err := Missing("no node"); err == nil || !strings.Contains(err.Error(), "no node") {
		t.Errorf("CI=true: Missing = %v, want an error naming what is missing", err)
	}
	t.Setenv("CI", "")
	if err := Missing("no node"); err != nil {
		t.Errorf("CI unset: Missing = %v, want nil", err)
	}
}

// TestNPMServerMissing: MCP_NPM_OFFLINE=1 leaves an installed server out;
// otherwise a missing server or a missing node is the reason, and an
// installed server with node on PATH runs.
func TestNPMServerMissing(t *testing.T) {
	dir := t.TempDir()
	bin := dir + "/mcp-server-everything"
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/node", []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	t.Setenv("MCP_NPM_OFFLINE", "")
	if why := NPMServerMissing(bin); why != "" {
		t.Errorf("installed, with node: %q, want none", why)
	}
	t.Setenv("MCP_NPM_OFFLINE", "1")
	if why := NPMServerMissing(bin); !strings.Contains(why, "MCP_NPM_OFFLINE=1") {
		t.Errorf("MCP_NPM_OFFLINE=1: %q, want it named", why)
	}
	t.Setenv("MCP_NPM_OFFLINE", "0")
	if why := NPMServerMissing(dir + "/mcp-server-memory"); !strings.Contains(why, "mcp-server-memory is not installed") {
		t.Errorf("not installed: %q", why)
	}
	t.Setenv("PATH", t.TempDir())
	if why := NPMServerMissing(bin); !strings.Contains(why, "needs node") {
		t.Errorf("no node: %q", why)
	}
}
