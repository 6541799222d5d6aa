#!/usr/bin/env bash
# Interleaved rounds of the dmnc-late training step at one thread: in each round, each memgrad
# binary given, then the PyTorch script, one after another, so that a busy minute of a shared
# machine falls on all of them. One JSON line per run in OUT (wall and CPU ms per step, kernels).
#   bench/rounds_dmnc_late.sh OUT ROUNDS BINARY...
#   bench/rounds_dmnc_late.sh runs/rounds.jsonl 8 build/memgrad /tmp/main/memgrad
# ROUND_STEPS / ROUND_WARMUP set memgrad's measured and warm-up steps (40 and 60: LIBXSMM
# generates a kernel the first time it meets a shape, and a step's row counts vary), TORCH_STEPS
# the PyTorch script's measured steps (20).
set -euo pipefail
out="$1" rounds="$2"
shift 2
steps="${ROUND_STEPS:-40}" warmup="${ROUND_WARMUP:-60}"
python="${PYTHON:-/usr/bin/python3}"
script="$(dirname "$0")/pytorch_dmnc_late.py"
for ((r = 1; r <= rounds; r++)); do
  for bin in "$@"; do
    "$bin" bench --model dmnc-late --task sum2seq --threads 1 --steps "$steps" \
      --warmup "$warmup" --json |
      "$python" -c "import json,sys; d=json.load(sys.stdin); d.update(round=$r, binary='$bin'); print(json.dumps(d))" \
        >>"$out"
  done
  "$python" "$script" --threads 1 --steps "${TORCH_STEPS:-20}" --warmup 5 --json |
    "$python" -c "import json,sys; d=json.load(sys.stdin); d.update(round=$r, binary='pytorch'); print(json.dumps(d))" \
      >>"$out"
done
