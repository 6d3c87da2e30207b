package main

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"
)

func TestStampFrom(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "e955ac62f824e724e8609be9c2b7c18a15e502da"},
		{Key: "vcs.time", Value: "2026-11-29T21:31:19Z"},
		{Key: "vcs.modified", Value: "false"},
	}
	for _, tc := range []struct {
		name                  string
		ldVer, ldCommit, date string
		bi                    *debug.BuildInfo
		want                  string
	}{
		{"no information", "", "", "", nil, "awl dev"},
		{"ldflags win", "v1.2.3", "0123456789ab", "2026-12-01T00:00:00Z",
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.1"}, Settings: vcs},
			"awl v1.2.3 (commit 0123456789ab, built 2026-12-01T00:00:00Z)"},
		{"go install module@version", "", "", "",
			&debug.BuildInfo{Main: debug.Module{Path: "github.com/awlrun/awl", Version: "v1.4.0"}},
			"awl v1.4.0"},
		{"go build in a checkout", "", "", "",
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261129213119-e955ac62f824"}, Settings: vcs},
			"awl v0.0.0-20261129213119-e955ac62f824 (commit e955ac62f824, built 2026-11-29T21:31:19Z)"},
		{"devel with local changes", "", "", "",
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: append(vcs[:3:3], debug.BuildSetting{Key: "vcs.modified", Value: "true"})},
			"awl dev (commit e955ac62f824-dirty, built 2026-11-29T21:31:19Z)"},
		{"make build's version, commit from vcs", "v0.3.0-2-gabc", "", "",
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			"awl v0.3.0-2-gabc (commit e955ac62f824, built 2026-11-29T21:31:19Z)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stampFrom(tc.ldVer, tc.ldCommit, tc.date, tc.bi).String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestVersionFlagAndCommand: `awl --version` and `awl version` print the
// same one line on stdout and exit 0.
func TestVersionFlagAndCommand(t *testing.T) {
	var lines []string
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("awl %s: exit %d, stderr %q", args[0], code, stderr.String())
		}
		if stderr.Len() != 0 {
			t.Errorf("awl %s wrote to stderr: %q", args[0], stderr.String())
		}
		if !strings.HasPrefix(stdout.String(), "awl ") || strings.Count(stdout.String(), "\n") != 1 {
			t.Errorf("awl %s = %q, want one line starting with awl", args[0], stdout.String())
		}
		lines = append(lines, stdout.String())
	}
	if lines[0] != lines[1] {
		t.Errorf("--version %q and version %q differ", lines[0], lines[1])
	}
}
