#!/usr/bin/env bash
# Interleaved rounds of a bAbI model's training step at one thread, memgrad against its PyTorch
# script (entnet: bench/pytorch_entnet.py on en task 1; dmn-plus: bench/pytorch_dmn_plus.py on
# en-10k task 1, the scripts' defaults): in each round memgrad, then PyTorch, so that a busy
# minute of a shared machine falls on both. One JSON line per run in OUT (wall and CPU ms per
# step); the median per round and the ratio are printed at the end.
#   bench/rounds_babi.sh OUT ROUNDS MODEL [BINARY]      (MODEL: entnet or dmn-plus)
#   bench/rounds_babi.sh runs/rounds-entnet.jsonl 5 entnet build/memgrad
# ROUND_STEPS / ROUND_WARMUP set both sides' measured and warm-up steps (30 and 5).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: bench/rounds_babi.sh OUT ROUNDS MODEL [BINARY]" >&2; exit 2; }
out="$1" rounds="$2" model="$3" bin="${4:-build/memgrad}"
steps="${ROUND_STEPS:-30}" warmup="${ROUND_WARMUP:-5}"
python="${PYTHON:-/usr/bin/python3}"
case "$model" in
  entnet) script="$(dirname "$0")/pytorch_entnet.py" task=(--babi-set en --babi-task 1) ;;
  dmn-plus) script="$(dirname "$0")/pytorch_dmn_plus.py" task=(--babi-set en-10k --babi-task 1) ;;
  *) echo "rounds_babi.sh: MODEL must be entnet or dmn-plus, got '$model'" >&2; exit 2 ;;
esac
tag() { "$python" -c "import json,sys; d=json.load(sys.stdin); d.update(round=$1, side='$2'); print(json.dumps(d))"; }
for ((r = 1; r <= rounds; r++)); do
  "$bin" bench --model "$model" --task babi "${task[@]}" --threads 1 --steps "$steps" \
    --warmup "$warmup" --json | tag "$r" memgrad >>"$out"
  OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 "$python" "$script" "${task[@]}" --threads 1 \
    --steps "$steps" --warmup "$warmup" --json | tag "$r" pytorch >>"$out"
done
"$python" - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def ms(d):  # wall ms per step, the median over the measured steps
    return d["ms_per_step"]
rounds = sorted({d["round"] for d in rows})
ratios = []
for r in rounds:
    m = [ms(d) for d in rows if d["round"] == r and d["side"] == "memgrad"]
    p = [ms(d) for d in rows if d["round"] == r and d["side"] == "pytorch"]
    if m and p:
        ratios.append(p[-1] / m[-1])
        print(f"round {r}: memgrad {m[-1]:.2f} ms, pytorch {p[-1]:.2f} ms, {ratios[-1]:.2f}x")
if ratios:
    print(f"median speed-up {statistics.median(ratios):.2f}x [{min(ratios):.2f}, {max(ratios):.2f}]")
PY
