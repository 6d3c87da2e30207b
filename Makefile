GO ?= go
BIN ?= bin/awl
FUZZTIME ?= 10s

.PHONY: build test test-unprivileged mutate check bench fuzz demo demo-pipeline clean release-snapshot perf-guard bench-floor bench-config conformance

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
DATE ?= $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)

# build stamps what `awl --version` prints: the version (git describe), the
# commit and the commit's date (not the build's, so a rebuild is identical).
# It builds as the release does, static (CGO_ENABLED=0, -trimpath): no
# dynamic loader to run at every start.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)" -o $(BIN) ./cmd/awl

# goreleaser is pinned in tools/go.mod, a module of its own so that its many
# dependencies stay out of awl's go.mod and go.sum.
GORELEASER = bin/goreleaser
$(GORELEASER): tools/go.mod tools/go.sum
	cd tools && $(GO) build -o ../$(GORELEASER) github.com/goreleaser/goreleaser/v2

# release-snapshot builds every release target into dist/ as a tag would,
# publishing nothing, then checks that the linux/amd64 binary runs.
release-snapshot: $(GORELEASER)
	$(GORELEASER) release --snapshot --clean
	sh scripts/check-dist.sh dist

# MCP_NPM holds the real MCP servers the tests run, pinned in its
# package-lock.json. MCP_NPM_OFFLINE=1 (a machine without access to npm's
# registry) skips `npm ci`, and the tests that run those servers skip too
# (with CI=true they fail: internal/testenv).
MCP_NPM := runner/mcp/testdata/npm
ifeq ($(MCP_NPM_OFFLINE),1)
MCP_NPM_INSTALLED :=
else
MCP_NPM_INSTALLED := $(MCP_NPM)/node_modules/.package-lock.json
endif

# test prints a line per package as each finishes, a failed test's output
# as it fails, and the packages still running after a minute of silence
# (scripts/testprogress reads `go test -json`); it exits with go test's
# status. TESTFLAGS replaces -race -timeout 30m, PKGS ./...
TESTFLAGS ?= -race -timeout 30m
PKGS ?= ./...
test: $(MCP_NPM_INSTALLED)
	@echo "building the test binaries: some minutes on 2 cores from a cold build cache" >&2
	@GO=$(GO) $(GO) run ./scripts/testprogress $(TESTFLAGS) $(PKGS)

# test-unprivileged runs `go test ./...` (without -race, to fit CI's time)
# as a user who is not root: as uid 65534 when run as root, as CI is, with
# a HOME, GOCACHE and module cache of its own; as you otherwise
# (scripts/test-unprivileged.sh). Most contributors are not root, and a
# test can pass for root alone. PKGS and RUNS choose what it runs; CI
# runs the whole suite (.ci/run).
test-unprivileged: $(MCP_NPM_INSTALLED)
	sh scripts/test-unprivileged.sh

# mutate breaks, one at a time in a scratch copy, each guarantee listed in
# scripts/mutations.txt and fails if the tests named there still pass
# (scripts/mutate.sh). It relinks a test binary per mutation, 10-30
# minutes on 2 cores that CI's budget has no room for (docs/testing.md):
# run it nightly, before each release, and with every change to a
# guarantee it lists or to the tests that guard it, as root (the cgroup
# mutations' test delegates a cgroup).
mutate: $(MCP_NPM_INSTALLED)
	sh scripts/mutate.sh

# npm ci installs the pinned MCP servers when they are missing or the lock
# file changed. Without npm the tests that need them skip (in CI, CI=true,
# they fail instead).
$(MCP_NPM)/node_modules/.package-lock.json: $(MCP_NPM)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
	  cd $(MCP_NPM) && npm ci --no-audit --no-fund; \
	else \
	  echo "npm not found: the MCP tests against real servers will skip (CI=true makes them fail)"; \
	fi

# conformance runs every client scenario of each pinned release of the MCP
# conformance suite (scripts/conformance/RELEASE, each with the Node 22 it
# needs; run.sh installs them with npm ci) against awl, one after another:
# scripts/mcp-conformance-client.sh makes `awl run` the client. A scenario
# that fails, passes with no checks, or is listed in its release's
# expected-failures.yml and passes, fails it. Then the server scenarios
# that apply to `awl mcp serve` (TestMCPServeConformance), against the
# suite run.sh installed: AWL_CONFORMANCE_SERVER=1 makes a missing suite a
# failure, where `make test` (which runs first, without it) skips.
CONFORMANCE := scripts/conformance
conformance:
	$(GO) build -o bin/awl ./cmd/awl
	$(GO) build -o bin/conformancemodel ./internal/conformancemodel
	rm -rf bin/conformance
	AWL="$(abspath bin/awl)" AWL_CONFORMANCE_MODEL="$(abspath bin/conformancemodel)" \
	  bash $(CONFORMANCE)/run.sh "$(abspath bin/conformance)"
	AWL_CONFORMANCE_SERVER=1 $(GO) test -count=1 -run '^TestMCPServeConformance$$' -v ./cmd/awl


check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) mod tidy -diff
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

# perf-guard measures this tree against the commit in scripts/perf-ref, in
# the same rounds, and fails on a start-up, memory or per-turn regression
# over 15% (docs/performance.md). CI runs it.
perf-guard:
	bash scripts/perf-guard.sh

# bench-floor prints this tree's whole-process figures: start against a
# bare Go program, peak RSS, per turn, and a 50 MB prompt.
bench-floor:
	$(GO) run ./scripts/benchfloor -large

# bench-config measures what one .awl/config.toml and ten skills add to a
# start, in 100 paired rounds; it fails over issue 45's 10 %.
bench-config:
	$(GO) run ./scripts/benchfloor -n 1 -config 100

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# fuzz runs every fuzz target for FUZZTIME each.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# demo replays examples/summarise.jsonl through the real tools in a scratch
# directory (scripts/demo.sh): awl's main job, end to end, with no API key.
# Its stdout is NDJSON alone (`make demo | jq .`): the build's own output
# goes to stderr.
demo:
	@echo "building bin/awl: up to a few minutes on 2 cores from a cold build cache" >&2
	@$(MAKE) --no-print-directory build >&2
	@AWL="$(abspath $(BIN))" sh scripts/demo.sh

# demo-pipeline replays a three-step pipeline from examples/pipeline.jsonl
# (scripts/demo-pipeline.sh): a new session, --resume by id, --resume by
# path with --output-schema, each its own process, with no API key. Its
# stdout is the final answer alone.
demo-pipeline:
	@$(MAKE) --no-print-directory build >&2
	@AWL="$(abspath $(BIN))" sh scripts/demo-pipeline.sh

clean:
	rm -rf bin
