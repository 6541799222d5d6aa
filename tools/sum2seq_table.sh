#!/usr/bin/env bash
# Trains the six models of the DMNC paper's Table 1 on sum2seq (the paper's budget: 10,000
# iterations of batch 50 at Lmax 10) and prints their test accuracy at Lmax 10/15/20 next to the
# paper's (markdown). A seventh row, wlas-authors, is WLAS attending over the buffer the DMNC
# authors' code builds (--attention-memory authors_reshape; docs/sum2seq.md).
#   tools/sum2seq_table.sh [OUT_DIR] [--jobs J] [--models "m1 m2 ..."] [extra memgrad train flags...]
# Runs go to OUT_DIR/MODEL (default runs/sum2seq-table), J at a time (default 2), each with
# --threads 1 so J runs fill J cores without oversubscribing them. Runs whose directory already has
# metrics.json are kept, so an interrupted table is completed by running it again. Each run's wall
# time is printed to stderr and written to OUT_DIR/MODEL/wall_seconds; the total wall time of the
# whole table is printed last.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
out="runs/sum2seq-table"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then out=$1; shift; fi
jobs=2
models="dmnc-late dmnc-early dnc lstm dual-lstm wlas wlas-authors"
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    *) extra+=("$1"); shift ;;
  esac
done
case "$jobs" in '' | *[!0-9]* | 0) echo "sum2seq_table.sh: --jobs takes a positive number, got '$jobs'" >&2; exit 2 ;; esac
bin="${MEMGRAD_BIN:-${MEMGRAD_BUILD_DIR:-build}/memgrad}"
[ -x "$bin" ] || tools/setup.sh >&2
mkdir -p "$out"

# A row's model and its own flags: wlas-authors is wlas with the authors' attention buffer.
row_model() { case "$1" in wlas-authors) echo wlas ;; *) echo "$1" ;; esac; }
row_flags() { case "$1" in wlas-authors) echo "--attention-memory authors_reshape" ;; esac; }

train_one() {
  local m=$1 d="$out/$1" st took
  if [ -f "$d/metrics.json" ]; then echo "$m: kept $d" >&2; return 0; fi
  st=$(date +%s.%N)
  # shellcheck disable=SC2046  # row_flags is split into words on purpose
  if ! "$bin" train --task sum2seq --model "$(row_model "$m")" $(row_flags "$m") --threads 1 \
    --eval-every 2500 --out "$d" --overwrite --quiet ${extra[@]+"${extra[@]}"} >"$d.log" 2>&1; then
    echo "sum2seq_table.sh: training $m failed; see $d.log" >&2
    return 1
  fi
  took=$(awk -v a="$st" -v b="$(date +%s.%N)" 'BEGIN{printf "%.0f", b-a}')
  echo "$took" >"$d/wall_seconds"
  echo "$m done in $took s" >&2
}

start=$(date +%s.%N)
pids=()
failed=0
for m in $models; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || failed=1; done
  train_one "$m" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || failed=1; done
[ "$failed" -eq 0 ] || exit 1

# accuracy field K of metrics.json, in %.
acc() {
  local v
  v=$(tr -d '\n ' <"$1" | sed -n "s/.*\"accuracy\":{[^}]*\"$2\":\([0-9.eE+-]*\).*/\1/p")
  [ -n "$v" ] || { echo "sum2seq_table.sh: no accuracy at Lmax $2 in $1" >&2; exit 1; }
  awk -v x="$v" 'BEGIN{printf "%.2f", 100 * x}'
}
# Le et al. 2018, Table 1 (accuracy %, Lmax 10 / 15 / 20).
paper() {
  case "$1" in
    lstm) echo "35.17 24.12 18.64" ;;
    dnc) echo "37.8 20.43 14.67" ;;
    dual-lstm) echo "52.41 42.57 30.47" ;;
    wlas | wlas-authors) echo "55.98 43.29 32.49" ;;
    dmnc-late) echo "99.76 98.53 78.17" ;;
    dmnc-early) echo "98.84 93.00 69.93" ;;
    *) echo "- - -" ;;
  esac
}
printf "| model | Lmax 10 | Lmax 15 | Lmax 20 | paper 10 / 15 / 20 | wall (1 thread) |\n|---|---|---|---|---|---|\n"
for m in $models; do
  d="$out/$m"
  read -r p10 p15 p20 <<<"$(paper "$m")"
  w=$(cat "$d/wall_seconds" 2>/dev/null || echo "?")
  printf "| %s | %s | %s | %s | %s / %s / %s | %s s |\n" "$m" "$(acc "$d/metrics.json" 10)" \
    "$(acc "$d/metrics.json" 15)" "$(acc "$d/metrics.json" 20)" "$p10" "$p15" "$p20" "$w"
done
echo "total wall time: $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.0f", b-a}') s ($jobs at a time)" >&2
