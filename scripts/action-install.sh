#!/usr/bin/env bash
# action-install.sh puts awl on a GitHub Actions runner for action.yml, in two
# steps around actions/cache:
#
#   action-install.sh resolve   which awl: a release (version, platform, the
#                               cache directory and key) or a source build
#   action-install.sh install   download and verify the release into the
#                               cache directory (unless the cache restored
#                               it), or build from the action's own source;
#                               then $RUNNER_TEMP/awl-bin/awl is awl, and
#                               that directory is on PATH for later steps
#
# It changes nothing else in the job: no Go is set up on PATH, no GOROOT.
# Inputs come from the environment:
#   AWL_IN_VERSION   the action's version input: empty (the release that
#                    matches the action's own ref), latest, or a tag
#   AWL_ACTION_REF   github.action_ref; AWL_ACTION_PATH github.action_path
#   AWL_RUNNER_OS    runner.os (Linux, macOS, Windows); AWL_RUNNER_ARCH
#                    runner.arch (X64, ARM64)
#   AWL_BASE_URL     where releases live (scripts/install.sh); tests set it
#   AWL_MODE, AWL_VERSION, AWL_DIR, AWL_CACHE_HIT   install: what resolve
#                    said, and whether actions/cache restored AWL_DIR
set -euo pipefail

say() { printf 'awl action: %s\n' "$*" >&2; }
die() { printf '::error::awl action: %s\n' "$*" >&2; exit 1; }
out() { printf '%s=%s\n' "$1" "$2" >> "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

resolve() {
  local version=${AWL_IN_VERSION:-} ref=${AWL_ACTION_REF:-} os arch
  case ${AWL_RUNNER_OS:-} in
    Linux) os=linux ;;
    macOS) os=darwin ;;
    Windows) os=windows ;;
    *) die "no awl release for runner.os '${AWL_RUNNER_OS:-}'" ;;
  esac
  case ${AWL_RUNNER_ARCH:-} in
    X64) arch=amd64 ;;
    ARM64) arch=arm64 ;;
    *) die "no awl release for runner.arch '${AWL_RUNNER_ARCH:-}'" ;;
  esac
  if [ -z "$version" ]; then
    # The release that matches the action's ref (uses: awlrun/awl@v1.2.3);
    # a branch, a commit or a local checkout (uses: ./) has none.
    if [[ $ref =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+].*)?$ ]]; then
      version=$ref
    else
      say "the action's ref '${ref:-(none)}' is not a release: building awl from the action's source"
      out mode source
      return
    fi
  fi
  if [ "$version" = latest ]; then
    local url
    url=$(curl -fsSLI -o /dev/null -w '%{url_effective}' "${AWL_BASE_URL:-https://github.com/awlrun/awl}/releases/latest") ||
      die "could not resolve the latest awl release"
    version=${url##*/}
  fi
  [[ $version =~ ^v?[0-9]+\.[0-9]+\.[0-9]+ ]] || die "version '$version' is not latest or a release tag such as v1.2.3"
  [[ $version == v* ]] || version=v$version
  out mode release
  out version "$version"
  out dir "${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:?}}/awl/$version/$os-$arch"
  out key "awl-$version-$os-$arch"
  out os "$os"
  out arch "$arch"
}

install() {
  local bin="${RUNNER_TEMP:?RUNNER_TEMP is not set}/awl-bin" exe=awl
  [ "${AWL_RUNNER_OS:-}" = Windows ] && exe=awl.exe
  mkdir -p "$bin"
  case ${AWL_MODE:-} in
    release)
      if [ "${AWL_CACHE_HIT:-}" = true ] && [ -x "$AWL_DIR/$exe" ]; then
        say "awl ${AWL_VERSION} restored from the cache"
      else
        AWL_VERSION=$AWL_VERSION AWL_INSTALL_DIR=$AWL_DIR \
          AWL_OS=$AWL_OS AWL_ARCH=$AWL_ARCH sh "$here/install.sh" > /dev/null
      fi
      cp "$AWL_DIR/$exe" "$bin/$exe"
      ;;
    source)
      local gobin
      gobin=$(command -v go || true)
      if [ -z "$gobin" ]; then
        # No Go on the runner: fetch one into a private directory and use it
        # by its path for this build alone. (actions/setup-go would put its
        # Go on PATH for every later step of the job, which no later step
        # can undo.)
        gobin=$(private_go) || die "the action's ref is not a release, no Go is on PATH, and none could be downloaded: use a release tag (awlrun/awl@v1.2.3) or version: latest"
      fi
      (
        cd "${AWL_ACTION_PATH:?AWL_ACTION_PATH is not set}"
        v=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
        c=$(git rev-parse --short=12 HEAD 2>/dev/null || true)
        CGO_ENABLED=0 "$gobin" build -trimpath \
          -ldflags "-X main.version=$v -X main.commit=$c -X main.date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
          -o "$bin/$exe" ./cmd/awl
      )
      ;;
    *) die "AWL_MODE must be release or source, not '${AWL_MODE:-}'" ;;
  esac
  echo "$bin" >> "${GITHUB_PATH:?GITHUB_PATH is not set}"
  "$bin/$exe" --version >&2
}

# private_go downloads the current Go release into $RUNNER_TEMP and prints
# its go command's path.
private_go() {
  local goos goarch v dir
  case ${AWL_RUNNER_OS:-} in Linux) goos=linux ;; macOS) goos=darwin ;; *) return 1 ;; esac
  case ${AWL_RUNNER_ARCH:-} in X64) goarch=amd64 ;; ARM64) goarch=arm64 ;; *) return 1 ;; esac
  v=$(curl -fsSL 'https://go.dev/VERSION?m=text' | head -n 1) || return 1
  dir="$RUNNER_TEMP/awl-go"
  mkdir -p "$dir"
  say "no Go on PATH: using $v in $dir for this build only"
  curl -fsSL "https://go.dev/dl/$v.$goos-$goarch.tar.gz" | tar -xz -C "$dir" || return 1
  echo "$dir/go/bin/go"
}

case ${1:-} in
  resolve) resolve ;;
  install) install ;;
  *) die "usage: action-install.sh resolve|install" ;;
esac
