#!/bin/sh
# demo-pipeline.sh is `make demo-pipeline`: three chained `awl run` steps,
# as a CI pipeline runs them, replayed from examples/pipeline.jsonl in a
# scratch copy of examples/workspace, with no API key and no network:
#
#   1. a new session plans the changelog;
#   2. `--resume ID` writes CHANGELOG.md (the write tool runs for real);
#   3. `--resume PATH` (the session file carried as an artifact) reports,
#      with `--output-schema`, as JSON.
#
# Each step is its own process. What each prints goes to stderr; stdout gets
# the final answer alone, pulled from step 3's result with jq (the raw result
# when jq is not installed). The scratch directory is removed at the end.
# The session goes to $AWL_SESSION_DIR when it is set, and stays there;
# without it, to the scratch directory.
#
#   AWL=path/to/awl sh scripts/demo-pipeline.sh     (default: bin/awl)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
awl=${AWL:-$root/bin/awl}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/awl-demo-pipeline.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cp -R "$root/examples/workspace" "$tmp/workspace"
cp "$root/examples/pipeline.schema.json" "$tmp/"
AWL_SESSION_DIR=${AWL_SESSION_DIR:-$tmp/sessions}
# The recording plays the model: every command below is the one a real
# pipeline runs, unchanged.
AWL_PROVIDER=replay
AWL_REPLAY=$root/examples/pipeline.jsonl
export AWL_SESSION_DIR AWL_PROVIDER AWL_REPLAY
cd "$tmp/workspace"

say() { echo "awl demo-pipeline: $*" >&2; }

say 'step 1: awl run -o json "Plan the 0.4 changelog from the notes in this directory."'
"$awl" run -o json "Plan the 0.4 changelog from the notes in this directory." > "$tmp/step1.json"
id=$(sed -n 's/.*"session_id":"\([^"]*\)".*/\1/p' "$tmp/step1.json")
say "step 1 made session $id"

say "step 2: awl run --resume $id \"Write the changelog to CHANGELOG.md.\""
"$awl" run --resume "$id" "Write the changelog to CHANGELOG.md." >&2
say "CHANGELOG.md now holds:"
cat CHANGELOG.md >&2

# A later CI job gets the session as an artifact and resumes it by path.
mkdir "$tmp/artifact"
cp "$("$awl" sessions path "$id")" "$tmp/artifact/"
path=$(ls "$tmp"/artifact/*.jsonl)
say "step 3: awl run --resume ../artifact/$(basename "$path") --output-schema ../pipeline.schema.json -o json \"Report what you changed.\""
"$awl" run --resume "$path" --output-schema ../pipeline.schema.json -o json "Report what you changed." > "$tmp/result.json"

say "the final answer: jq -r '.structured.summary' result.json"
if command -v jq > /dev/null 2>&1; then
	jq -r '.structured.summary' "$tmp/result.json"
else
	say "(jq is not installed: the whole result follows)"
	cat "$tmp/result.json"
fi
