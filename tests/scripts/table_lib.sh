#!/usr/bin/env bash
# The options of the MIMIC table scripts, parsed once in tools/table_lib.sh (table_setup): each of
# tools/mimic_table.sh and tools/progression_table.sh exits 2 on a bad --jobs and on an option
# without its value, with a message naming the option, before it makes its runs folder or trains.
#   tests/scripts/table_lib.sh MEMGRAD_BINARY
set -euo pipefail
export MEMGRAD_BIN=$1
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail() { echo "table_lib test: $*" >&2; exit 1; }

bad_option() {  # SCRIPT MESSAGE ARGS...
  local script=$1 want=$2 status=0
  shift 2
  "tools/$script" "$tmp/runs" "$@" > /dev/null 2> "$tmp/err" || status=$?
  [ "$status" -eq 2 ] || fail "$script $* exited $status, not 2"
  grep -q -- "^$script: $want" "$tmp/err" || fail "$script $*: not '$want' but $(cat "$tmp/err")"
  [ ! -e "$tmp/runs" ] || fail "$script $*: a bad option made the runs folder"
}
for script in mimic_table.sh progression_table.sh; do
  bad_option "$script" "--jobs takes a positive number, got '0'" --seeds 1 --jobs 0
  bad_option "$script" "--jobs takes a positive number, got 'x'" --jobs x --epochs 1
  bad_option "$script" "--seeds takes a value" --epochs 1 --seeds
  bad_option "$script" "--data takes a value" --data
done
echo "table_lib test: ok"
