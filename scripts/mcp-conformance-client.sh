#!/usr/bin/env bash
# The client the MCP conformance suite (@modelcontextprotocol/conformance)
# runs for each client scenario: `make conformance` passes it as --command.
# The suite appends the test server's URL as the last argument and sets
# MCP_CONFORMANCE_SCENARIO (and, for some scenarios, MCP_CONFORMANCE_CONTEXT,
# JSON). awl itself is the client: `awl run` with an mcp-config naming that
# URL and a scripted model (internal/conformancemodel) that calls every tool
# the server offers, once, then ends the turn.
#
# AWL and AWL_CONFORMANCE_MODEL name the two programs; when unset they are
# built into bin/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
url="${!#}"
scenario="${MCP_CONFORMANCE_SCENARIO:-}"
if [ -z "$url" ] || [ -z "$scenario" ]; then
  echo "usage: MCP_CONFORMANCE_SCENARIO=NAME $0 URL" >&2
  exit 2
fi
awl="${AWL:-}"
model="${AWL_CONFORMANCE_MODEL:-}"
if [ -z "$awl" ]; then
  awl="$root/bin/awl"
  (cd "$root" && go build -o "$awl" ./cmd/awl)
fi
if [ -z "$model" ]; then
  model="$root/bin/conformancemodel"
  (cd "$root" && go build -o "$model" ./internal/conformancemodel)
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ws"
export HOME="$work/home" XDG_STATE_HOME="$work/state" AWL_SESSION_DIR="$work/sessions"
mkdir -p "$HOME"

jq -n --arg url "$url" '{mcpServers: {conformance: {type: "http", url: $url}}}' >"$work/mcp.json"

exec "$model" -- "$awl" run -C "$work/ws" --no-stdin \
  --provider openai-chat --model conformance-model \
  --mcp-config "$work/mcp.json" --mcp-strict --mcp-timeout 20s \
  --no-agents-md --no-env-context --max-turns 4 \
  "Call each tool once."
