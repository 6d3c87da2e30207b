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
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT
mkdir -p "$work/ws"
export HOME="$work/home" XDG_STATE_HOME="$work/state" AWL_SESSION_DIR="$work/sessions"
mkdir -p "$HOME"

# OAuth: the scenario's context gives client credentials (as ${VAR}
# references, the way CI passes secrets); the authorization-code scenarios
# get a Client ID Metadata Document URL (used where the server supports
# one, else dynamic registration) and a $BROWSER that follows the
# authorization server's redirect to awl's listener.
ctx="${MCP_CONFORMANCE_CONTEXT:-}"
[ -n "$ctx" ] || ctx='{}'
export CONFORMANCE_CLIENT_SECRET CONFORMANCE_PRIVATE_KEY
CONFORMANCE_CLIENT_SECRET="$(jq -r '.client_secret // ""' <<<"$ctx")"
CONFORMANCE_PRIVATE_KEY="$(jq -r '.private_key_pem // ""' <<<"$ctx")"
case "$scenario" in
auth/client-credentials-*)
  oauth="$(jq '{grant: "client_credentials", client_id}
    + (if .client_secret then {client_secret: "${CONFORMANCE_CLIENT_SECRET}"} else {} end)
    + (if .private_key_pem then {private_key: "${CONFORMANCE_PRIVATE_KEY}", signing_algorithm} else {} end)' <<<"$ctx")" ;;
auth/cross-app-access-* | auth/enterprise-managed-authorization)
  # SEP-990: the context holds the IdP's ID token, passed as a secret.
  export CONFORMANCE_ID_TOKEN
  CONFORMANCE_ID_TOKEN="$(jq -r '.idp_id_token // ""' <<<"$ctx")"
  oauth="$(jq '{grant: "id_jag", client_id, client_secret: "${CONFORMANCE_CLIENT_SECRET}",
    idp: {issuer: .idp_issuer, client_id: .idp_client_id, id_token: "${CONFORMANCE_ID_TOKEN}"}}' <<<"$ctx")" ;;
auth/wif-jwt-bearer)
  # SEP-1933: the workload's own JWT (in CI, the job's OIDC token) as a
  # JWT-bearer assertion, read from a file as a token projected into a pod
  # would be.
  jq -r '.valid_jwt // ""' <<<"$ctx" >"$work/workload.jwt"
  oauth="$(jq --arg f "$work/workload.jwt" '{grant: "jwt_bearer", client_id, assertion_file: $f}' <<<"$ctx")" ;;
auth/pre-registration)
  oauth="$(jq '{client_id, client_secret: "${CONFORMANCE_CLIENT_SECRET}"}' <<<"$ctx")" ;;
*)
  oauth='{"client_metadata_url": "https://conformance-test.local/client-metadata.json"}' ;;
esac
# Scenarios that name the arguments of their tool calls (http-custom-headers)
# pass them to the scripted model, which calls those tools with them.
export CONFORMANCE_TOOL_CALLS
CONFORMANCE_TOOL_CALLS="$(jq -c '.toolCalls // []' <<<"$ctx")"
printf '#!/bin/sh\nexec "%s" browse "$1"\n' "$model" >"$work/browser"
chmod +x "$work/browser"
export BROWSER="$work/browser"

jq -n --arg url "$url" --argjson oauth "$oauth" \
  '{mcpServers: {conformance: {type: "http", url: $url, oauth: $oauth}}}' >"$work/mcp.json"

# NDJSON events on stdout, so that they are checked too: no OAuth token
# the suite's authorization server issued ("test-token-…") may reach them,
# stderr or the session (which holds all the model saw).
set +e
"$model" -- "$awl" run -C "$work/ws" --no-stdin -o ndjson \
  --provider openai-chat --model conformance-model \
  --mcp-config "$work/mcp.json" --mcp-strict --mcp-timeout 20s \
  --no-agents-md --no-env-context --max-turns 4 \
  "Call each tool once." >"$work/stdout" 2>"$work/stderr"
code=$?
set -e
cat "$work/stdout"
cat "$work/stderr" >&2
if grep -rl 'test-token-' "$work/stdout" "$work/stderr" "$AWL_SESSION_DIR" >&2; then
  echo "mcp-conformance-client: an OAuth token reached awl's events, stderr or session (files above)" >&2
  exit 1
fi
if [ -n "${CONFORMANCE_ID_TOKEN:-}" ] && grep -rlF "$CONFORMANCE_ID_TOKEN" "$work/stdout" "$work/stderr" "$AWL_SESSION_DIR" >&2; then
  echo "mcp-conformance-client: the ID token reached awl's events, stderr or session (files above)" >&2
  exit 1
fi
exit "$code"
