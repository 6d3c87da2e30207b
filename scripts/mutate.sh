#!/bin/sh
# mutate.sh applies each mutation of scripts/mutations.txt, one at a time,
# to a scratch copy of the tree, runs the tests that should kill it, and
# fails if any mutation survives (its tests pass), if its text is not found
# exactly once, or if those tests fail without it. `make mutate` runs it.
#
# MUTATE_ONLY=PATTERN runs only the mutations whose name matches it (grep);
# MUTATE_LIST=FILE reads the mutations from FILE instead (to try some).
set -eu
cd "$(dirname "$0")/.."
GO=${GO:-go}
repo=$(pwd)
list=${MUTATE_LIST:-$repo/scripts/mutations.txt}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/awl-mutate.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# The scratch copy: what git tracks and what is new, not ignored files;
# the npm-installed MCP servers are linked, not copied.
if git rev-parse --git-dir >/dev/null 2>&1; then
  git ls-files -z -co --exclude-standard | xargs -0 cp --parents -t "$tmp" 2>/dev/null || {
    echo "mutate: copying the tree failed" >&2; exit 1; }
else
  cp -r . "$tmp"
fi
npm=runner/mcp/testdata/npm/node_modules
[ -d "$npm" ] && ln -s "$repo/$npm" "$tmp/$npm"
cd "$tmp"

# apply DIR FIND REPLACE: replace FIND, which must occur exactly once in the
# non-test .go files under DIR, and print the file it changed.
apply() {
  python3 - "$@" <<'PY'
import os, sys
top, find, repl = sys.argv[1], sys.argv[2], sys.argv[3]
unescape = lambda s: s.replace("\\n", "\n").replace("\\t", "\t")
find, repl = unescape(find), unescape(repl)
hits = []
for d, dirs, files in os.walk(top):
    dirs[:] = [x for x in dirs if x not in ("testdata", "node_modules", ".git")]
    for f in files:
        if f.endswith(".go") and not f.endswith("_test.go"):
            p = os.path.join(d, f)
            n = open(p, encoding="utf-8").read().count(find)
            hits += [p] * n
if len(hits) != 1:
    sys.exit("found %d times under %s%s" % (len(hits), top, (": " + ", ".join(sorted(set(hits)))) if hits else ""))
p = hits[0]
s = open(p, encoding="utf-8").read()
open(p + ".orig", "w", encoding="utf-8").write(s)
open(p, "w", encoding="utf-8").write(s.replace(find, repl))
print(p)
PY
}

# runtests PKG RUN: the named tests, which must exist; quiet unless asked.
runtests() {
  timeout 600 "$GO" test -count=1 -run "$2" "$1" >"$tmp/out" 2>&1
}

total=0 killed=0 bad=0
checked=""
record() {
  [ -n "$name" ] || return 0
  if [ -n "${MUTATE_ONLY:-}" ] && ! printf '%s\n' "$name" | grep -q -- "$MUTATE_ONLY"; then
    return 0
  fi
  total=$((total + 1))
  # Each package and pattern must pass unmutated first, so that a failure
  # is the mutation's doing; and must run at least one test.
  key="$pkg $run"
  case "$checked" in *"|$key|"*) ;; *)
    if ! runtests "$pkg" "$run" || ! grep -q '^ok' "$tmp/out" || grep -q 'no tests to run' "$tmp/out"; then
      echo "FAIL  $name: go test -run '$run' $pkg does not pass (or runs nothing) unmutated:"
      sed 's/^/      /' "$tmp/out" | tail -20
      bad=$((bad + 1))
      return 0
    fi
    checked="$checked|$key|"
  esac
  if ! file=$(apply "${dir:-.}" "$find" "$replace" 2>"$tmp/err"); then
    echo "FAIL  $name: the text to mutate was $(cat "$tmp/err")"
    bad=$((bad + 1))
    return 0
  fi
  if runtests "$pkg" "$run"; then
    echo "FAIL  $name: survived (go test -run '$run' $pkg passes with $file mutated)"
    bad=$((bad + 1))
  elif grep -q -e '^# ' -e 'build failed' "$tmp/out"; then
    echo "FAIL  $name: the mutated $file does not build:"
    sed 's/^/      /' "$tmp/out" | tail -10
    bad=$((bad + 1))
  else
    echo "ok    $name: killed by go test -run '$run' $pkg"
    killed=$((killed + 1))
  fi
  mv "$file.orig" "$file"
}

name="" dir="" find="" replace="" pkg="" run=""
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in
    "#"*) ;;
    "") record; name="" dir="" find="" replace="" pkg="" run="" ;;
    "name: "*) name=${line#name: } ;;
    "in: "*) dir=${line#in: } ;;
    "find: "*) find=${line#find: } ;;
    "replace: "*) replace=${line#replace: } ;;
    "pkg: "*) pkg=${line#pkg: } ;;
    "run: "*) run=${line#run: } ;;
    *) echo "mutate: $list: cannot read: $line" >&2; exit 2 ;;
  esac
done < "$list"
record

echo "mutate: $killed of $total mutations killed"
[ "$bad" -eq 0 ] && [ "$total" -gt 0 ]
