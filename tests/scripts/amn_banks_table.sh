#!/usr/bin/env bash
# tools/amn_banks_table.sh on hand-written metrics.json files: one row per task that has a run,
# the required banks' error and entity ratio picked by k, rounded, the passing banks ("-" for a
# run without them); a folder without runs and a
# run without bank figures stop with exit 2. Skipped (77) without jq.
#   tests/scripts/amn_banks_table.sh MEMGRAD_BINARY (unused)
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v jq >/dev/null || { echo "amn_banks_table test: SKIPPED, no jq"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "amn_banks_table test: $*" >&2; exit 1; }

mkdir -p "$tmp/r/task2" "$tmp/r/task7"
cat > "$tmp/r/task2/metrics.json" <<'JSON'
{"mean_error": 1.5, "model": {"banks_created": 3.456, "required_banks": 2, "speedup_read": 2.04,
 "speedup_decode": 1.26, "passing": {"banks": 2, "error": 1.96, "entity_ratio": 1.234,
 "speedup_read": 2.04, "speedup_decode": 1.26}, "per_k": [
  {"k": 1, "error": 9.04, "entity_ratio": 0.714},
  {"k": 2, "error": 1.96, "entity_ratio": 1.234},
  {"k": 3, "error": 1.5, "entity_ratio": 2.5}]}}
JSON
cat > "$tmp/r/task7/metrics.json" <<'JSON'
{"model": {"banks_created": 5, "required_banks": 1, "speedup_read": 5.0, "speedup_decode": 1.8,
 "per_k": [{"k": 1, "error": 0.3, "entity_ratio": 0.5}, {"k": 2, "error": 0.2, "entity_ratio": 1}]}}
JSON
tools/amn_banks_table.sh "$tmp/r" > "$tmp/t.md"
[ "$(grep -c '^| [0-9]' "$tmp/t.md")" -eq 2 ] || fail "expected two rows: $(cat "$tmp/t.md")"
grep -qx '| 2 | 3.46 | 2 | 2 / 1.5 | 0.71 / 1.23 / 2.5 | 2x / 1.3x | 2 / 1.23 / 1.3x |' "$tmp/t.md" ||
  fail "task 2's row: $(grep '^| 2 ' "$tmp/t.md")"
grep -qx '| 7 | 5 | 1 | 0.3 / 0.2 | 0.5 / 0.5 / 1 | 5x / 1.8x | - |' "$tmp/t.md" ||
  fail "task 7's row: $(grep '^| 7 ' "$tmp/t.md")"

mkdir -p "$tmp/empty"
if tools/amn_banks_table.sh "$tmp/empty" 2> "$tmp/err"; then fail "an empty folder passed"; fi
grep -q "no taskT/metrics.json" "$tmp/err" || fail "message: $(cat "$tmp/err")"
echo '{"mean_error": 0}' > "$tmp/r/task7/metrics.json"
if tools/amn_banks_table.sh "$tmp/r" 2> "$tmp/err"; then fail "a run without bank figures passed"; fi
grep -q "task7/metrics.json has no AMN bank figures" "$tmp/err" || fail "message: $(cat "$tmp/err")"
echo "amn_banks_table test: ok"
