package main

import (
	"runtime/debug"
	"strings"
)

// Build stamps, set with -ldflags "-X main.version=… -X main.commit=… -X
// main.date=…" by make build and by the release builds. A binary built
// without them (go install, go build) reads the same facts from the build
// information the go command embeds.
var (
	version = ""
	commit  = ""
	date    = ""
)

// buildStamp is what `awl --version` and `awl version` print.
type buildStamp struct {
	Version string
	Commit  string
	Date    string
}

// String is the one version line: "awl v1.2.3 (commit 0123abcd, built
// 2026-12-01T05:00:00Z)". Unknown parts are left out, never guessed.
func (b buildStamp) String() string {
	s := "awl " + b.Version
	var extra []string
	if b.Commit != "" {
		extra = append(extra, "commit "+b.Commit)
	}
	if b.Date != "" {
		extra = append(extra, "built "+b.Date)
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

// currentStamp is this binary's stamp.
func currentStamp() buildStamp {
	bi, _ := debug.ReadBuildInfo()
	return stampFrom(version, commit, date, bi)
}

// stampFrom prefers the ldflags stamps and fills what they leave empty from
// the build information: the module version that `go install …@v1.2.3`
// records, and the vcs.revision, vcs.time and vcs.modified settings that
// `go build` records inside a git checkout.
func stampFrom(ldVersion, ldCommit, ldDate string, bi *debug.BuildInfo) buildStamp {
	b := buildStamp{Version: ldVersion, Commit: ldCommit, Date: ldDate}
	if bi != nil {
		var rev, at string
		modified := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			b.Version = bi.Main.Version
		}
		if b.Commit == "" && rev != "" {
			b.Commit = shortRev(rev)
			if modified {
				b.Commit += "-dirty"
			}
		}
		if b.Date == "" {
			b.Date = at
		}
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	return b
}

// shortRev cuts a commit hash to the 12 characters git shows by default in
// large repositories.
func shortRev(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
