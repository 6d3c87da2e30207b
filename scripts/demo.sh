#!/bin/sh
# demo.sh is `make demo`: it replays examples/summarise.jsonl as the model in
# a scratch copy of examples/workspace, with NDJSON events on stdout and
# nothing else there (`make demo | jq .`). The tools run for real (the run
# writes SUMMARY.md, shown on stderr); no API key and no network are needed.
# The scratch directory is removed at the end, whatever happened.
#
# The session goes to $AWL_SESSION_DIR when it is set, and stays there: the
# last line on stderr is then the `awl sessions show` command that shows it.
# Without AWL_SESSION_DIR it goes to the scratch directory, not to your
# home, and is removed with it.
#
#   AWL=path/to/awl sh scripts/demo.sh     (default: bin/awl)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
awl=${AWL:-$root/bin/awl}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/awl-demo.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cp -R "$root/examples/workspace" "$tmp/workspace"
keep=${AWL_SESSION_DIR:-}
AWL_SESSION_DIR=${keep:-$tmp/sessions}
export AWL_SESSION_DIR
before=$(mktemp "$tmp/before.XXXXXX")
ls "$AWL_SESSION_DIR"/*/*.jsonl > "$before" 2>/dev/null || true

echo "awl demo: replaying examples/summarise.jsonl in a scratch copy of examples/workspace" >&2
code=0
(cd "$tmp/workspace" && "$awl" run --provider replay --replay "$root/examples/summarise.jsonl" --output ndjson) || code=$?
if [ "$code" -ne 0 ]; then
	echo "awl demo: awl exited $code" >&2
	exit "$code"
fi
if [ -f "$tmp/workspace/SUMMARY.md" ]; then
	echo "awl demo: the run wrote SUMMARY.md:" >&2
	cat "$tmp/workspace/SUMMARY.md" >&2
	[ -z "$(tail -c 1 "$tmp/workspace/SUMMARY.md")" ] || echo >&2
fi
# The last line says where to read what happened: the session, step by step.
for f in "$AWL_SESSION_DIR"/*/*.jsonl; do
	if [ ! -f "$f" ] || grep -qxF "$f" "$before"; then
		continue
	fi
	id=$(basename "$f" .jsonl)
	id=${id##*_}
	if [ -n "$keep" ]; then
		echo "awl demo: done, SUMMARY.md written; to see what happened: $awl sessions show $id --session-dir $AWL_SESSION_DIR" >&2
	else
		echo "awl demo: done, SUMMARY.md written; session $id removed with the scratch directory (set AWL_SESSION_DIR to keep it)" >&2
	fi
done
