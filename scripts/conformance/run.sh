#!/usr/bin/env bash
# Runs every client scenario of the MCP conformance suite against awl, one
# after the other (in parallel, 26 clients at once outrun a small machine's
# timeouts), each judged against expected-failures.yml. Prints a line per
# scenario and "N passed, N failed" last; exits 1 when any scenario fails
# (or passes while listed as an expected failure). `make conformance` runs
# it with AWL and AWL_CONFORMANCE_MODEL set.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/../../bin/conformance}"
export PATH="$here/node_modules/.bin:$PATH"
suite=(node "$here/node_modules/@modelcontextprotocol/conformance/dist/index.js")
mapfile -t scenarios < <("${suite[@]}" list | sed -n '/^Client scenarios/,$p' | sed -n 's/^  - \([^ ]*\).*/\1/p')
if [ "${#scenarios[@]}" -eq 0 ]; then
  echo "no client scenarios listed" >&2
  exit 1
fi
mkdir -p "$out"
passed=0 failed=0 failures=()
for s in "${scenarios[@]}"; do
  log="$out/$(echo "$s" | tr / _).log"
  if (cd "$here" && "${suite[@]}" client --command "$here/../mcp-conformance-client.sh" \
      --scenario "$s" --expected-failures "$here/expected-failures.yml" -o "$out") >"$log" 2>&1; then
    passed=$((passed + 1))
    echo "ok   $s"
  else
    failed=$((failed + 1))
    failures+=("$s")
    echo "FAIL $s (see $log)"
  fi
done
for s in "${failures[@]}"; do
  echo "--- $s"
  sed -n '/^Test Results:/,$p' "$out/$(echo "$s" | tr / _).log"
done
echo "conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
