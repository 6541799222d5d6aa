#!/usr/bin/env bash
# Trains the models of the DMNC paper's disease progression table (Table 5) on
# `mimic-progression`, once per seed (the seed is both the patient split's and the training's),
# and prints mean ± sd over the seeds of P@1/2/3 (and micro AUC) next to the paper's (markdown),
# with the two baselines of the same splits as rows of their own: "repeat the patient's history"
# and "frequency on train".
#   tools/progression_table.sh [OUT_DIR] [--data DIR] [--seeds "1 2 3"] [--jobs J]
#                              [--models "m1 ..."] [--epochs E] [extra memgrad train flags...]
# Rows: dmnc-late and dmnc-early with persistent memory, dmnc-late-flush (the same model with
# memory flushed every admission: the ablation), wlas, deepcare (state carried across admissions)
# and deepcare-alone (not carried); on request (--models) dmnc-late-unroll and deepcare-unroll,
# carried and trained through 4 admissions per update (--unroll 4: the loss backpropagates across
# admissions). On data with follow pairs (`memgrad ehr-gen --follow-pairs K`, read with
# --categories false) the table has a column for the follow rule's AUC (metrics.json's
# follow_rule.auc_macro), and the oracle's is printed under it. Runs go to OUT_DIR/ROW/seed-S
# (default runs/progression-table), J at a time (default 1, each --threads 1). A run whose
# directory has metrics.json is kept, so an interrupted table completes on a second call. Each
# run's wall time is written to its wall_seconds and its CPU time (user + system) to
# cpu_seconds; the table's wall time is printed last. Hyper-parameters: DMNC section 4.3
# (embedding 20, hidden 64, word 32, 32 slots, one read head), Adam 1e-3 (deepcare 1e-2), batch 8
# patients (the demos have 9-32 training patients with two admissions or more), E epochs (default
# 30) with the epoch of best validation micro AUC kept (or of the follow rule's AUC: extra flag
# --select-on follow_auc).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
out="runs/progression-table"
data="../shared/data/mimic-iv-demo"
seeds="1 2 3 4 5"
jobs=1
epochs=30
models="dmnc-late dmnc-late-flush dmnc-early wlas deepcare deepcare-alone"
# shellcheck source=tools/table_lib.sh
. tools/table_lib.sh
table_setup "$@"

row_model() {
  case "$1" in
    dmnc-late-flush | dmnc-late-unroll) echo dmnc-late ;;
    deepcare-alone | deepcare-unroll) echo deepcare ;;
    *) echo "$1" ;;
  esac
}
row_flags() {
  local common="--batch 8 --iterations 0 --epochs $epochs --lr-decay-start 0"
  local rnn="$common --embedding 20 --hidden 64 --lr 1e-3"
  local mem="$rnn --word-size 32 --memory-slots 32 --read-heads 1"
  case "$1" in
    dmnc-late | dmnc-early) echo "$mem --persistent-memory true" ;;
    dmnc-late-flush) echo "$mem --persistent-memory false" ;;
    dmnc-late-unroll) echo "$mem --persistent-memory true --unroll 4" ;;
    wlas) echo "$rnn" ;;
    deepcare) echo "$common --embedding 20 --hidden 64 --lr 1e-2 --carry-state true" ;;
    deepcare-alone) echo "$common --embedding 20 --hidden 64 --lr 1e-2 --carry-state false" ;;
    deepcare-unroll) echo "$common --embedding 20 --hidden 64 --lr 1e-2 --carry-state true --unroll 4" ;;
  esac
}

train_one() { train_row mimic-progression "$1" "$2"; }

start=$(date +%s.%N)
run_all || exit 1

# Le et al. 2018, Table 5 (P@1, P@2, P@3 in %: diabetes cohort | mental health cohort).
paper() {
  case "$1" in
    deepcare) echo "66.2 / 59.6 / 53.7 | 52.7 / 46.9 / 40.2" ;;
    wlas) echo "65.9 / 60.8 / 56.5 | 51.8 / 48.9 / 45.7" ;;
    dmnc-late) echo "66.5 / 61.3 / 57.0 | 52.7 / 49.4 / 46.2" ;;
    dmnc-early) echo "67.6 / 61.2 / 56.9 | 53.6 / 50.0 / 47.1" ;;
    *) echo "- | -" ;;
  esac
}
set -- $seeds
echo "mimic-progression on $data, seeds: $seeds (mean ± sd over $# patient splits, test steps, %)"
echo
first=${models%% *}
follow=""  # the follow rule's column, when the runs' data has follow pairs
if jq -e '.follow_rule' "$out/$first/seed-${seeds%% *}/metrics.json" >/dev/null; then follow=1; fi
echo "| model | P@1 | P@2 | P@3 | AUC micro |${follow:+ follow AUC |} CPU s/run | s/run | paper diabetes P@1 / P@2 / P@3 | paper mental |"
echo "|---|---|---|---|---|${follow:+---|}---|---|---|---|"
for m in $models; do
  echo "| $m | $(stat "$m" .p_at_1) | $(stat "$m" .p_at_2) | $(stat "$m" .p_at_3) | $(stat "$m" .auc_micro) |${follow:+ $(stat "$m" .follow_rule.auc_macro) |} $(seed_mean "$m" cpu_seconds 1) | $(seed_mean "$m" wall_seconds) | $(paper "$m") |"
done
for b in history frequency; do
  # The follow column: history's own AUC; frequency scores B the same at every step (AUC 50).
  fcol=$([ "$b" = history ] && stat "$first" .follow_rule.history_auc_macro || echo "50.0 (constant)")
  echo "| $b | $(stat "$first" ".$b.p_at_1") | $(stat "$first" ".$b.p_at_2") | $(stat "$first" ".$b.p_at_3") | $(stat "$first" ".$b.auc_micro") |${follow:+ $fcol |} - | - | - | - |"
done
if [ -n "$follow" ]; then
  echo "| oracle (trigger in admission a-2) | - | - | - | - | $(stat "$first" .follow_rule.oracle_auc_macro) | - | - | - | - |"
fi
echo
awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "table wall time: %.0f s\n", b-a}'
