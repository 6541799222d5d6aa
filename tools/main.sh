#!/usr/bin/env bash
# The main job on its embedded default data: set up and build, then a short training of the
# late-fusion Dual Memory Neural Computer on the sum-of-two-sequences task (generated in code;
# paper dimensions, 2,000 iterations instead of the paper's 10,000, a few minutes) and its test
# accuracy table at Lmax 10, 15 and 20. Each batch runs as two shards (two tapes) in parallel on
# two cores; the numbers are the same on any machine. Extra arguments go to `memgrad train` (e.g.
# --iterations 10000 for the paper's budget) and replace the defaults below (memgrad refuses an
# option given twice).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh >&2
args=("$@")
given() { # given --name...: whether one of these options is among the arguments
  local n a
  for n in "$@"; do
    for a in ${args[@]+"${args[@]}"}; do case "$a" in "$n" | "$n"=*) return 0 ;; esac; done
  done
  return 1
}
defaults=()
given --task || defaults+=(--task sum2seq)
given --model || defaults+=(--model dmnc-late)
given --iterations --epochs || defaults+=(--iterations 2000)
given --shards || defaults+=(--shards 2)
given --out || defaults+=(--out runs/main-dmnc-late-sum2seq)
given --overwrite || defaults+=(--overwrite)
exec "${MEMGRAD_BUILD_DIR:-build}/memgrad" train "${defaults[@]}" "$@"
