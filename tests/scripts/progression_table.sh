#!/usr/bin/env bash
# tools/progression_table.sh on a small synthetic EHR (memgrad ehr-gen, 300 patients), two seeds,
# the deepcare rows (fast): the markdown table has a row per model with mean ± sd and the paper's
# figures, and the history and frequency rows; a second invocation keeps every run; a data folder
# without a table stops it with the loader's message; on data with follow pairs the table has the
# follow rule's column and the oracle's row, and the unrolled row trains. Skipped (77) without jq.
#   tests/scripts/progression_table.sh MEMGRAD_BINARY
set -euo pipefail
export MEMGRAD_BIN=$1
cd "$(dirname "$0")/../.."
command -v jq >/dev/null || { echo "progression_table test: SKIPPED, no jq"; exit 77; }
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail() { echo "progression_table test: $*" >&2; exit 1; }

"$MEMGRAD_BIN" ehr-gen --out "$tmp/ehr" --patients 300 --dx-codes 400 --proc-codes 200 \
  --rule-drugs 12 --tail-drugs 2 --threads 1 > /dev/null
flags=(--data "$tmp/ehr" --seeds "1 2" --epochs 1 --models "deepcare deepcare-alone")
tools/progression_table.sh "$tmp/t" "${flags[@]}" > "$tmp/t.md" 2> "$tmp/t.err" || {
  cat "$tmp/t.err"; fail "the table failed"; }
for row in deepcare deepcare-alone; do
  grep -Eq "^\| $row \| [0-9.]+ ± [0-9.]+ \| " "$tmp/t.md" || fail "no row $row"
  [ -f "$tmp/t/$row/seed-2/wall_seconds" ] || fail "no wall time for $row seed 2"
  [ -f "$tmp/t/$row/seed-2/cpu_seconds" ] || fail "no CPU time for $row seed 2"
done
grep -q '^| deepcare | .* | 66.2 / 59.6 / 53.7 | 52.7 / 46.9 / 40.2 |$' "$tmp/t.md" || fail "no paper figures"
grep -Eq '^\| history \| [0-9.]+ ± [0-9.]+ \| ' "$tmp/t.md" || fail "no history row"
grep -Eq '^\| frequency \| [0-9.]+ ± [0-9.]+ \| ' "$tmp/t.md" || fail "no frequency row"
grep -q '^table wall time: ' "$tmp/t.md" || fail "no wall time"
# A second invocation trains nothing.
tools/progression_table.sh "$tmp/t" "${flags[@]}" > /dev/null 2> "$tmp/again.err"
[ "$(grep -c 'kept' "$tmp/again.err")" -eq 4 ] || fail "a second invocation retrained runs"
# Follow pairs: the follow AUC column, the oracle row, the unrolled DeepCare row.
"$MEMGRAD_BIN" ehr-gen --out "$tmp/follow" --patients 300 --extra-admission 0.7 --dx-codes 400 \
  --proc-codes 200 --rule-drugs 6 --tail-drugs 0 --follow-pairs 5 --threads 1 > /dev/null
tools/progression_table.sh "$tmp/f" --data "$tmp/follow" --seeds 1 --epochs 1 \
  --models "deepcare-unroll deepcare" --categories false > "$tmp/f.md" 2> "$tmp/f.err" || {
  cat "$tmp/f.err"; fail "the follow table failed"; }
grep -q '^| model | P@1 | P@2 | P@3 | AUC micro | follow AUC | ' "$tmp/f.md" || fail "no follow column"
grep -Eq '^\| deepcare-unroll \| ([0-9.]+ ± [0-9.]+ \| ){5}' "$tmp/f.md" || fail "no unrolled row"
grep -Eq '^\| oracle \(trigger in admission a-2\) \| - \| - \| - \| - \| [0-9.]+ ± ' "$tmp/f.md" ||
  fail "no oracle row"
grep -q '"unroll": 4' "$tmp/f/deepcare-unroll/seed-1/config.json" || fail "the unrolled row is not unrolled"
# A missing table: the run fails, its log names it, the script exits 1.
rm "$tmp/ehr/PROCEDURES_ICD.csv"
if tools/progression_table.sh "$tmp/bad" --data "$tmp/ehr" --seeds 1 --models deepcare \
  > /dev/null 2> "$tmp/bad.err"; then fail "a missing table did not stop the table"; fi
grep -q "missing table PROCEDURES_ICD" "$tmp/bad/deepcare/seed-1.log" ||
  fail "the run's log does not name the missing table"
echo "progression_table test: ok"
