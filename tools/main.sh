#!/usr/bin/env bash
# The main job on its embedded default data: set up and build, train the late-fusion Dual Memory
# Neural Computer on the sum-of-two-sequences task (generated in code; paper dimensions and
# recipe, 7,000 iterations instead of the paper's 10,000 with the learning-rate decay over the
# second half, so it learns the task: docs/results/main-job.md), print its test accuracy table
# at Lmax 10, 15 and 20, then show what it learned: one test sample's input, prediction and
# target with the memories' write gates, and a page of it (heatmaps and the DMNC paper's
# write-gate figures) in the run directory. Each batch runs as two shards (two tapes) in parallel
# on two cores; the numbers are the same on any machine. Extra arguments go to `memgrad train`
# (e.g. --iterations 10000 for the paper's budget) and replace the defaults below (memgrad refuses
# an option given twice).
set -euo pipefail
cd "$(dirname "$0")/.."
# MEMGRAD_BIN: a memgrad program already built (the script test); no set-up then.
[ -n "${MEMGRAD_BIN:-}" ] || tools/setup.sh >&2
args=("$@")
given() { # given --name...: whether one of these options is among the arguments
  local n a
  for n in "$@"; do
    for a in ${args[@]+"${args[@]}"}; do case "$a" in "$n" | "$n"=*) return 0 ;; esac; done
  done
  return 1
}
value_of() { # value_of --name: the value given for an option, or nothing
  local i
  for ((i = 0; i < ${#args[@]}; i++)); do
    case "${args[i]}" in
      "$1") echo "${args[i + 1]:-}" ;;
      "$1"=*) echo "${args[i]#*=}" ;;
    esac
  done
}
defaults=()
given --task || defaults+=(--task sum2seq)
given --model || defaults+=(--model dmnc-late)
if ! given --iterations --epochs; then
  defaults+=(--iterations 7000)
  # The recipe decays the rate linearly from step 5,000 of 10,000; here over the second half too.
  given --lr-decay-start || defaults+=(--lr-decay-start 3500)
fi
given --shards || defaults+=(--shards 2)
given --out || defaults+=(--out runs/main-dmnc-late-sum2seq)
given --overwrite || defaults+=(--overwrite)
memgrad="${MEMGRAD_BIN:-${MEMGRAD_BUILD_DIR:-build}/memgrad}"
"$memgrad" train "${defaults[@]}" "$@"

# What it learned. Test sample 4 of sum2seq (Lmax 10, fixed by the task's test_seed) is nine
# numbers long; other tasks show their first test sample.
out="$(value_of --out)"
out="${out:-runs/main-dmnc-late-sum2seq}"
task="$(value_of --task)"
sample=0
[[ "${task:-sum2seq}" == sum2seq ]] && sample=4
echo
"$memgrad" inspect --checkpoint "$out" --sample "$sample" --only write_gate
"$memgrad" inspect --checkpoint "$out" --sample "$sample" --html "$out/inspect.html" >/dev/null
echo "page of test sample $sample (every gate, weighting and memory over time, and the paper's"
echo "figures): $out/inspect.html"
