package main

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// initBudget is what one package's initialiser may allocate on every start
// of awl, used or not. Allocations, unlike milliseconds, are the same on a
// loaded machine: a library that compiles schemas or tables at init shows
// here as hundreds of kilobytes (the JSON Schema library awl used until
// 2026-12 allocated 1.7 MB and took 8–13 ms on every start).
const initBudget = 16 << 10

// initAllocBudget is how many allocations one package's initialiser may
// make on every start: encoding/gob's made 370 and a JSON Schema library's
// 296 (linked by the MCP SDK's client until 2026-12), each near 1 ms.
const initAllocBudget = 100

// ownInitBudget and ownInitAllocBudget are what one of awl's own packages
// may allocate in its initialiser: the provider registry's growth when
// replay and the clouds register (2,304 bytes), internal/jsonstr's escape
// table (32 allocations). awl's maps, regular expressions and help texts
// were 20 KB and 100 allocations of every start until 2026-12-07.
const (
	ownInitBudget      = 4 << 10
	ownInitAllocBudget = 40
)

// initAllowed are the packages allowed more, with what they measured.
// mvdan.cc/sh/v3/fileutil, which the shell parser's printer imports (the
// tool policy's bash judge, runner/policy), compiles two small regular
// expressions at init: 15 216 bytes in 104 allocations, 0.1 ms of clock
// (measured 2026-12-07); Go cannot initialise an imported package lazily.
//
// go.yaml.in/yaml/v3, the reader of SKILL.md front matter (Agent Skills,
// issue 45), builds its scalar resolver's tables at init: 25,720 bytes in
// 276 allocations, 0.09 to 0.21 ms of clock (measured 2026-12-07,
// GODEBUG=inittrace=1 awl --version, four runs).
var initAllowed = map[string]int{"mvdan.cc/sh/v3/fileutil": 110, "go.yaml.in/yaml/v3": 290}

// initAllowedBytes are the packages allowed more bytes, with what they
// measured. golang.org/x/oauth2/google/externalaccount (Vertex AI's
// workload identity federation, the credentials google-github-actions/auth
// writes) compiles two regular expressions at init: 22,328 bytes in 85
// allocations (measured 2026-12-07, GODEBUG=inittrace=1 awl --version).
var initAllowedBytes = map[string]int{"golang.org/x/oauth2/google/externalaccount": 23 << 10, "go.yaml.in/yaml/v3": 26 << 10}

// release is awl linked once as the release links it (CGO_ENABLED=0,
// -trimpath), for the tests that read the binary, with what the linker
// printed of its reachability pass (-dumpdep, which changes nothing else).
var release struct {
	once sync.Once
	dir  string
	bin  string
	deps []byte
	err  error
}

// releaseBuild returns the release build of awl and the linker's
// dependency dump; TestMain removes it after the tests (cleanupRun).
func releaseBuild(t *testing.T) (bin string, deps []byte) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds awl")
	}
	release.once.Do(func() {
		release.dir, release.err = os.MkdirTemp("", "awl-release-")
		if release.err != nil {
			return
		}
		release.bin = filepath.Join(release.dir, "awl")
		var stderr bytes.Buffer
		build := exec.Command("go", "build", "-trimpath", "-ldflags=-dumpdep", "-o", release.bin, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		build.Stdout, build.Stderr = &stderr, &stderr
		if err := build.Run(); err != nil {
			release.err = fmt.Errorf("go build: %v\n%.4000s", err, stderr.Bytes())
		}
		release.deps = stderr.Bytes()
	})
	if release.err != nil {
		t.Fatal(release.err)
	}
	return release.bin, release.deps
}

// cleanupRun is the test run, which then removes the release build.
type cleanupRun struct{ m *testing.M }

func (c cleanupRun) Run() int {
	defer func() {
		if release.dir != "" {
			os.RemoveAll(release.dir)
		}
	}()
	return c.m.Run()
}

// TestNoReflectMethod: no function of the binary is one that the linker
// marks <ReflectMethod>, a call of reflect's Method or MethodByName with a
// name it cannot see. One such function reachable anywhere makes the
// linker keep every exported method of every type that may be put in an
// interface: kong's Parse and Run made awl 2.1 MB bigger (parse.go).
func TestNoReflectMethod(t *testing.T) {
	_, deps := releaseBuild(t)
	reachedFrom := map[string]string{} // a marked function: what reached it first
	edges := 0
	for _, line := range strings.Split(string(deps), "\n") {
		// FROM [<attr>...] -> TO [<attr>...]
		from, to, ok := strings.Cut(line, " -> ")
		if !ok {
			continue
		}
		edges++
		if name, ok := strings.CutSuffix(to, " <ReflectMethod>"); ok && reachedFrom[name] == "" {
			reachedFrom[name] = from
		}
	}
	if edges < 10000 {
		t.Fatalf("read only %d edges of the linker's dependency dump:\n%.2000s", edges, deps)
	}
	for _, name := range slices.Sorted(maps.Keys(reachedFrom)) {
		t.Errorf("%s (reached from %s) calls reflect's Method or MethodByName with a name the linker cannot see: every exported method stays linked", name, reachedFrom[name])
	}
}

