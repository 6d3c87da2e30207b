package modelctx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
)

// systemTexts returns the texts of the system message in msgs.
func systemTexts(msgs []conv.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == conv.RoleSystem {
			for _, b := range m.Content {
				out = append(out, b.Text)
			}
		}
	}
	return out
}

func TestSandboxFragment(t *testing.T) {
	off := state()
	ws := state()
	ws.Sandbox = Sandbox{Mode: "workspace-write", Writable: []string{"/home/u/.cache/go-build"}}
	ro := state()
	ro.Sandbox = Sandbox{Mode: "read-only", Network: true}

	// Off from the start shows nothing and records nothing, so sessions
	// without a sandbox keep their bytes.
	for _, txt := range systemTexts(Build(off, nil)) {
		if strings.Contains(txt, "andbox") {
			t.Errorf("sandbox off, but the context mentions it: %q", txt)
		}
	}
	if off.Baseline().Sandbox != "" {
		t.Errorf("off records %q", off.Baseline().Sandbox)
	}

	// A new session in workspace-write is told its limits, after the tool
	// policy.
	sys := systemTexts(Build(ws, nil))
	want := "Sandbox: workspace-write. You may read files anywhere, but nothing you run can change files outside the working directory and the private temporary directory in $TMPDIR, except in /home/u/.cache/go-build; the write and edit tools follow the same rule. " +
		"A blocked write fails with \"Permission denied\"; do not retry it, work within the limits or say what you could not do. Network access is blocked: connections from commands fail."
	if len(sys) != 4 || sys[3] != want || !strings.HasPrefix(sys[2], "Tools available:") {
		t.Fatalf("system blocks:\n%q\nwant the tool policy, then\n%q", sys, want)
	}
	if Build(ws, baseOf(ws)) != nil {
		t.Error("the same sandbox is shown again")
	}

	// A resume with another mode shows the new one as a change.
	diff := Build(ro, baseOf(ws))
	if got := systemTexts(diff); len(got) != 1 || !strings.HasPrefix(got[0], "The sandbox has changed. Sandbox: read-only. ") || !strings.HasSuffix(got[0], "Commands may use the network.") {
		t.Errorf("workspace-write -> read-only: %q", got)
	}
	if len(diff) != 1 {
		t.Errorf("diff has %d messages, want only the system one", len(diff))
	}
	// A resume without the sandbox says it is off.
	if got := systemTexts(Build(off, baseOf(ro))); len(got) != 1 || !strings.HasPrefix(got[0], "The sandbox is now off:") {
		t.Errorf("read-only -> off: %q", got)
	}
	// Network alone changing is a change.
	wsNet := ws
	wsNet.Sandbox.Network = true
	if got := systemTexts(Build(wsNet, baseOf(ws))); len(got) != 1 || !strings.Contains(got[0], "Commands may use the network.") {
		t.Errorf("network on: %q", got)
	}
}

// TestSandboxDocs checks the renderings docs/context.md quotes.
func TestSandboxDocs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "context.md"))
	if err != nil {
		t.Fatal(err)
	}
	ws := state()
	ws.Sandbox = Sandbox{Mode: "workspace-write"}
	off := state()
	for _, q := range []string{systemTexts(Build(ws, nil))[3], systemTexts(Build(off, baseOf(ws)))[0]} {
		if !strings.Contains(string(data), "\n"+q+"\n") {
			t.Errorf("docs/context.md does not quote %q", q)
		}
	}
}
