#!/usr/bin/env bash
# Chooses ebmrnn's configuration by K-fold cross-validation over set-a's training and validation
# stays (3,600; the task's cv_folds / cv_fold settings), never looking at the test split or set-b:
# each candidate below is trained once per fold (seed 1) and the candidate with the highest mean
# validation AUC-ROC over the folds (each fold's best epoch, best.json) is chosen.
#   tools/physionet_cv.sh [OUT_DIR] [--folds K] [--jobs J] [extra train flags...]
# Runs go to OUT_DIR/CANDIDATE/foldF (default OUT_DIR runs/physionet2012-cv), J at a time (default
# 2), each with --threads 1; a run with metrics.json is kept, so the script completes when run
# again. Prints a markdown table (per fold, mean, sd, wall time) and the choice. K defaults to 3
# (1,200 validation stays, about 166 deaths, a fold): 5 folds took too long on the shared machine
# (about 14 minutes a run under its load), so the 5-fold runs were stopped after 19 of their 30
# epochs, before any result was read, and the choice made with 3.
#
# The candidates were declared here before any fold was run (docs/ebmrnn.md, "Model selection"):
# the paper's equations and our logit_scale 5, at the registered recipe (SGD lr 0.03, momentum 0.9,
# clip 5, batch 32, 30 epochs).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
declare -A flags=([paper]="--logit-scale 1" [scale5]="--logit-scale 5")
candidates="paper scale5"

out="runs/physionet2012-cv"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then out=$1; shift; fi
folds=3 jobs=2
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --folds) folds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    *) extra+=("$1"); shift ;;
  esac
done
for v in "$folds" "$jobs"; do
  case "$v" in '' | *[!0-9]* | 0) echo "physionet_cv.sh: --folds and --jobs take positive numbers, got '$v'" >&2; exit 2 ;; esac
done
bin="${MEMGRAD_BIN:-${MEMGRAD_BUILD_DIR:-build}/memgrad}"
[ -x "$bin" ] || tools/setup.sh >&2
mkdir -p "$out"

# One fold of one candidate, timed; its stderr goes to the run's folder.
run_one() {
  local c=$1 f=$2 d="$out/$1/fold$2" st
  mkdir -p "$d"
  st=$(date +%s.%N)
  # shellcheck disable=SC2086 # the candidate's flags are words
  "$bin" train --task physionet2012 --model ebmrnn --seed 1 --cv-folds "$folds" --cv-fold "$f" \
    ${flags[$c]} --out "$d" --overwrite --threads 1 --quiet ${extra[@]+"${extra[@]}"} \
    >/dev/null 2>"$d/stderr.log" || { echo "physionet_cv.sh: $d failed (see $d/stderr.log)" >&2; return 1; }
  awk -v a="$st" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f\n", b - a}' > "$d/wall_seconds"
  echo "$c fold $f done in $(cat "$d/wall_seconds") s" >&2
}

running=0
for c in $candidates; do
  for f in $(seq 0 $((folds - 1))); do
    if [ -f "$out/$c/fold$f/metrics.json" ]; then echo "$c fold $f: kept" >&2; continue; fi
    if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
    run_one "$c" "$f" &
    running=$((running + 1))
  done
done
wait

# The validation AUC-ROC of a run's kept epoch.
best() { tr -d '\n ' < "$1/best.json" | sed -n 's/.*"value":\([0-9.eE+-]*\).*/\1/p'; }
printf "| candidate | flags |"; for f in $(seq 0 $((folds - 1))); do printf " fold %d |" "$f"; done
printf " mean ± sd | wall per run |\n|---|---|"; for _ in $(seq 1 "$folds"); do printf -- "---|"; done; printf -- "---|---|\n"
chosen="" chosen_mean=-1
for c in $candidates; do
  vals="" walls=""
  printf "| %s | \`%s\` |" "$c" "${flags[$c]}"
  for f in $(seq 0 $((folds - 1))); do
    v=$(best "$out/$c/fold$f")
    [ -n "$v" ] || { echo "physionet_cv.sh: no value in $out/$c/fold$f/best.json" >&2; exit 1; }
    vals+="$v"$'\n' walls+="$(cat "$out/$c/fold$f/wall_seconds")"$'\n'
    printf " %.4f (%s) |" "$v" "$(tr -d '\n ' < "$out/$c/fold$f/best.json" | sed -n 's/.*"epoch":\([0-9]*\).*/\1/p')"
  done
  m=$(echo -n "$vals" | awk '{x[NR]=$1; s+=$1} END{m=s/NR; for(i=1;i<=NR;i++) v+=(x[i]-m)^2; printf "%.4f ± %.4f", m, (NR>1? sqrt(v/(NR-1)) : 0)}')
  printf " %s | %s s |\n" "$m" "$(echo -n "$walls" | sort -n | sed -n '1p;$p' | paste -sd- -)"
  if awk -v a="${m%% *}" -v b="$chosen_mean" 'BEGIN{exit !(a > b)}'; then chosen=$c chosen_mean=${m%% *}; fi
done
echo
echo "chosen by mean validation AUC-ROC over $folds folds: $chosen (${flags[$chosen]})"
