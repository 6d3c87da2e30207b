#!/bin/sh
# test-unprivileged.sh runs the test suite as a user who is not root. Most
# contributors and GitHub's hosted runners are not root, and a test (or a
# feature) can work for root alone: root reads every file whatever its
# mode, may read any process's /proc files and memory, and keeps them after
# giving up dumpability.
#
# Not root, it runs `go test ./...` as you. As root (the CI machine), it
# runs it as AWL_TEST_UID (default 65534, nobody), in place: the tree and
# the npm-installed MCP servers need only be readable by that user. The
# user gets a HOME, TMPDIR, GOCACHE and GOMODCACHE of its own in a
# temporary directory, removed afterwards; the module cache is filled from
# root's (GOPROXY=file://, no network), and the run has GOPROXY=off. The
# build cache starts as root's: hard links to root's entries (a copy where
# links cannot be made) in directories the user owns, so that what root
# compiled (make check, a build) is not compiled again, while the entries
# stay root's, read-only to the user, who adds its own beside them.
#
# PKGS are the packages (default ./...). TESTFLAGS are passed to go test
# (default -count=1 -timeout 30m: the results root's
# run cached must not stand in for this run's). RUNS adds runs of chosen
# tests, one a line: a -run pattern, then the packages (as CI does for
# the tests of cmd/awl whose behaviour depends on the uid); PKGS=none
# leaves the whole-package run out.
set -eu
cd "$(dirname "$0")/.."
GO=${GO:-go}
TESTFLAGS=${TESTFLAGS:--count=1 -timeout 30m}
PKGS=${PKGS:-./...}

# each CMD...: run go test with TESTFLAGS for PKGS, then for each line of
# RUNS, through CMD (the go command, or setpriv and env then it).
each() {
  if [ "$PKGS" != none ]; then
    # shellcheck disable=SC2086 # TESTFLAGS and PKGS are lists
    "$@" test $TESTFLAGS $PKGS
  fi
  printf '%s\n' "${RUNS:-}" | while read -r pattern pkgs; do
    [ -n "$pattern" ] || continue
    # shellcheck disable=SC2086 # TESTFLAGS and pkgs are lists
    "$@" test $TESTFLAGS -run "$pattern" $pkgs
  done
}

if [ "$(id -u)" != 0 ]; then
  each "$GO"
  exit
fi

uid=${AWL_TEST_UID:-65534}
if [ "$uid" = 0 ]; then
  echo "test-unprivileged: AWL_TEST_UID must not be 0" >&2
  exit 2
fi
gobin=$(command -v "$GO")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/awl-unprivileged.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
chmod 755 "$tmp"
mkdir "$tmp/home" "$tmp/tmp" "$tmp/cache"

# The modules the tests build with, extracted from root's module cache:
# the tree's, and those the packages of a module of its own that a test
# builds need (the mcp-go server in runner/mcp/testdata,
# TestRealServersOnEveryAPI). Root fetches the latter first, as its own
# run of that test would (from GOPROXY, when root's cache lacks them);
# `go list -deps` fetches just what the packages need, while `go mod
# download` would want every module of the graph.
rootmod=$("$GO" env GOMODCACHE)
GOMODCACHE="$tmp/mod" GOPROXY="file://$rootmod/cache/download" GOSUMDB=off GOFLAGS=-modcacherw \
  "$GO" mod download
for mod in $(find . -name node_modules -prune -o -path '*/testdata/*/go.mod' -print | sed 's,/go.mod$,,'); do
  (cd "$mod" && "$GO" list -deps ./... >/dev/null &&
    GOMODCACHE="$tmp/mod" GOPROXY="file://$rootmod/cache/download" GOSUMDB=off GOFLAGS=-modcacherw \
      "$GO" list -deps ./... >/dev/null)
done
chown -R "$uid:$uid" "$tmp"

# The build cache, seeded from root's. Go's cache is content-addressed,
# but a user cannot share another's read-only: it writes new entries (and
# trim.txt) into the cache's directories. Hard links cost no copy; the
# files stay root's, so the user cannot change an entry root reads, and
# the directories become the user's, so that it can add and remove links.
rootcache=$("$GO" env GOCACHE)
if [ -d "$rootcache" ] && [ -f "$rootcache/README" ]; then
  if ln "$rootcache/README" "$tmp/link-test" 2>/dev/null; then
    rm "$tmp/link-test"
    cp -al "$rootcache/." "$tmp/cache/"
  else
    cp -a "$rootcache/." "$tmp/cache/" # another file system
  fi
  find "$tmp/cache" -type d -exec chown "$uid:$uid" {} +
  if [ -f "$tmp/cache/trim.txt" ]; then
    cp --remove-destination "$rootcache/trim.txt" "$tmp/cache/trim.txt"
    chown "$uid:$uid" "$tmp/cache/trim.txt"
  fi
fi

# The tree belongs to root: git refuses a repository another user owns
# unless told it is safe, and a test may run git here.
printf '[safe]\n\tdirectory = *\n' > "$tmp/home/.gitconfig"
chown "$uid:$uid" "$tmp/home/.gitconfig"

# The user's PATH is root's without the directories the user may not
# search: a python3 under /root/.pyenv would be found first and fail to
# run, and a test that looks for python3 would quietly lose it.
upath=
IFS=:
for d in $PATH; do
  if [ -n "$d" ] && setpriv --reuid="$uid" --regid="$uid" --clear-groups test -x "$d"; then
    upath=${upath:+$upath:}$d
  fi
done
unset IFS

echo "test-unprivileged: go test $TESTFLAGS $PKGS${RUNS:+ and RUNS} as uid $uid" >&2
each setpriv --reuid="$uid" --regid="$uid" --clear-groups \
  env HOME="$tmp/home" TMPDIR="$tmp/tmp" GOCACHE="$tmp/cache" GOMODCACHE="$tmp/mod" \
  GOPROXY=off GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:-}" PATH="$upath" \
  "$gobin"
