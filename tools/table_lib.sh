# shellcheck shell=bash
# Shared by the results-table scripts (tools/mimic_table.sh, tools/progression_table.sh), which
# source it: their options, training every (seed, row) run and the statistics over seeds. The
# functions read and set the caller's variables out (runs folder), data, seeds, jobs, models,
# epochs, batch, extra (memgrad train flags) and bin, and call its functions row_model ROW and
# row_flags ROW (the model and the train flags of a table row) and train_one ROW SEED, which
# writes OUT/ROW/seed-SEED/metrics.json (train_row does it for most).

# table_setup "$@": [OUT_DIR] [--data DIR] [--seeds "1 2 3"] [--jobs J] [--models "m1 ..."]
# [--epochs E] [--batch B] [extra memgrad train flags...] over the caller's defaults; exits 2 on an option
# without its value, a bad --jobs or no jq. Then finds memgrad (building it when missing) and
# makes OUT_DIR.
table_setup() {
  local me
  me=$(basename "$0")
  if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then out=$1; shift; fi
  extra=()
  need() { [ $# -ge 2 ] || { echo "$me: $1 takes a value" >&2; exit 2; }; }
  while [ $# -gt 0 ]; do
    case "$1" in
      --data) need "$@"; data=$2; shift 2 ;;
      --seeds) need "$@"; seeds=$2; shift 2 ;;
      --jobs) need "$@"; jobs=$2; shift 2 ;;
      --models) need "$@"; models=$2; shift 2 ;;
      --epochs) need "$@"; epochs=$2; shift 2 ;;
      --batch) need "$@"; batch=$2; shift 2 ;;
      *) extra+=("$1"); shift ;;
    esac
  done
  case "$jobs" in '' | *[!0-9]* | 0) echo "$me: --jobs takes a positive number, got '$jobs'" >&2; exit 2 ;; esac
  command -v jq >/dev/null || { echo "$me: needs jq (apt-get install jq)" >&2; exit 2; }
  bin="${MEMGRAD_BIN:-${MEMGRAD_BUILD_DIR:-build}/memgrad}"
  [ -x "$bin" ] || tools/setup.sh >&2
  mkdir -p "$out"
}

# train_row TASK ROW SEED: memgrad train of TASK for table row ROW (row_model, row_flags) on the
# seed's patient split, one thread, into OUT/ROW/seed-SEED (its output in seed-SEED.log), with
# the run's wall time in its wall_seconds and CPU time (user + system, bash's time: no GNU time
# needed) in cpu_seconds. A run whose directory has metrics.json is kept. Returns 1 when the
# training failed.
train_row() {
  local task=$1 m=$2 s=$3 d="$out/$2/seed-$3" st took cpu TIMEFORMAT='%3U %3S'
  if [ -f "$d/metrics.json" ]; then echo "$m seed $s: kept $d" >&2; return 0; fi
  mkdir -p "$out/$m"
  st=$(date +%s.%N)
  # shellcheck disable=SC2046  # row_flags is split into words on purpose
  if ! { time "$bin" train --task "$task" --model "$(row_model "$m")" $(row_flags "$m") \
    --data "$data" --split-seed "$s" --seed "$s" --threads 1 --out "$d" --overwrite --quiet \
    ${extra[@]+"${extra[@]}"} >"$d.log" 2>&1; } 2>"$d.cpu"; then
    echo "$(basename "$0"): training $m seed $s failed; see $d.log" >&2
    return 1
  fi
  took=$(awk -v a="$st" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
  echo "$took" >"$d/wall_seconds"
  cpu=$(awk '{printf "%.1f", $1 + $2}' "$d.cpu")
  echo "$cpu" >"$d/cpu_seconds"
  echo "$m seed $s done in $took s" >&2
}

# Runs train_one for every seed and model, $jobs at a time; returns 1 when one of them failed.
run_all() {
  local s m failed=0
  for s in $seeds; do
    for m in $models; do
      while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || failed=1; done
      train_one "$m" "$s" &
    done
  done
  while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n || failed=1; done
  return "$failed"
}

# mean ± sd (sample sd, n - 1) of jq path P over the seeds of row R, in %; "-" when the runs'
# metrics.json lack P (a rule type's AUC on data that has no rules).
stat() {
  local r=$1 p=$2 s
  for s in $seeds; do jq -r "$p // \"-\"" "$out/$r/seed-$s/metrics.json"; done |
    awk '$1 == "-" {missing=1} {x[NR]=$1; t+=$1}
         END{if (missing) {printf "-"; exit} m=t/NR; v=0; for(i=1;i<=NR;i++) v+=(x[i]-m)^2;
         sd=NR>1?sqrt(v/(NR-1)):0; printf "%.1f ± %.1f", 100*m, 100*sd}'
}

# The mean over the seeds of row R of the number in each run's file F, with D decimals (0).
seed_mean() {
  local r=$1 f=$2 d=${3:-0} s
  for s in $seeds; do cat "$out/$r/seed-$s/$f"; done |
    awk -v d="$d" '{t+=$1} END{printf "%.*f", d, t/NR}'
}
