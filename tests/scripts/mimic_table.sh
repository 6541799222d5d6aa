#!/usr/bin/env bash
# tools/mimic_table.sh on a small synthetic EHR (memgrad ehr-gen, 90 patients), two seeds, the
# bag-of-codes rows (fast): the markdown table has a row per model with mean ± sd and the paper's
# figures, and the popularity row; a second invocation keeps every run; a data folder without a
# table stops it with the loader's message; --l2-grid chooses each bag-of-codes row's penalty on
# validation. Skipped (77) without jq, which the script needs.
#   tests/scripts/mimic_table.sh MEMGRAD_BINARY
set -euo pipefail
export MEMGRAD_BIN=$1
cd "$(dirname "$0")/../.."
command -v jq >/dev/null || { echo "mimic_table test: SKIPPED, no jq"; exit 77; }
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail() { echo "mimic_table test: $*" >&2; exit 1; }

"$MEMGRAD_BIN" ehr-gen --out "$tmp/ehr" --patients 90 --dx-codes 400 --proc-codes 200 \
  --rule-drugs 12 --tail-drugs 2 --threads 1 > /dev/null
flags=(--data "$tmp/ehr" --seeds "1 2" --epochs 1 --models "binary-relevance classifier-chains br-dx lstm-proc")
tools/mimic_table.sh "$tmp/t" "${flags[@]}" > "$tmp/t.md" 2> "$tmp/t.err" || {
  cat "$tmp/t.err"; fail "the table failed"; }
for row in binary-relevance classifier-chains br-dx lstm-proc; do
  grep -Eq "^\| $row \| [0-9.]+ ± [0-9.]+ \| " "$tmp/t.md" || fail "no row $row"
  [ -f "$tmp/t/$row/seed-2/wall_seconds" ] || fail "no wall time for $row seed 2"
  [ -f "$tmp/t/$row/seed-2/cpu_seconds" ] || fail "no CPU time for $row seed 2"
done
grep -q '^| binary-relevance | .* | 84.1 | 70.3 | 81.0 | 78.2 | 72.3 |$' "$tmp/t.md" || fail "no paper figures"
# A single-view row of a sequence model reads its one view (the paper's "Procedure only" LSTM).
[ "$(jq -r .model_config.views "$tmp/t/lstm-proc/seed-1/config.json")" = proc ] || fail "lstm-proc reads both views"
grep -q '^| lstm-proc | .* | 83.9 | 70.8 | 88.1 | 86.0 | 78.4 |$' "$tmp/t.md" || fail "no paper figures for lstm-proc"
grep -q '^| popularity | 50.0 ± 0.0 | ' "$tmp/t.md" || fail "no popularity row"
grep -q '^table wall time: ' "$tmp/t.md" || fail "no wall time"
# A second invocation trains nothing.
tools/mimic_table.sh "$tmp/t" "${flags[@]}" > /dev/null 2> "$tmp/again.err"
[ "$(grep -c 'kept' "$tmp/again.err")" -eq 8 ] || fail "a second invocation retrained runs"
# --l2-grid: one run per penalty, the row is the run of best validation macro AUC (never test).
tools/mimic_table.sh "$tmp/g" --data "$tmp/ehr" --seeds 1 --models "binary-relevance dmnc-late" \
  --epochs 1 --l2-grid "1e-5 1e-3 0.1" > "$tmp/g.md" 2> "$tmp/g.err" || { cat "$tmp/g.err"; fail "the grid failed"; }
best=$(for v in 1e-5 1e-3 0.1; do
  echo "$v $(jq .value "$tmp/g/binary-relevance/l2-$v/seed-1/best.json")"
done | sort -s -g -r -k2,2 | head -1 | cut -d' ' -f1)
[ "$(jq .chosen_l2 "$tmp/g/binary-relevance/seed-1/grid.json")" = "$(jq -n "$best")" ] ||
  fail "the grid did not choose the best validation macro AUC ($best)"
cmp -s "$tmp/g/binary-relevance/seed-1/metrics.json" "$tmp/g/binary-relevance/l2-$best/seed-1/metrics.json" ||
  fail "the grid row's metrics are not its chosen run's"
[ "$(jq '.runs | length' "$tmp/g/binary-relevance/seed-1/grid.json")" -eq 3 ] || fail "grid.json lacks runs"
[ ! -d "$tmp/g/dmnc-late/l2-0.1" ] || fail "the grid reached a row that is not a bag of codes"
grep -q '^binary-relevance: L2 chosen from {1e-5 1e-3 0.1} on validation macro AUC, per seed:' "$tmp/g.md" ||
  fail "the table does not say which L2 was chosen"
# A grid over a folder that holds a plain run of the row is refused; a bad grid value is exit 2.
if tools/mimic_table.sh "$tmp/t" --data "$tmp/ehr" --seeds 1 --models binary-relevance --l2-grid "1e-3" \
  > /dev/null 2> "$tmp/mixed.err"; then fail "a grid over a plain run was not refused"; fi
grep -q "trained without a grid" "$tmp/mixed.err" || fail "the refusal does not say why"
set +e
tools/mimic_table.sh "$tmp/g" --data "$tmp/ehr" --l2-grid "1e-3 big" > /dev/null 2> "$tmp/badgrid.err"
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "non-negative numbers, got 'big'" "$tmp/badgrid.err" || fail "a bad grid value gave $rc"
# A missing table: the run fails, its log names it, the script exits 1.
rm "$tmp/ehr/PROCEDURES_ICD.csv"
if tools/mimic_table.sh "$tmp/bad" --data "$tmp/ehr" --seeds 1 --models binary-relevance \
  > /dev/null 2> "$tmp/bad.err"; then fail "a missing table did not stop the table"; fi
grep -q "missing table PROCEDURES_ICD" "$tmp/bad/binary-relevance/seed-1.log" ||
  fail "the run's log does not name the missing table"
echo "mimic_table test: ok"
