#!/usr/bin/env bash
# Runs every client scenario of each pinned release of the MCP conformance
# suite (one directory per release here: its package.json pins the suite and
# the Node 22 it needs exactly, its expected-failures.yml lists what awl
# does not pass, each with a reason) against awl, one scenario after the
# other (in parallel, 26 clients at once outrun a small machine's timeouts).
# A scenario passes when the suite says so and it ran at least one check: a
# scenario that passes with zero checks tested nothing, and fails here. A
# scenario listed in expected-failures.yml is an expected failure when it
# fails or runs no check, and fails here when it passes with checks (the
# list only shrinks). Prints a line per scenario and "conformance RELEASE:
# N passed, …" per release; exits 1 when any scenario fails. `make conformance` runs it with AWL and AWL_CONFORMANCE_MODEL
# set. RELEASES and SCENARIOS (space-separated) pick some of the releases
# and scenarios.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/../../bin/conformance}"
releases="${RELEASES:-$(cd "$here" && ls -d */package.json | sed "s,/package.json,," | sort -V)}"
status=0
for rel in $releases; do
  dir="$here/$rel"
  if [ ! -f "$dir/package-lock.json" ]; then
    echo "conformance: no release $rel in $here" >&2
    exit 1
  fi
  if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund >/dev/null) || { echo "conformance $rel: npm ci failed" >&2; exit 1; }
  fi
  want="$(jq -r '.dependencies["@modelcontextprotocol/conformance"]' "$dir/package.json")"
  have="$(jq -r .version "$dir/node_modules/@modelcontextprotocol/conformance/package.json")"
  if [ "$want" != "$rel" ] || [ "$have" != "$rel" ]; then
    echo "conformance $rel: package.json pins $want, $have is installed: each directory is its release, exactly" >&2
    exit 1
  fi
  suite=(node "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js")
  PATH="$dir/node_modules/.bin:$PATH"
  export PATH
  mapfile -t scenarios < <("${suite[@]}" list | sed -n '/^Client scenarios/,/^$/p' | sed -n 's/^  - \([^ ]*\).*/\1/p')
  if [ -n "${SCENARIOS:-}" ]; then
    # SCENARIOS (space-separated) runs some of them, for a quick check.
    mapfile -t scenarios < <(printf '%s\n' "${scenarios[@]}" | grep -Fxf <(tr ' ' '\n' <<<"$SCENARIOS"))
  fi
  if [ "${#scenarios[@]}" -eq 0 ]; then
    echo "conformance $rel: no client scenarios listed" >&2
    exit 1
  fi
  rout="$out/$rel"
  mkdir -p "$rout"
  passed=0 failed=0 expected=0 failures=()
  for s in "${scenarios[@]}"; do
    log="$rout/$(echo "$s" | tr / _).log"
    listed=0
    grep -qE "^  - \"?$s\"?( |$)" "$dir/expected-failures.yml" && listed=1
    (cd "$dir" && "${suite[@]}" client --command "$here/../mcp-conformance-client.sh" \
      --scenario "$s" -o "$rout") >"$log" 2>&1
    code=$?
    # "Passed: 3/3, 0 failed, …": the checks that ran.
    checks="$(sed -n 's/^Passed: [0-9]*\/\([0-9]*\),.*/\1/p' "$log" | tail -1)"
    if [ "$listed" -eq 1 ] && [ "$code" -eq 0 ] && [ "${checks:-0}" -gt 0 ]; then
      failed=$((failed + 1))
      failures+=("$s")
      echo "FAIL $s: passes now; take it off $rel/expected-failures.yml"
    elif [ "$listed" -eq 1 ]; then
      expected=$((expected + 1))
      echo "xfail $s (expected: see $rel/expected-failures.yml)"
    elif [ "$code" -eq 0 ] && [ "${checks:-0}" -gt 0 ]; then
      passed=$((passed + 1))
      echo "ok   $s ($checks checks)"
    else
      failed=$((failed + 1))
      failures+=("$s")
      if [ "$code" -eq 0 ]; then
        echo "FAIL $s: passed with no checks run (see $log)"
      else
        echo "FAIL $s (see $log)"
      fi
    fi
  done
  for s in "${failures[@]}"; do
    echo "--- $rel $s"
    sed -n '/^Test Results:/,$p' "$rout/$(echo "$s" | tr / _).log"
  done
  echo "conformance $rel: $passed passed, $failed failed, $expected expected failures, of ${#scenarios[@]} client scenarios"
  [ "$failed" -eq 0 ] || status=1
done
exit "$status"
