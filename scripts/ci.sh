#!/usr/bin/env bash
# ci.sh is everything CI checks, in one place: `.ci/run` runs it on a fresh
# Debian machine as root, and .github/workflows/ci.yml runs it through
# `.ci/run` too, as root on GitHub's hosted runner after actions/setup-go
# and actions/setup-node have put Go and Node on PATH. A check added here
# runs in both; neither has a list of its own.
#
#   ci.sh            every stage, in order
#   ci.sh STAGE...   those stages (ci.sh list prints them)
#
# It needs Go on PATH (or in /usr/local/go/bin) and, as root, installs with
# apt-get what the tests need and the machine lacks; the only network it
# uses is package registries (Debian's, npm's, the Go module proxy).
set -euo pipefail
cd "$(dirname "$0")/.."

stages=(deps check perf-guard demo test test-unprivileged conformance release-snapshot)

# CI=true is what makes a test that cannot run here fail instead of
# skipping (internal/testenv): set it whoever calls this script.
export CI=true
export PATH="$PATH:/usr/local/go/bin"

# deps installs what the tests need (internal/testenv fails a test in CI
# that lacks one): jq and curl for the action and install scripts, python3
# for the sandbox's bind check, git for the ignore rules, strace for the
# order of session writes, fsyncs and events, setpriv (util-linux) for the
# unprivileged run; npm for the MCP tests' real servers
# (runner/mcp/testdata/npm: npm ci); headless Chromium for the HTML
# report's test (view/report/browser_test.go: the headless shell, without
# its recommends, is 131 MB to download on a fresh machine after the
# others, the browser 149 MB and twice the CPU to start; GitHub's runner
# has Chromium already). One apt-get update for them all, and none when
# nothing is missing.
deps() {
  if ! command -v go >/dev/null 2>&1; then
    echo "ci.sh: no go on PATH or in /usr/local/go/bin: install Go $(sed -n 's/^go //p' go.mod) or later (https://go.dev/dl/)" >&2
    return 1
  fi
  go version
  local missing=() pair
  for pair in jq:jq curl:curl python3:python3-minimal git:git strace:strace setpriv:util-linux npm:"nodejs npm"; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=(${pair#*:})
  done
  local browser=(chromium-headless-shell) name
  for name in chromium-headless-shell chromium chromium-browser google-chrome; do
    command -v "$name" >/dev/null 2>&1 && browser=()
  done
  if [ ${#missing[@]} -gt 0 ] || [ ${#browser[@]} -gt 0 ]; then
    apt-get update
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get install -y "${missing[@]}"
  fi
  if [ ${#browser[@]} -gt 0 ]; then
    apt-get install -y --no-install-recommends "${browser[@]}"
  fi
  (cd runner/mcp/testdata/npm && npm ci --no-audit --no-fund)
}

# unprivileged runs the suite as uid 65534 (scripts/test-unprivileged.sh),
# which must be able to reach the tree: on GitHub's runner the checkout
# lies under /home/runner, which only its owner may enter.
unprivileged() {
  if [ "$(id -u)" = 0 ] && [ "${GITHUB_ACTIONS:-}" = true ]; then
    local d=$PWD
    while [ "$d" != / ]; do
      chmod o+x "$d"
      d=$(dirname "$d")
    done
  fi
  make test-unprivileged
}

run_stage() {
  case $1 in
  deps) deps ;;
  check) make check ;;
  # Start-up, memory and per-turn cost against a pinned commit, measured
  # in the same rounds (scripts/perf-guard.sh), before the tests load the
  # machine. It needs the pinned commit in the clone's history.
  perf-guard) make perf-guard ;;
  # The README's first command: a replay of examples/ through the real
  # tools, its stdout NDJSON alone.
  demo) make demo | jq -e -s 'length > 0' >/dev/null ;;
  test) make test ;;
  # The whole suite again as uid 65534, without -race: most contributors
  # and GitHub's hosted runners are not root, and a test or a feature can
  # work for root alone (/proc of a non-dumpable process, namespaces, file
  # modes).
  test-unprivileged) unprivileged ;;
  # The official MCP conformance suite, every client scenario, against awl
  # (scripts/conformance: the suite and Node 22, pinned).
  conformance) make conformance ;;
  # A broken release configuration fails here, before a tag does: every
  # target builds, checksums.txt matches, and the linux/amd64 binary says
  # its version.
  release-snapshot) make release-snapshot ;;
  esac
}

if [ "${1:-}" = list ]; then
  printf '%s\n' "${stages[@]}"
  exit 0
fi
if [ $# -gt 0 ]; then
  for s in "$@"; do
    case " ${stages[*]} " in
    *" $s "*) ;;
    *)
      echo "ci.sh: no stage $s (stages: ${stages[*]})" >&2
      exit 2
      ;;
    esac
  done
  stages=("$@")
fi
for s in "${stages[@]}"; do
  start=$(date +%s)
  if [ "${GITHUB_ACTIONS:-}" = true ]; then
    echo "::group::ci.sh: $s"
  else
    echo "== ci.sh: $s"
  fi
  status=0
  run_stage "$s" || status=$?
  [ "${GITHUB_ACTIONS:-}" = true ] && echo "::endgroup::"
  echo "ci.sh: $s: exit $status after $(($(date +%s) - start)) s"
  if [ $status -ne 0 ]; then
    [ "${GITHUB_ACTIONS:-}" = true ] && echo "::error title=ci.sh $s::the $s stage failed (exit $status)"
    exit $status
  fi
done
