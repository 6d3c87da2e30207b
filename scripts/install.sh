#!/bin/sh
# install.sh installs a released awl binary, checked against the release's
# checksums.txt:
#
#   curl -fsSL https://raw.githubusercontent.com/awlrun/awl/main/scripts/install.sh | sh
#
# Settings, all optional, from the environment:
#   AWL_VERSION      a tag such as v1.2.3, or latest (the default)
#   AWL_INSTALL_DIR  where the binary goes (default ~/.local/bin)
#   AWL_BASE_URL     the repository's web address, which holds releases/
#                    (default https://github.com/awlrun/awl); tests point it
#                    at a local server or a file:// directory
#   AWL_OS, AWL_ARCH override what uname says (linux, darwin, windows;
#                    amd64, arm64)
# It prints the installed path on stdout and everything else on stderr, and
# exits non-zero, having installed nothing, on any failure.
set -eu

base=${AWL_BASE_URL:-https://github.com/awlrun/awl}
version=${AWL_VERSION:-latest}
dir=${AWL_INSTALL_DIR:-${HOME:?HOME is not set; set AWL_INSTALL_DIR}/.local/bin}

say() { printf 'install.sh: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# fetch URL FILE: curl or wget, following redirects, failing on HTTP errors.
fetch() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --proto '=https,http,file' -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    case $1 in file://*) cp "${1#file://}" "$2" ;; *) wget -q -O "$2" "$1" ;; esac
  else
    die "neither curl nor wget is installed"
  fi
}

os=${AWL_OS:-$(uname -s | tr '[:upper:]' '[:lower:]')}
case $os in
  linux | darwin) ;;
  mingw* | msys* | cygwin* | windows) os=windows ;;
  *) die "no awl release for the operating system '$os'" ;;
esac
arch=${AWL_ARCH:-$(uname -m)}
case $arch in
  x86_64 | amd64 | x64) arch=amd64 ;;
  aarch64 | arm64 | ARM64) arch=arm64 ;;
  *) die "no awl release for the architecture '$arch'" ;;
esac

# latest: the release page redirects to releases/tag/vX.Y.Z; a file://
# release directory names it in releases/latest instead.
if [ "$version" = latest ]; then
  case $base in
    file://*) version=$(cat "${base#file://}/releases/latest") ;;
    *)
      command -v curl >/dev/null 2>&1 || die "AWL_VERSION=latest needs curl; name a version"
      url=$(curl -fsSLI -o /dev/null -w '%{url_effective}' "$base/releases/latest") ||
        die "could not resolve the latest release at $base/releases/latest"
      version=${url##*/}
      ;;
  esac
fi
case $version in
  v[0-9]*) ;;
  [0-9]*) version=v$version ;;
  *) die "'$version' is not a release tag such as v1.2.3" ;;
esac

ext=tar.gz
[ "$os" = windows ] && ext=zip
asset="awl_${version#v}_${os}_${arch}.${ext}"
bin=awl
[ "$os" = windows ] && bin=awl.exe

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t awl-install)
trap 'rm -rf "$tmp"' EXIT INT TERM

say "downloading awl $version for $os/$arch"
fetch "$base/releases/download/$version/checksums.txt" "$tmp/checksums.txt" ||
  die "could not download checksums.txt of $version from $base"
want=$(awk -v a="$asset" '$2 == a || $2 == "*" a { print $1 }' "$tmp/checksums.txt")
[ -n "$want" ] || die "release $version has no $asset (no build for $os/$arch)"
fetch "$base/releases/download/$version/$asset" "$tmp/$asset" ||
  die "could not download $asset"

if command -v sha256sum >/dev/null 2>&1; then
  got=$(sha256sum "$tmp/$asset" | awk '{print $1}')
elif command -v shasum >/dev/null 2>&1; then
  got=$(shasum -a 256 "$tmp/$asset" | awk '{print $1}')
else
  die "neither sha256sum nor shasum is installed: cannot verify the download"
fi
[ "$got" = "$want" ] || die "checksum mismatch for $asset: checksums.txt says $want, the download is $got; nothing installed"

mkdir -p "$tmp/x"
case $ext in
  tar.gz) tar -xzf "$tmp/$asset" -C "$tmp/x" ;;
  zip) unzip -q "$tmp/$asset" -d "$tmp/x" ;;
esac
[ -f "$tmp/x/$bin" ] || die "$asset holds no $bin"

mkdir -p "$dir"
# Install by rename, so a running awl or a concurrent install never sees a
# half-written binary.
cp "$tmp/x/$bin" "$dir/.$bin.tmp.$$"
chmod 0755 "$dir/.$bin.tmp.$$"
mv -f "$dir/.$bin.tmp.$$" "$dir/$bin"
say "installed awl $version to $dir/$bin"
case ":${PATH:-}:" in *":$dir:"*) ;; *) say "$dir is not on PATH; add it to run awl by name" ;; esac
printf '%s\n' "$dir/$bin"