// TestInitCost builds awl as the release does and reads what each package
// initialiser costs on `awl --version` (GODEBUG=inittrace=1).
func TestInitCost(t *testing.T) {
	bin, _ := releaseBuild(t)
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("awl --version: %v\n%s", err, out)
	}
	total, n := 0, 0
	grown := false // internal/growstack's initialiser has run
	for _, line := range strings.Split(string(out), "\n") {
		// init PKG @T ms, C ms clock, B bytes, A allocs
		f := strings.Fields(line)
		if len(f) < 10 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		b, err := strconv.Atoi(f[7])
		allocs, err2 := strconv.Atoi(f[9])
		if err != nil || err2 != nil {
			t.Fatalf("cannot read %q", line)
		}
		n++
		total += b
		if own := f[1] == "main" || strings.HasPrefix(f[1], "github.com/awlrun/awl/"); own && (b > ownInitBudget || allocs > ownInitAllocBudget) {
			t.Errorf("awl's package %s allocates %d bytes in %d allocations in its initialiser (budget %d bytes, %d allocations): a package-level map, regular expression or computed value; use a switch, a constant or a function", f[1], b, allocs, ownInitBudget, ownInitAllocBudget)
		}
		if f[1] == "github.com/awlrun/awl/internal/growstack" {
			grown = true
		} else if !grown && allocs > 0 {
			t.Errorf("package %s's initialiser runs before internal/growstack's and allocates: the stack it grows is copied deep", f[1])
		}
		if b > max(initBudget, initAllowedBytes[f[1]]) || allocs > max(initAllocBudget, initAllowed[f[1]]) {
			t.Errorf("package %s allocates %d bytes in %d allocations in its initialiser on every start (budget %d bytes, %d allocations): initialise it lazily", f[1], b, allocs, initBudget, initAllocBudget)
		}
	}
	if n < 10 {
		t.Fatalf("read only %d init lines from:\n%s", n, out)
	}
	if !grown {
		t.Error("internal/growstack's initialiser did not run: the main goroutine's stack is copied as it deepens (internal/growstack)")
	}
	t.Logf("%d initialisers, %d bytes in all", n, total)
}

// TestNotLinked keeps modules out of the binary that cost start-up or
// megabytes for what a few lines do.
func TestNotLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, banned := range []string{
		"github.com/santhosh-tekuri/jsonschema", // compiles five meta-schemas at init: internal/jsonschema instead
		// The MCP SDK's client package links encoding/gob and
		// google/jsonschema-go, whose initialisers took 1.5 and 0.8 ms
		// of every start: runner/mcp is its own client. Its auth and
		// oauthex packages brought segmentio/encoding (their JSON):
		// 400 KB of binary, whose initialisers paged in three 64 KB
		// windows of text at every start, 0.35 MiB of a text run's
		// peak RSS; runner/mcp does its own OAuth discovery
		// (oauthmeta.go). The SDK stays for the tests' servers.
		"github.com/modelcontextprotocol/go-sdk",
		"github.com/segmentio/",
		"encoding/gob",
		"github.com/google/jsonschema-go",
		"github.com/go-git/", // gitignore matching is awl's own glob matcher
		// aws-sdk-go-v2's service clients (STS, SSO, SSO OIDC, which its
		// stscreds and ssocreds need) build endpoint and schema tables
		// in their initialisers: 3,300 allocations and 440 KB on every
		// start, whatever the provider. provider/cloud speaks to STS and
		// the SSO portal itself; its tests check the requests against
		// stscreds and ssocreds.
		"github.com/aws/aws-sdk-go-v2/service/",
		"github.com/aws/aws-sdk-go-v2/credentials/stscreds",
		"github.com/aws/aws-sdk-go-v2/credentials/ssocreds",
		// A test server's library (runner/mcp/testdata/mcpgo, a module
		// of its own).
		"github.com/mark3labs/mcp-go",
	} {
		for _, pkg := range strings.Fields(string(out)) {
			if pkg == banned || strings.HasPrefix(pkg, strings.TrimSuffix(banned, "/")+"/") {
				t.Errorf("awl links %s (%s)", pkg, banned)
			}
		}
	}
}
