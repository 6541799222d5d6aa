#!/usr/bin/env bash
# Trains the GRNN paper's models on CodiEsp (task codiesp, label set top-50 unless flags say
# otherwise; the epoch kept by dev micro AUC-PR) for several seeds and prints the test metrics of
# the paper's tables as mean ± sd over the seeds, with the wall time per run (markdown).
#   tools/codiesp_table.sh [OUT_DIR] [--runs "NAME:MODEL[:FLAGS] ..."] [--seeds N] [--jobs J]
#                          [extra train flags...]
# Default runs: grnn, bigrnn, text-gru (128), text-gru matched to grnn's parameter count (168
# for 50 labels: models/text/text_gru.hpp), text-bigru (64 each way). FLAGS inside a run are
# comma-separated (e.g. "gru-168:text-gru:--hidden,168"). Runs go to OUT_DIR/NAME/seedS (default
# runs/codiesp), J at a time (default 2), each with --threads 1. A run whose directory has
# metrics.json is kept, so the script completes a table when run again.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
out="runs/codiesp"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then out=$1; shift; fi
runs="grnn:grnn bigrnn:bigrnn gru-128:text-gru gru-168:text-gru:--hidden,168 bigru-64:text-bigru"
seeds=5 jobs=2
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    *) extra+=("$1"); shift ;;
  esac
done
case "$seeds$jobs" in *[!0-9]*) echo "codiesp_table.sh: --seeds and --jobs take numbers" >&2; exit 2 ;; esac
bin="${MEMGRAD_BIN:-build/memgrad}"
[ -x "$bin" ] || tools/setup.sh >&2
mkdir -p "$out"

one() {  # NAME MODEL FLAGS SEED
  local dir="$out/$1/seed$4" flags=()
  [ -f "$dir/metrics.json" ] && return 0
  [ -n "$3" ] && IFS=, read -r -a flags <<< "$3"
  mkdir -p "$out/$1"
  local start=$SECONDS
  "$bin" train --task codiesp --model "$2" "${flags[@]}" --seed "$4" --threads 1 --quiet \
    --out "$dir" --overwrite "${extra[@]}" > "$dir.log" 2>&1 || { echo "failed: $dir ($dir.log)" >&2; return 1; }
  echo $((SECONDS - start)) > "$dir/wall_seconds"
  echo "done: $dir ($((SECONDS - start)) s)" >&2
}
for s in $(seq 1 "$seeds"); do
  for r in $runs; do
    IFS=: read -r name model flags <<< "$r"
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    one "$name" "$model" "${flags:-}" "$s" &
  done
done
wait

keys="auc_roc_micro auc_roc_macro auc_pr_micro auc_pr_macro p_at_8 r_at_8 p_at_5 f1_micro"
# P@40 and R@40 where the label set has 40 labels or more (the task writes them then).
first=$(ls "$out"/*/seed*/metrics.json 2>/dev/null | head -1)
[ -n "$first" ] && [ "$(jq -r '.p_at_40 // empty' "$first")" != "" ] && keys="$keys p_at_40 r_at_40"
printf '| run | seeds |'; for k in $keys; do printf ' %s |' "$k"; done; printf ' wall s / run |\n'
printf '|---|---|'; for k in $keys; do printf -- '---|'; done; printf -- '---|\n'
for r in $runs; do
  IFS=: read -r name model flags <<< "$r"
  files=("$out/$name"/seed*/metrics.json)
  [ -f "${files[0]}" ] || continue
  printf '| %s | %d |' "$name" "${#files[@]}"
  for k in $keys; do
    jq -r ".$k" "${files[@]}" | awk '{s+=$1; q+=$1*$1; n++} END {m=s/n; v=n>1?(q-n*m*m)/(n-1):0; if (v<0) v=0; printf " %.3f ± %.3f |", m, sqrt(v)}'
  done
  cat "$out/$name"/seed*/wall_seconds 2>/dev/null | awk '{s+=$1; n++} END {printf " %.0f |\n", n ? s/n : 0}'
done
