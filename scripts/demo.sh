#!/bin/sh
# demo.sh is `make demo`: it replays examples/summarise.jsonl as the model in
# a scratch copy of examples/workspace, with NDJSON events on stdout. The
# tools run for real (the run writes SUMMARY.md); no API key and no network
# are needed. Sessions go to the scratch directory, not to your home.
#
#   AWL=path/to/awl sh scripts/demo.sh     (default: bin/awl)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
awl=${AWL:-$root/bin/awl}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/awl-demo.XXXXXX")
cp -R "$root/examples/workspace" "$tmp/workspace"
AWL_SESSION_DIR=$tmp/sessions
export AWL_SESSION_DIR

echo "awl demo: replaying examples/summarise.jsonl in $tmp/workspace" >&2
echo "awl demo: sessions go to $AWL_SESSION_DIR" >&2
code=0
(cd "$tmp/workspace" && "$awl" run --provider replay --replay "$root/examples/summarise.jsonl" --output ndjson) || code=$?
if [ "$code" -eq 0 ]; then
	echo "awl demo: done; the run wrote $tmp/workspace/SUMMARY.md" >&2
	for f in "$AWL_SESSION_DIR"/*/*.jsonl; do
		echo "awl demo: the new session is $f (docs/ci.md compares it with the recording)" >&2
	done
else
	echo "awl demo: awl exited $code" >&2
fi
exit "$code"
