#!/usr/bin/env bash
# The learning curve of a dnc-babi run (tools/dnc_babi_run.sh) as a markdown table: at every
# evaluation, the stories seen, the training loss (mean over the last 500 stories), and the
# validation and test errors (mean over the 20 tasks, % and failed tasks > 5 %). Needs jq.
#   tools/dnc_babi_curve.sh [RUN]       RUN defaults to runs/dnc-babi-en10k
set -euo pipefail
cd "$(dirname "$0")/.."
run="${1:-runs/dnc-babi-en10k}"
log="$run/log.jsonl"
[ -f "$log" ] || { echo "$log: no such file" >&2; exit 2; }
command -v jq >/dev/null || { echo "jq is needed (apt-get install jq)" >&2; exit 2; }
echo "| stories seen | training loss | validation error % | validation failed | test error % | test failed |"
echo "|---|---|---|---|---|---|"
jq -rs '
  (map(select(.loss_mean != null) | {key: (.step | tostring), value: .loss_mean}) | from_entries) as $loss
  | .[] | select(.eval != null)
  | [(.step + 1), ($loss[.step | tostring] // null), .eval.valid_mean_error,
     .eval.valid_failed_tasks, .eval.mean_error, .eval.failed_tasks]
  | "| \(.[0]) | \(if .[1] == null then "" else (.[1] * 1000 | round / 1000) end) | \(.[2] * 10 | round / 10) | \(.[3]) | \(.[4] * 10 | round / 10) | \(.[5]) |"
' "$log"
