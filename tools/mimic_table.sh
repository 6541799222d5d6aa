#!/usr/bin/env bash
# Trains the models of the DMNC paper's drug prescription table (Table 3) on `mimic-drugs`, once
# per seed (the seed is both the patient split's and the training's), and prints mean ± sd over
# the seeds of AUC (macro, micro), F1 and P@1/2/5 next to the paper's (markdown), with the drug
# popularity baseline of the same splits as a row of its own.
#   tools/mimic_table.sh [OUT_DIR] [--data DIR] [--seeds "1 2 3"] [--jobs J] [--models "m1 ..."]
#                        [--epochs E] [--batch B] [extra memgrad train flags...]
# Rows: dmnc-late dmnc-early dnc lstm dual-lstm wlas binary-relevance classifier-chains, and
# br-dx / br-proc (binary relevance on one view, Table 3's single-view rows). Rows not run by
# default: Table 3's other single-view rows, cc-dx / cc-proc, lstm-dx / lstm-proc, dnc-dx /
# dnc-proc (--views dx|proc), and, for data whose patients have several admissions (the synthetic EHR's history rules):
# dmnc-late-persistent (batch rows are patients, memory carried across their admissions:
# --patient-rows true --persistent-memory true) and deepcare (patient rows, state carried). Runs go to
# OUT_DIR/ROW/seed-S (default runs/mimic-table), J at a time (default 2, each --threads 1). A run
# whose directory has metrics.json is kept, so an interrupted table completes on a second call.
# Each run's wall time is written to its wall_seconds and its CPU time (user + system) to
# cpu_seconds; the table's wall time is printed last.
# Hyper-parameters: DMNC section 4.2 (embedding 64, hidden 64, word 64, 16 slots, 32 for the
# view-concatenated DNC, one read head), Adam 1e-3, batch 16 (the demo has ~70 training
# admissions; --batch B for larger data), E epochs (default 60) with the epoch of best validation
# micro AUC kept. On ehr-gen data the table adds the AUC over each planted rule type's drugs.
# --l2-grid "V1 V2 ..." grid-searches the bag-of-codes rows (binary-relevance, classifier-chains,
# br-dx, br-proc, cc-dx, cc-proc) as the paper does its traditional baselines: per row and seed
# one run per L2 penalty V (OUT/ROW/l2-V/seed-S; --select-on auc_macro, --patience 5), and the
# row's result is the run of best validation macro AUC (ties: the first in the list). OUT/ROW/seed-S then holds its
# metrics.json, grid.json (every penalty's validation macro AUC, its kept epoch, the choice) and
# the wall and CPU seconds of the whole grid; the test split is never looked at to choose.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
out="runs/mimic-table"
data="../shared/data/mimic-iii-demo"
seeds="1 2 3 4 5"
jobs=2
epochs=60
batch=16
models="dmnc-late dmnc-early dnc lstm dual-lstm wlas binary-relevance classifier-chains br-dx br-proc"
grid=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --l2-grid)
      [ $# -ge 2 ] || { echo "mimic_table.sh: --l2-grid takes a value" >&2; exit 2; }
      grid=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
for v in $grid; do
  [[ "$v" =~ ^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]] ||
    { echo "mimic_table.sh: --l2-grid takes non-negative numbers, got '$v'" >&2; exit 2; }
done
if [ -n "$grid" ] && [ -z "${grid// /}" ]; then echo "mimic_table.sh: --l2-grid is empty" >&2; exit 2; fi
# shellcheck source=tools/table_lib.sh
. tools/table_lib.sh
table_setup ${args[@]+"${args[@]}"}

bag_of_codes() {
  case "$1" in binary-relevance | classifier-chains | br-dx | br-proc | cc-dx | cc-proc) return 0 ;; esac
  return 1
}

