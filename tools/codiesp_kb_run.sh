#!/usr/bin/env bash
# Trains the knowledge-base memory networks of task codiesp-kb (docs/codiesp-kb.md) over a grid and
# keeps every run; tools/codiesp_kb_table.sh then writes the tables.
#   tools/codiesp_kb_run.sh [--out DIR] [--jobs N] [--seeds "1 2 3"]
#                           [--grid main|ablation|all|paired|baseline|hH-lsK]
# grid main: bow-lr, then memn2n-kb, kv-memnn, a-memnn, c-memnn at 3, 4 and 5 hops, on the top 50
# and top 100 diagnoses, KB variant "paper"; grid ablation: c-memnn at 5 hops, top 50, variants
# k1, k2, k3; grid paired: c-memnn and memn2n-kb at 5 hops, top 50, variant "paper" only (the
# runs of main that the paired bootstrap of docs/results/codiesp-kb.md compares, seed by seed);
# grid hH-lsK (h5-ls50, h4-ls50, h5-ls100, ...): the four memory networks at H hops, top K, variant
# "paper" (the runs of main for more seeds of one row's cells, and the C-MemNN paper's Fig. 3 at 4
# hops); grid baseline: bow-lr alone on the top 50 and top 100 (the KB-free row). Runs go to
# DIR/ls{50,100}/{variant}/{model}-h{hops}/seed{S} (default DIR runs/codiesp-kb), N at a time
# (default 2), each with --threads 1. A run whose directory has metrics.json is kept, an
# interrupted one resumed: running the script again completes the grid.
# Each run's wall time is written to its directory (wall_seconds), and its CPU time, user + system
# (cpu_seconds, where /usr/bin/time is installed).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
out="runs/codiesp-kb" jobs=2 seeds="1 2 3" grid=all
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --grid) grid=$2; shift 2 ;;
    *) echo "codiesp_kb_run.sh: unknown option $1 (see the header)" >&2; exit 2 ;;
  esac
done
bin="${MEMGRAD_BIN:-build/memgrad}"
[ -x "$bin" ] || tools/setup.sh >&2
# The model sizes of our runs (the paper's K = 500 / 300 costs ~10x more per step on 2 cores), and
# Adam at 3e-3 instead of the paper's 1e-3: 25 epochs of CodiEsp's 500 notes are 125 steps, and
# at 1e-3 every memory network was still improving at the last epoch (docs/results/codiesp-kb.md).
dims=(--embedding-dim 128 --gate-hidden 64 --epochs 25 --lr 3e-3)

list() {
  local s k h m v
  for s in $seeds; do
    case "$grid" in
      paired) for m in c-memnn memn2n-kb; do echo "$m 50 5 paper $s"; done; continue ;;
      baseline) for k in 50 100; do echo "bow-lr $k 0 paper $s"; done; continue ;;
      h[345]-ls50 | h[345]-ls100)
        for m in memn2n-kb kv-memnn a-memnn c-memnn; do echo "$m ${grid#*-ls} ${grid:1:1} paper $s"; done
        continue ;;
    esac
    if [ "$grid" != ablation ]; then
      for k in 50 100; do
        echo "bow-lr $k 0 paper $s"
        for h in 3 4 5; do
          for m in memn2n-kb kv-memnn a-memnn c-memnn; do echo "$m $k $h paper $s"; done
        done
      done
    fi
    if [ "$grid" != main ]; then
      for v in k1 k2 k3; do echo "c-memnn 50 5 $v $s"; done
    fi
  done
}

run_one() {  # model top_k hops variant seed
  local m=$1 k=$2 h=$3 v=$4 s=$5 d st flags
  if [ "$m" = bow-lr ]; then d="$out/ls$k/$v/$m/seed$s"; flags=(); else
    d="$out/ls$k/$v/$m-h$h/seed$s"; flags=(--hops "$h" "${dims[@]}"); fi
  [ -f "$d/metrics.json" ] && return 0
  mkdir -p "$d"
  st=$(date +%s.%N)
  local timer=()
  [ -x /usr/bin/time ] && timer=(/usr/bin/time -f "%U %S" -a -o "$d/cpu_times")
  if [ -f "$d/checkpoint.safetensors" ]; then
    ${timer[@]+"${timer[@]}"} "$bin" train --resume "$d" --threads 1 --quiet >/dev/null \
      2>>"$d/stderr.log" || return 0
  else
    ${timer[@]+"${timer[@]}"} "$bin" train --task codiesp-kb --model "$m" --top-k "$k" \
      --kb-variant "$v" --seed "$s" --out "$d" --overwrite --threads 1 --quiet ${flags[@]+"${flags[@]}"} \
      >/dev/null 2>"$d/stderr.log" || { echo "FAILED: $d (see $d/stderr.log)" >&2; return 0; }
  fi
  awk -v a="$st" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f\n", b - a}' > "$d/wall_seconds"
  [ -f "$d/cpu_times" ] && awk '{s += $1 + $2} END {printf "%.1f\n", s}' "$d/cpu_times" > "$d/cpu_seconds"
  echo "$d done in $(cat "$d/wall_seconds") s (CPU $(cat "$d/cpu_seconds" 2>/dev/null || echo ?) s)" >&2
}
export -f run_one
export out bin
export dims_str="${dims[*]}"
list | while read -r m k h v s; do printf '%s %s %s %s %s\n' "$m" "$k" "$h" "$v" "$s"; done |
  xargs -P "$jobs" -L 1 bash -c 'dims=($dims_str); run_one "$@"' _
