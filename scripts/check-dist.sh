#!/bin/sh
# check-dist.sh DIR checks what `goreleaser release --snapshot` left in DIR:
# an archive for each of the six targets, a checksums.txt that matches them,
# and a linux/amd64 binary that runs and says its version.
set -eu
dist=${1:-dist}
cd "$dist"
fail() { echo "check-dist: $*" >&2; exit 1; }

[ -s checksums.txt ] || fail "no checksums.txt"
n=0
for target in linux_amd64 linux_arm64 darwin_amd64 darwin_arm64 windows_amd64 windows_arm64; do
  case $target in windows_*) ext=zip ;; *) ext=tar.gz ;; esac
  set -- awl_*_"$target.$ext"
  [ -f "$1" ] || fail "no archive for $target"
  grep -q "  $1\$" checksums.txt || fail "$1 is not in checksums.txt"
  n=$((n + 1))
done
sha256sum -c --quiet checksums.txt || fail "checksums.txt does not match the archives"

bin=$(ls -d awl_linux_amd64*/awl 2>/dev/null | head -n 1)
[ -n "$bin" ] || fail "no linux/amd64 binary"
if [ "$(uname -s)/$(uname -m)" = Linux/x86_64 ]; then
  v=$("$bin" --version)
  [ "$v" = "$("$bin" version)" ] || fail "awl --version and awl version differ"
  case $v in "awl v"*"(commit "*", built "*")") ;; *) fail "unexpected version line: $v" ;; esac
  echo "check-dist: $n archives verified; $bin: $v"
else
  echo "check-dist: $n archives verified; not on linux/amd64, so $bin was not run"
fi
