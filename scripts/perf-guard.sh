#!/usr/bin/env bash
# perf-guard: the guard CI runs against the next start-up or memory
# regression. It builds awl from this tree and from the reference commit
# named in scripts/perf-ref, both as the release builds them, and measures
# the two in the same rounds, in turn, against a bare Go program making
# the same request (scripts/benchfloor). It fails when this tree is more
# than 15% worse on the start ratio, the peak RSS of a text run or of a
# 10-turn loop, or the per-turn ratio. Medians of PERF_RUNS rounds (15).
# First, before any measurement, it fails when this tree's binary is over
# 18 MB (AWL_SIZE_LIMIT bytes) or more than 15% over the reference's: the
# binary's own pages are most of a text run's RSS.
#
# When a slower start is accepted on purpose, say why in the commit and
# move scripts/perf-ref to that commit.
set -euo pipefail
cd "$(dirname "$0")/.."
ref=$(grep -v '^#' scripts/perf-ref | head -n 1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build() { (cd "$1" && CGO_ENABLED=0 go build -trimpath -o "$2" ./cmd/awl); }
build . "$work/awl"
size_limit=${AWL_SIZE_LIMIT:-18500000}
size=$(wc -c <"$work/awl")
echo "perf-guard: this tree's binary is $size bytes (limit $size_limit)" >&2
if [ "$size" -gt "$size_limit" ]; then
  echo "perf-guard: the binary is over $size_limit bytes: see docs/performance.md (what links code)" >&2
  exit 1
fi
if git cat-file -e "$ref^{commit}" 2>/dev/null; then
  mkdir "$work/ref"
  git archive "$ref" | tar -x -C "$work/ref"
  build "$work/ref" "$work/awl-ref"
  ref_size=$(wc -c <"$work/awl-ref")
  if [ "$size" -gt $((ref_size * 115 / 100)) ]; then
    echo "perf-guard: the binary is $size bytes, more than 15% over $ref's $ref_size" >&2
    exit 1
  fi
  go build -o "$work/benchfloor" ./scripts/benchfloor
  echo "perf-guard: this tree against $ref, ${PERF_RUNS:-15} rounds" >&2
  # A regression must show twice: a second, longer measurement decides
  # whether the first was the machine's noise.
  if ! "$work/benchfloor" -n "${PERF_RUNS:-15}" -awl "$work/awl" -base "$work/awl-ref" -tolerance 0.15; then
    echo "perf-guard: measuring again, twice as long, to tell a regression from noise" >&2
    "$work/benchfloor" -n "$((2 * ${PERF_RUNS:-15}))" -awl "$work/awl" -base "$work/awl-ref" -tolerance 0.15
  fi
else
  echo "perf-guard: $ref is not in this clone (shallow?): comparing with docs/perf-baseline.json" >&2
  go run ./scripts/benchfloor -n "${PERF_RUNS:-15}" -awl "$work/awl" -check docs/perf-baseline.json -tolerance 0.15
fi