# A grid run's row is ROW/l2-V: the model and flags of ROW, with its penalty.
row_model() {
  case "${1%%/*}" in
    br-dx | br-proc) echo binary-relevance ;;
    cc-dx | cc-proc) echo classifier-chains ;;
    lstm-dx | lstm-proc) echo lstm ;;
    dnc-dx | dnc-proc) echo dnc ;;
    dmnc-late-persistent) echo dmnc-late ;;
    *) echo "${1%%/*}" ;;
  esac
}
row_flags() {
  case "$1" in */l2-*) echo "$(row_flags "${1%%/*}") --l2 ${1##*/l2-} --select-on auc_macro --patience 5"; return ;; esac
  local common="--embedding 64 --hidden 64 --batch $batch --iterations 0 --epochs $epochs --lr-decay-start 0"
  local rnn="$common --lr 1e-3"
  case "$1" in
    dmnc-late | dmnc-early) echo "$rnn --word-size 64 --memory-slots 16 --read-heads 1" ;;
    dmnc-late-persistent)
      echo "$rnn --word-size 64 --memory-slots 16 --read-heads 1 --patient-rows true --persistent-memory true" ;;
    deepcare) echo "$common --lr 1e-2 --patient-rows true" ;;
    dnc) echo "$rnn --word-size 64 --memory-slots 32 --read-heads 1" ;;
    dnc-dx | dnc-proc) echo "$rnn --word-size 64 --memory-slots 32 --read-heads 1 --views ${1#dnc-}" ;;
    lstm | dual-lstm | wlas) echo "$rnn" ;;
    lstm-dx | lstm-proc) echo "$rnn --views ${1#lstm-}" ;;
    br-dx | cc-dx) echo "--views dx" ;;
    br-proc | cc-proc) echo "--views proc" ;;
  esac
}

# train_one ROW SEED: the row's run, or with --l2-grid on a bag-of-codes row its grid and the choice.
train_one() {
  local m=$1 s=$2 v d="$out/$1/seed-$2" runs="" best="" wall=0 cpu=0 r auc
  if [ -z "$grid" ] || ! bag_of_codes "$m"; then train_row mimic-drugs "$m" "$s"; return; fi
  if [ -f "$d/metrics.json" ] && [ ! -f "$d/grid.json" ]; then
    echo "mimic_table.sh: $d holds a run trained without a grid; give the grid table its own OUT_DIR" >&2
    return 1
  fi
  for v in $grid; do train_row mimic-drugs "$m/l2-$v" "$s" || return 1; done
  for v in $grid; do
    r="$out/$m/l2-$v/seed-$s"
    auc=$(jq -r 'select(.metric == "valid_auc_macro") | .value' "$r/best.json")
    [ -n "$auc" ] || { echo "mimic_table.sh: $r/best.json is not a macro AUC selection" >&2; return 1; }
    runs="$runs{\"l2\": $v, \"valid_auc_macro\": $auc, \"epoch\": $(jq .epoch "$r/best.json")},"
    if [ -z "$best" ] || awk -v a="$auc" -v b="$(jq .value "$out/$m/l2-$best/seed-$s/best.json")" 'BEGIN{exit !(a > b)}'; then
      best=$v
    fi
    wall=$(awk -v a="$wall" -v b="$(cat "$r/wall_seconds")" 'BEGIN{printf "%.1f", a + b}')
    cpu=$(awk -v a="$cpu" -v b="$(cat "$r/cpu_seconds")" 'BEGIN{printf "%.1f", a + b}')
  done
  mkdir -p "$d"
  echo "{\"select_on\": \"valid_auc_macro\", \"chosen_l2\": $best, \"runs\": [${runs%,}]}" | jq . >"$d/grid.json.tmp"
  echo "$wall" >"$d/wall_seconds"
  echo "$cpu" >"$d/cpu_seconds"
  cp "$out/$m/l2-$best/seed-$s/metrics.json" "$d/metrics.json.tmp"
  mv "$d/grid.json.tmp" "$d/grid.json"
  mv "$d/metrics.json.tmp" "$d/metrics.json"
  echo "$m seed $s: L2 $best chosen from $grid" >&2
}

