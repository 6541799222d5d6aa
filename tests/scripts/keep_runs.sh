#!/usr/bin/env bash
# tools/keep_runs.sh on a hand-made table directory: the finished runs' config.json, metrics.json
# and best.json and the table's times/ are kept under DEST, at the same paths; a checkpoint, a log
# and an unfinished run are not; a missing directory exits 2.
#   tests/scripts/keep_runs.sh MEMGRAD_BINARY   (the binary is not needed)
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "keep_runs test: $*" >&2; exit 1; }
t=$tmp/table
mkdir -p "$t/task1" "$t/task2/seed1" "$t/task2/seed2" "$t/task3" "$t/times"
for r in task1 task2/seed1 task2/seed2 task3; do
  echo '{"seed": 1}' > "$t/$r/config.json"
  echo x > "$t/$r/checkpoint.safetensors"
  echo '{}' > "$t/$r/log.jsonl"
done
for r in task1 task2/seed1 task2/seed2; do echo '{"mean_error": 1.5}' > "$t/$r/metrics.json"; done
echo '{"epoch": 3}' > "$t/task2/seed2/best.json"
echo 12.5 > "$t/times/task1"
tools/keep_runs.sh "$t" "$tmp/kept" > "$tmp/out" || fail "keep_runs failed"
grep -q "3 finished run(s)" "$tmp/out" || { cat "$tmp/out"; fail "did not count 3 finished runs"; }
for f in task1/config.json task1/metrics.json task2/seed1/metrics.json task2/seed2/best.json times/task1; do
  [ -f "$tmp/kept/$f" ] || fail "$f not kept"
done
cmp -s "$t/task2/seed2/metrics.json" "$tmp/kept/task2/seed2/metrics.json" || fail "metrics.json changed"
[ -z "$(find "$tmp/kept" -name 'checkpoint*' -o -name 'log.jsonl')" ] || fail "kept a checkpoint or a log"
[ ! -e "$tmp/kept/task3" ] || fail "kept an unfinished run"
rc=0; tools/keep_runs.sh "$tmp/nowhere" "$tmp/k2" > /dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "a missing directory exited $rc, not 2"
echo "keep_runs test: ok"
