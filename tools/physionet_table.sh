#!/usr/bin/env bash
# Trains the in-hospital mortality baselines on PhysioNet 2012 set-a (train split; the epoch kept
# by validation AUC-ROC) for several seeds and prints set-b AUC-ROC and AUC-PR as mean ± sd over
# the seeds, each seed's 95% bootstrap intervals, the set-a validation and test AUC-ROC, and the
# wall time per run (markdown), next to the EBmRNN paper's Table 1 (MIMIC-III benchmark numbers,
# another cohort: not comparable one to one).
#   tools/physionet_table.sh [OUT_DIR] [--models "logreg gru"] [--seeds N] [extra train flags...]
# Runs go to OUT_DIR/MODEL/seedS (default OUT_DIR runs/physionet2012), one at a time, each with
# --threads 1 (the machine is shared). A run whose directory has metrics.json is kept; one with a
# checkpoint but no metrics.json (interrupted) is resumed; so the script completes a table when run
# again. Each run's wall time is written to its directory (wall_seconds) and to stderr.
# Needs the data in ../shared/data/physionet-challenge-2012 (or pass --data DIR).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
out="runs/physionet2012"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then out=$1; shift; fi
models="logreg gru" seeds=5
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --models) models=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    *) extra+=("$1"); shift ;;
  esac
done
case "$seeds" in '' | *[!0-9]* | 0) echo "physionet_table.sh: --seeds takes a positive number, got '$seeds'" >&2; exit 2 ;; esac
bin="${MEMGRAD_BIN:-${MEMGRAD_BUILD_DIR:-build}/memgrad}"
[ -x "$bin" ] || tools/setup.sh >&2
mkdir -p "$out"

for m in $models; do
  for s in $(seq 1 "$seeds"); do
    d="$out/$m/seed$s"
    if [ -f "$d/metrics.json" ]; then echo "$m seed $s: kept $d" >&2; continue; fi
    st=$(date +%s.%N)
    if [ -f "$d/checkpoint.safetensors" ]; then
      echo "$m seed $s: resuming $d" >&2
      "$bin" train --resume "$d" --threads 1 --quiet >/dev/null 2>"$d/stderr.log"
    else
      mkdir -p "$d"
      "$bin" train --task physionet2012 --model "$m" --seed "$s" --out "$d" --overwrite --threads 1 \
        --quiet ${extra[@]+"${extra[@]}"} >/dev/null 2>"$d/stderr.log"
    fi
    took=$(awk -v a="$st" -v b="$(date +%s.%N)" -v p="$(cat "$d/wall_seconds" 2>/dev/null || echo 0)" \
      'BEGIN{printf "%.1f", p + b - a}')
    echo "$took" > "$d/wall_seconds"
    echo "$m seed $s done in $took s" >&2
  done
done

# A number field of one split's object in a metrics.json: field FILE SPLIT KEY [INDEX of an array].
field() {
  local obj v
  obj=$(tr -d '\n ' < "$1" | sed -n "s/.*\"$2\":{\([^}]*\)}.*/\1/p")
  if [ $# -ge 4 ]; then
    v=$(echo "$obj" | sed -n "s/.*\"$3\":\[\([^]]*\)\].*/\1/p" | cut -d, -f$(($4 + 1)))
  else
    v=$(echo "$obj" | sed -n "s/.*\"$3\":\([0-9.eE+-]*\).*/\1/p")
  fi
  [ -n "$v" ] || { echo "physionet_table.sh: no $2.$3 in $1" >&2; exit 1; }
  echo "$v"
}
# mean ± sd (sample sd, n - 1) of the numbers on stdin.
mean_sd() { awk '{x[NR]=$1; s+=$1} END{m=s/NR; for(i=1;i<=NR;i++) v+=(x[i]-m)^2; printf "%.4f ± %.4f", m, (NR>1? sqrt(v/(NR-1)) : 0)}'; }

declare -A paper=([logreg]=0.8485 [gru]=0.8575 [lstm]=0.8542 [emrnn]=0.8507 [ebmrnn]=0.8612)
printf "| model | set-b AUC-ROC (mean ± sd, %d seeds) | set-b AUC-PR | per seed: set-b AUC-ROC [95%% CI] | set-a valid / test AUC-ROC (means) | wall time per run | paper Table 1 AUC-ROC (MIMIC-III benchmark) |\n" "$seeds"
printf "|---|---|---|---|---|---|---|\n"
for m in $models; do
  roc="" pr="" per="" valid="" test="" wall=""
  for s in $(seq 1 "$seeds"); do
    f="$out/$m/seed$s/metrics.json"
    roc+="$(field "$f" set_b auc_roc)"$'\n'
    pr+="$(field "$f" set_b auc_pr)"$'\n'
    valid+="$(field "$f" valid auc_roc)"$'\n'
    test+="$(field "$f" test auc_roc)"$'\n'
    wall+="$(cat "$out/$m/seed$s/wall_seconds")"$'\n'
    per+=$(printf "%s%.4f [%.4f, %.4f]" "${per:+; }" "$(field "$f" set_b auc_roc)" \
      "$(field "$f" set_b auc_roc_ci95 0)" "$(field "$f" set_b auc_roc_ci95 1)")
  done
  printf "| %s | %s | %s | %s | %.4f / %.4f | %s s | %s |\n" "$m" \
    "$(printf "%s" "$roc" | mean_sd)" "$(printf "%s" "$pr" | mean_sd)" "$per" \
    "$(printf "%s" "$valid" | awk '{s+=$1} END{print s/NR}')" \
    "$(printf "%s" "$test" | awk '{s+=$1} END{print s/NR}')" \
    "$(printf "%s" "$wall" | awk '{s+=$1} END{printf "%.0f", s/NR}')" "${paper[$m]:-—}"
done