start=$(date +%s.%N)
run_all || exit 1
# Le et al. 2018, Table 3 (MIMIC-III, %: AUC, F1, P@1, P@2, P@5; both views unless said).
paper() {
  case "$1" in
    binary-relevance) echo "84.1 | 70.3 | 81.0 | 78.2 | 72.3" ;;
    br-dx) echo "82.6 | 69.1 | 79.9 | 77.1 | 70.3" ;;
    br-proc) echo "81.8 | 69.4 | 82.6 | 80.1 | 73.6" ;;
    cc-dx) echo "66.8 | 63.8 | 68.3 | 66.8 | 61.1" ;;
    cc-proc) echo "63.4 | 61.7 | 83.7 | 80.3 | 71.9" ;;
    lstm-dx) echo "84.9 | 70.9 | 90.8 | 86.7 | 79.1" ;;
    lstm-proc) echo "83.9 | 70.8 | 88.1 | 86.0 | 78.4" ;;
    dnc-dx) echo "85.4 | 71.4 | 90.0 | 86.7 | 79.8" ;;
    dnc-proc) echo "83.2 | 70.4 | 88.4 | 85.8 | 78.7" ;;
    classifier-chains) echo "64.6 | 63.0 | 84.6 | 81.5 | 74.2" ;;
    lstm) echo "85.8 | 72.1 | 91.6 | 86.8 | 80.5" ;;
    dnc) echo "86.4 | 72.4 | 90.9 | 87.4 | 80.6" ;;
    dual-lstm) echo "85.4 | 71.4 | 90.6 | 87.1 | 80.5" ;;
    wlas) echo "86.6 | 72.5 | 91.9 | 88.1 | 80.9" ;;
    dmnc-late) echo "87.4 | 73.2 | 92.4 | 88.9 | 82.6" ;;
    dmnc-early) echo "87.6 | 73.4 | 92.1 | 89.9 | 82.5" ;;
    *) echo "- | - | - | - | -" ;;
  esac
}
set -- $seeds
echo "mimic-drugs on $data, seeds: $seeds (mean ± sd over $# patient splits, test admissions, %)"
echo
echo "| model | AUC macro | AUC micro | F1 | P@1 | P@2 | P@5 | s/run | paper AUC | F1 | P@1 | P@2 | P@5 |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
first=""
for m in $models; do
  [ -n "$first" ] || first=$m
  echo "| $m | $(stat "$m" .auc_macro) | $(stat "$m" .auc_micro) | $(stat "$m" .f1) | $(stat "$m" .p_at_1) | $(stat "$m" .p_at_2) | $(stat "$m" .p_at_5) | $(seed_mean "$m" wall_seconds) | $(paper "$m") |"
done
echo "| popularity | $(stat "$first" .popularity.auc_macro) | $(stat "$first" .popularity.auc_micro) | $(stat "$first" .popularity.f1) | $(stat "$first" .popularity.p_at_1) | $(stat "$first" .popularity.p_at_2) | $(stat "$first" .popularity.p_at_5) | - | - | - | - | - | - |"
echo
# ehr-gen data: macro AUC over the drugs of each planted rule type (metrics.json rule_auc_macro).
set -- $models
if [ "$(jq -r '.rule_auc_macro // empty | length' "$out/$1/seed-${seeds%% *}/metrics.json")" != "" ]; then
  echo "| model | AUC, drugs of a dx rule | proc rule | dx and proc (\"and\") | dx or proc, not both (\"either\") | earlier admission (history) | priority | base rate |"
  echo "|---|---|---|---|---|---|---|---|"
  for m in $models; do
    r=.rule_auc_macro
    echo "| $m | $(stat "$m" $r.dx) | $(stat "$m" $r.proc) | $(stat "$m" $r.and) | $(stat "$m" $r.either) | $(stat "$m" $r.history) | $(stat "$m" $r.priority) | $(stat "$m" $r.base) |"
  done
  echo
fi
if [ -n "$grid" ]; then
  for m in $models; do
    bag_of_codes "$m" || continue
    chosen=""
    for s in $seeds; do chosen="$chosen $(jq .chosen_l2 "$out/$m/seed-$s/grid.json")"; done
    echo "$m: L2 chosen from {$grid} on validation macro AUC, per seed:$chosen (s/run: the whole grid)"
  done
  echo
fi
awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "table wall time: %.0f s\n", b-a}'
