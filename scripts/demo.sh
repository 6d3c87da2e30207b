#!/bin/sh
# demo.sh is `make demo`: it replays examples/summarise.jsonl as the model in
# a scratch copy of examples/workspace, with NDJSON events on stdout and
# nothing else there (`make demo | jq .`). The tools run for real (the run
# writes SUMMARY.md); no API key and no network are needed. Sessions go to the
# scratch directory, not to your home; the last line on stderr is the
# `awl sessions show` command that shows the new one.
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
code=0
(cd "$tmp/workspace" && "$awl" run --provider replay --replay "$root/examples/summarise.jsonl" --output ndjson) || code=$?
if [ "$code" -ne 0 ]; then
	echo "awl demo: awl exited $code" >&2
	exit "$code"
fi
# The last line says where to read what happened: the session, step by step.
for f in "$AWL_SESSION_DIR"/*/*.jsonl; do
	id=$(basename "$f" .jsonl)
	id=${id##*_}
	echo "awl demo: done, SUMMARY.md written; to see what happened: $awl sessions show $id --session-dir $AWL_SESSION_DIR" >&2
done
