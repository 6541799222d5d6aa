#!/usr/bin/env bash
# The main job on its embedded default data: set up and build, then a short training of the
# late-fusion Dual Memory Neural Computer on the sum-of-two-sequences task (generated in code;
# paper dimensions, 2,000 iterations instead of the paper's 10,000, a few minutes) and its test
# accuracy table at Lmax 10, 15 and 20. Each batch runs as two shards (two tapes) in parallel on
# two cores; the numbers are the same on any machine. Extra arguments go to `memgrad train` (e.g.
# --iterations 10000 for the paper's budget).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh >&2
exec "${MEMGRAD_BUILD_DIR:-build}/memgrad" train --task sum2seq --model dmnc-late \
  --iterations 2000 --shards 2 --out runs/main-dmnc-late-sum2seq --overwrite "$@"
