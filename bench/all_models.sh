#!/usr/bin/env bash
# ms per training step of every model at one and two threads: the rows of the table "Every model,
# ms per step at one and two threads" of docs/results/performance.md. For each MODEL:TASK given
# (default: every model with its task, below), `memgrad bench --model M --task T --threads 1
# --steps S --warmup W --json`, then `--threads 2 --shards 2` (or `--threads 2` alone for a model
# that cannot be sharded), printed as a Markdown row: CPU ms per step (all threads added up) with
# the wall ms in parentheses, and the largest heap allocation count of a step after the warm-up.
#   bench/all_models.sh [MODEL:TASK ...]          (MEMGRAD_BIN, default build/memgrad; needs jq)
#   STEPS=20 WARMUP=20 bench/all_models.sh grnn:codiesp deepcare:mimic-progression
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${MEMGRAD_BIN:-build/memgrad}"
steps="${STEPS:-20}" warmup="${WARMUP:-20}"
command -v jq >/dev/null || { echo "all_models.sh: needs jq" >&2; exit 2; }
[ -x "$bin" ] || { echo "all_models.sh: no $bin (tools/setup.sh builds it)" >&2; exit 2; }
pairs=("$@")
if ((${#pairs[@]} == 0)); then
  pairs=(dmnc-late:sum2seq dmnc-early:sum2seq dnc:sum2seq lstm:sum2seq dual-lstm:sum2seq
    wlas:sum2seq memn2n:babi entnet:babi dmn-plus:babi encdec:babi dnc-babi:babi amn:babi
    ebmrnn:physionet2012 emrnn:physionet2012 gru:physionet2012 logreg:physionet2012
    binary-relevance:mimic-drugs classifier-chains:mimic-drugs deepcare:mimic-progression
    grnn:codiesp bigrnn:codiesp text-gru:codiesp text-bigru:codiesp bow-attention:codiesp
    memn2n-kb:codiesp-kb kv-memnn:codiesp-kb a-memnn:codiesp-kb c-memnn:codiesp-kb
    bow-lr:codiesp-kb)
fi

# bench MODEL TASK FLAGS...: one run's JSON on stdout (its errors on stderr).
bench() {
  local m=$1 t=$2
  shift 2
  local view=()
  [ "$m" = dnc-babi ] && view=(--babi-view story)
  "$bin" bench --model "$m" --task "$t" --steps "$steps" --warmup "$warmup" --json \
    ${view[@]+"${view[@]}"} "$@"
}
cell() { jq -r '"\(.cpu_ms_per_step * 100 | round / 100) (\(.ms_per_step * 10 | round / 10))"' <<<"$1"; }

echo "| model | task | batch | 1 thread: CPU ms per step (wall) | 2 threads: CPU ms per step, both threads (wall) | allocations in a step |"
echo "|---|---|---|---|---|---|"
for pair in "${pairs[@]}"; do
  m=${pair%%:*} t=${pair#*:}
  one=$(bench "$m" "$t" --threads 1)
  if two=$(bench "$m" "$t" --threads 2 --shards 2 2>/dev/null); then
    how=", 2 shards"
  else
    two=$(bench "$m" "$t" --threads 2)
    how=""
  fi
  allocs=$(jq -s 'map(.allocs_per_step.max) | max' <<<"$one$two")
  printf '| `%s` | %s | %s | %s | %s%s | %s |\n' "$m" "$t" "$(jq -r .batch <<<"$one")" \
    "$(cell "$one")" "$(cell "$two")" "$how" "$allocs"
done
