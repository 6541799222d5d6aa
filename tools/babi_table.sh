#!/usr/bin/env bash
# Trains MemN2N (3 hops, PE LS RN, adjacent tying; the official recipe) on each of the 20 bAbI 1k
# tasks and prints the per-task test error next to the paper's PE LS RN column (markdown).
#   tools/babi_table.sh [OUT_DIR] [--runs K] [--select valid|train] [extra memgrad train flags...]
# --runs K (default 1) trains K seeds per task (--seed S, default 1, is the first: S..S+K-1) and
# keeps, per task, the run with the lowest validation error (--select valid, the default) or the
# lowest training error (--select train, the official code's rule), ties going to the other error
# and then to the lower seed. The test error is never used to select. The paper reports the best
# of 10 runs per task. Runs go to OUT_DIR/taskT (K = 1) or OUT_DIR/taskT/seedS.
# Needs the data in ../shared/data/babi (or pass --data DIR). Runs whose directory already has
# metrics.json are kept, so an interrupted table can be completed by running it again. Each run's
# time goes to stderr ("task T seed S done in N s"), then their sum.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
out="runs/babi-memn2n"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then out=$1; shift; fi
runs=1 select=valid seed=1
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --select) select=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    *) extra+=("$1"); shift ;;
  esac
done
case "$runs" in '' | *[!0-9]* | 0) echo "babi_table.sh: --runs takes a positive number, got '$runs'" >&2; exit 2 ;; esac
case "$select" in valid | train) ;; *) echo "babi_table.sh: --select takes valid or train, got '$select'" >&2; exit 2 ;; esac
bin="${MEMGRAD_BIN:-${MEMGRAD_BUILD_DIR:-build}/memgrad}"
[ -x "$bin" ] || tools/setup.sh >&2
mkdir -p "$out"

# A number field of a metrics.json ("mean_error", "valid_mean_error", ...).
field() {
  local v
  v=$(tr -d '\n ' < "$1" | sed -n "s/.*[{,]\"$2\":\([0-9.eE+-]*\).*/\1/p")
  [ -n "$v" ] || { echo "babi_table.sh: no $2 in $1" >&2; exit 1; }
  echo "$v"
}

run_dir() { if [ "$runs" -eq 1 ]; then echo "$out/task$1"; else echo "$out/task$1/seed$2"; fi; }

seconds=0
for t in $(seq 1 20); do
  for s in $(seq "$seed" $((seed + runs - 1))); do
    d=$(run_dir "$t" "$s")
    if [ -f "$d/metrics.json" ]; then echo "task $t seed $s: kept $d" >&2; continue; fi
    st=$(date +%s.%N)
    "$bin" train --task babi --model memn2n --babi-task "$t" --seed "$s" --out "$d" --overwrite --quiet \
      ${extra[@]+"${extra[@]}"} >/dev/null
    took=$(awk -v a="$st" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
    seconds=$(awk -v a="$seconds" -v b="$took" 'BEGIN{print a+b}')
    echo "task $t seed $s done in $took s" >&2
  done
done

# Paper (Sukhbaatar et al. 2015, Table 1, 1k, PE LS RN), as recorded in reference-notes.md.
paper=(0.0 8.3 40.3 2.8 13.1 7.6 17.3 10.0 13.2 15.1 0.9 0.2 0.4 1.7 0.0 1.3 51.0 11.1 82.8 0.0)
if [ "$runs" -eq 1 ]; then
  printf "| task | memgrad error %% (1 run, seed %d) | paper PE LS RN %% (best of 10) |\n|---|---|---|\n" "$seed"
else
  other=train; [ "$select" = train ] && other=valid
  printf "| task | memgrad error %% (best of %d runs by %s error) | seed | %s / %s error %% | paper PE LS RN %% (best of 10) |\n|---|---|---|---|---|\n" \
    "$runs" "$select" "$select" "$other"
fi
sum=0; failed=0
for t in $(seq 1 20); do
  best="" key=""
  for s in $(seq "$seed" $((seed + runs - 1))); do
    m="$(run_dir "$t" "$s")/metrics.json"
    if [ "$runs" -eq 1 ]; then best=$s; break; fi
    k=$(printf "%09.3f %09.3f %06d" "$(field "$m" "${select}_mean_error")" "$(field "$m" "${other}_mean_error")" "$s")
    if [ -z "$key" ] || [[ "$k" < "$key" ]]; then key=$k best=$s; fi
  done
  m="$(run_dir "$t" "$best")/metrics.json"
  e=$(field "$m" mean_error)
  if [ "$runs" -eq 1 ]; then
    printf "| %d | %.1f | %s |\n" "$t" "$e" "${paper[$((t-1))]}"
  else
    printf "| %d | %.1f | %d | %.1f / %.1f | %s |\n" "$t" "$e" "$best" \
      "$(field "$m" "${select}_mean_error")" "$(field "$m" "${other}_mean_error")" "${paper[$((t-1))]}"
  fi
  sum=$(awk -v a="$sum" -v b="$e" 'BEGIN{print a+b}')
  failed=$(awk -v f="$failed" -v e="$e" 'BEGIN{print f + (e > 5.0)}')
done
if [ "$runs" -eq 1 ]; then
  printf "| mean | %.1f | 13.9 |\n| failed (> 5%%) | %d | 11 |\n" "$(awk -v s="$sum" 'BEGIN{print s/20}')" "$failed"
else
  printf "| mean | %.1f | | | 13.9 |\n| failed (> 5%%) | %d | | | 11 |\n" "$(awk -v s="$sum" 'BEGIN{print s/20}')" "$failed"
fi
echo "training time of the runs made now: ${seconds} s" >&2
