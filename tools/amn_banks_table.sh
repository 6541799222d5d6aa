#!/usr/bin/env bash
# The AMN paper's bank figures (its Tables 2 and 4 shape) for a table of AMN runs made by
# tools/babi_table.sh --model amn: per task, from each run's metrics.json "model" (the test
# questions decoded again from the last k banks; models/qa/amn_inference.hpp), the banks created,
# the banks required (the smallest k within 1 error point of all banks), the test error from the
# required banks and from all, the entity ratio (entities read / distinct story entities) at one
# bank, at the required banks and at all, and how much faster the bank reading and the whole
# decode are from the required banks than from all, and the fewest banks that pass the task (error
# at most 5 %: "passing", with their entity ratio and decode speedup; "-" when no k passes or the run
# predates the figure). Markdown on stdout. Needs jq.
#   tools/amn_banks_table.sh RUNS_DIR      (RUNS_DIR/taskT/metrics.json, T = 1..20)
set -euo pipefail
export LC_ALL=C
me="amn_banks_table.sh"
[ $# -eq 1 ] || { echo "usage: $me RUNS_DIR" >&2; exit 2; }
dir=$1
[ -d "$dir" ] || { echo "$me: $dir is not a folder" >&2; exit 2; }
command -v jq >/dev/null || { echo "$me: needs jq" >&2; exit 2; }

table=""
for t in $(seq 1 20); do
  m="$dir/task$t/metrics.json"
  [ -f "$m" ] || continue
  jq -e '.model.per_k | length > 0' "$m" >/dev/null 2>&1 ||
    { echo "$me: $m has no AMN bank figures (.model.per_k)" >&2; exit 2; }
  table+=$(jq -r --arg t "$t" '
    def r(x; n): (x * n | round) / n;
    .model as $m | ($m.per_k | map(select(.k == $m.required_banks))[0]) as $q
    | $m.per_k[-1] as $a | $m.per_k[0] as $one
    | (if $m.passing == null then "-" else
        "\($m.passing.banks) / \(r($m.passing.entity_ratio; 100)) / \(r($m.passing.speedup_decode; 10))x" end) as $p
    | "| \($t) | \(r($m.banks_created; 100)) | \($m.required_banks) | \(r($q.error; 10)) / \(r($a.error; 10)) | \(r($one.entity_ratio; 100)) / \(r($q.entity_ratio; 100)) / \(r($a.entity_ratio; 100)) | \(r($m.speedup_read; 10))x / \(r($m.speedup_decode; 10))x | \($p) |"' "$m")$'\n'
done
[ -n "$table" ] || { echo "$me: no taskT/metrics.json in $dir" >&2; exit 2; }
echo "| task | banks created | required | error % (required / all) | entity ratio (1 bank / required / all) | speedup read / decode | to pass (<= 5 %): banks / ratio / decode speedup |"
echo "|---|---|---|---|---|---|---|"
printf '%s' "$table"
