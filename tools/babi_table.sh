#!/usr/bin/env bash
# Trains MemN2N (3 hops, PE LS RN, adjacent tying; the official recipe) on each of the 20 bAbI 1k
# tasks, one run per task, and prints the per-task test error next to the paper's PE LS RN column.
#   tools/babi_table.sh [OUT_DIR] [extra memgrad train flags...]
# Needs the data in ../shared/data/babi (or pass --data DIR). Tasks whose run directory already has
# metrics.json are kept, so an interrupted table can be completed by running it again.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-runs/babi-memn2n}"
shift || true
bin="${MEMGRAD_BIN:-${MEMGRAD_BUILD_DIR:-build}/memgrad}"
[ -x "$bin" ] || tools/setup.sh >&2
mkdir -p "$out"
start=$(date +%s)
for t in $(seq 1 20); do
  if [ -f "$out/task$t/metrics.json" ]; then echo "task $t: kept $out/task$t" >&2; continue; fi
  s=$(date +%s)
  "$bin" train --task babi --model memn2n --babi-task "$t" --out "$out/task$t" --quiet "$@" >/dev/null
  echo "task $t done in $(( $(date +%s) - s )) s" >&2
done
total=$(( $(date +%s) - start ))
# Paper (Sukhbaatar et al. 2015, Table 1, 1k, PE LS RN), as recorded in reference-notes.md.
paper=(0.0 8.3 40.3 2.8 13.1 7.6 17.3 10.0 13.2 15.1 0.9 0.2 0.4 1.7 0.0 1.3 51.0 11.1 82.8 0.0)
printf "| task | memgrad error %% | paper PE LS RN %% |\n|---|---|---|\n"
sum=0; failed=0
for t in $(seq 1 20); do
  e=$(sed -n 's/.*"mean_error": *\([0-9.eE+-]*\).*/\1/p' "$out/task$t/metrics.json" | head -1)
  [ -n "$e" ] || e=$(tr -d '\n ' < "$out/task$t/metrics.json" | sed -n 's/.*"mean_error":\([0-9.eE+-]*\).*/\1/p')
  printf "| %d | %.1f | %s |\n" "$t" "$e" "${paper[$((t-1))]}"
  sum=$(awk -v a="$sum" -v b="$e" 'BEGIN{print a+b}')
  failed=$(awk -v f="$failed" -v e="$e" 'BEGIN{print f + (e > 5.0)}')
done
printf "| mean | %.1f | 13.9 |\n| failed (> 5%%) | %d | 11 |\n" "$(awk -v s="$sum" 'BEGIN{print s/20}')" "$failed"
echo "wall time: ${total} s" >&2
