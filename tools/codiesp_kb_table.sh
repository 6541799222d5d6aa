#!/usr/bin/env bash
# The tables of docs/results/codiesp-kb.md from the runs of tools/codiesp_kb_run.sh: test macro
# AUC-ROC, P@5 and hamming loss (the C-MemNN paper's Table 3 measures) as mean ± sd over the seeds
# present, with the paper's MIMIC-III figures beside ours, the KB-free baseline, and the KB
# ablation (with the empty-pages control, kb_variant none, where those runs exist); wall time per
# run. Needs jq.
#   tools/codiesp_kb_table.sh [DIR]      (default runs/codiesp-kb)
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
out="${1:-runs/codiesp-kb}"
command -v jq >/dev/null || { echo "codiesp_kb_table.sh: needs jq" >&2; exit 2; }

# mean ± sd (sample sd) of the numbers on stdin; "—" when there are none.
mean_sd() { awk '{x[NR]=$1; s+=$1} END{if(NR==0){printf "—"; exit} m=s/NR; for(i=1;i<=NR;i++) v+=(x[i]-m)^2; printf "%.3f ± %.3f", m, (NR>1? sqrt(v/(NR-1)) : 0)}'; }
# cell DIR KEY: mean ± sd of KEY over DIR/seed*/metrics.json
cell() { local f; for f in "$1"/seed*/metrics.json; do [ -f "$f" ] && jq -r ".$2" "$f"; done | mean_sd; }
seeds() { ls -d "$1"/seed*/ 2>/dev/null | while read -r d; do [ -f "$d/metrics.json" ] && echo x; done | wc -l; }
wall() { cat "$1"/seed*/wall_seconds 2>/dev/null | awk '{s+=$1} END{if(NR) printf "%.0f", s/NR; else printf "—"}'; }

# The paper's Table 3 (MIMIC-III, Wikipedia pages): AUC P@5 HL for 50 labels, then 100 labels.
declare -A paper=(
  [memn2n-kb-h3]="0.759 0.32 0.06 0.664 0.23 0.15" [kv-memnn-h3]="0.761 0.36 0.05 0.679 0.24 0.14"
  [a-memnn-h3]="0.762 0.36 0.06 0.675 0.23 0.14" [c-memnn-h3]="0.785 0.39 0.05 0.697 0.27 0.12"
  [memn2n-kb-h4]="0.760 0.33 0.04 0.672 0.24 0.15" [kv-memnn-h4]="0.776 0.35 0.04 0.683 0.24 0.13"
  [a-memnn-h4]="0.775 0.37 0.03 0.689 0.23 0.11" [c-memnn-h4]="0.795 0.42 0.02 0.705 0.27 0.09"
  [memn2n-kb-h5]="0.761 0.34 0.04 0.683 0.25 0.14" [kv-memnn-h5]="0.775 0.36 0.03 0.697 0.25 0.11"
  [a-memnn-h5]="0.804 0.40 0.02 0.720 0.29 0.11" [c-memnn-h5]="0.833 0.42 0.01 0.767 0.32 0.05")

echo "| hops | model | LS-50 AUC (macro) | P@5 | HL | LS-100 AUC (macro) | P@5 | HL | seeds | s/run | paper 50: AUC / P@5 / HL | paper 100: AUC / P@5 / HL |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for h in 3 4 5; do
  for m in memn2n-kb kv-memnn a-memnn c-memnn; do
    a="$out/ls50/paper/$m-h$h" b="$out/ls100/paper/$m-h$h"
    read -r p1 p2 p3 p4 p5 p6 <<<"${paper[$m-h$h]}"
    echo "| $h | $m | $(cell "$a" auc_macro) | $(cell "$a" p_at_5) | $(cell "$a" hamming_loss) | $(cell "$b" auc_macro) | $(cell "$b" p_at_5) | $(cell "$b" hamming_loss) | $(seeds "$a") / $(seeds "$b") | $(wall "$a") / $(wall "$b") | $p1 / $p2 / $p3 | $p4 / $p5 / $p6 |"
  done
done
a="$out/ls50/paper/bow-lr" b="$out/ls100/paper/bow-lr"
echo "| — | bow-lr (no KB) | $(cell "$a" auc_macro) | $(cell "$a" p_at_5) | $(cell "$a" hamming_loss) | $(cell "$b" auc_macro) | $(cell "$b" p_at_5) | $(cell "$b" hamming_loss) | $(seeds "$a") / $(seeds "$b") | $(wall "$a") / $(wall "$b") | — | — |"
echo
echo "| KB variant (5 hops, LS-50) | model | AUC (macro) | P@5 | HL | seeds |"
echo "|---|---|---|---|---|---|"
for v in paper k1 k2 k3 none; do
  for m in c-memnn memn2n-kb; do
    d="$out/ls50/$v/$m-h5"
    [ -d "$d" ] || continue
    echo "| $v | $m | $(cell "$d" auc_macro) | $(cell "$d" p_at_5) | $(cell "$d" hamming_loss) | $(seeds "$d") |"
  done
done
