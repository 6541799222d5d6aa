#!/usr/bin/env bash
# Interleaved rounds of a model's training step at one thread, memgrad against its PyTorch script:
# in each round every memgrad binary given, then PyTorch, so that a busy minute of a shared machine
# falls on all of them. One JSON line per run in OUT (wall and CPU ms per step, tagged with the
# round, side and binary); the per-round and median speed-ups of each binary are printed at the end.
#   bench/rounds.sh OUT ROUNDS MODEL [BINARY...]      (BINARY default build/memgrad)
#   bench/rounds.sh runs/rounds-entnet.jsonl 5 entnet build/memgrad
#   bench/rounds.sh runs/rounds.jsonl 8 dmnc-late build/memgrad /tmp/main/memgrad
# MODEL: dmnc-late (sum2seq; pytorch_dmnc_late.py), entnet (en task 1; pytorch_entnet.py) or
# dmn-plus (en-10k task 1; pytorch_dmn_plus.py). ROUND_STEPS / ROUND_WARMUP set memgrad's
# measured and warm-up steps (dmnc-late 40 and 60: LIBXSMM generates a kernel the first time it
# meets a shape, and a step's row counts vary; the bAbI models 30 and 5), TORCH_STEPS PyTorch's
# measured steps (dmnc-late 20, the bAbI models ROUND_STEPS; PyTorch warms up 5 steps).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: bench/rounds.sh OUT ROUNDS MODEL [BINARY...]" >&2; exit 2; }
out="$1" rounds="$2" model="$3"
shift 3
[ $# -gt 0 ] || set -- build/memgrad
python="${PYTHON:-/usr/bin/python3}"
here="$(dirname "$0")"
torch_steps=""
case "$model" in  # the task's flags as memgrad's bench and the PyTorch script take them
  dmnc-late)
    script=pytorch_dmnc_late.py task=(--task sum2seq) torch_task=()
    steps=40 warmup=60 torch_steps=20 ;;
  entnet)
    script=pytorch_entnet.py torch_task=(--babi-set en --babi-task 1) steps=30 warmup=5 ;;
  dmn-plus)
    script=pytorch_dmn_plus.py torch_task=(--babi-set en-10k --babi-task 1) steps=30 warmup=5 ;;
  *) echo "rounds.sh: MODEL must be dmnc-late, entnet or dmn-plus, got '$model'" >&2; exit 2 ;;
esac
[ "$model" = dmnc-late ] || task=(--task babi "${torch_task[@]}")
steps="${ROUND_STEPS:-$steps}" warmup="${ROUND_WARMUP:-$warmup}"
[ -n "$torch_steps" ] || torch_steps=$steps
torch_steps="${TORCH_STEPS:-$torch_steps}"
tag() {  # round side binary: the JSON line on stdin with those three fields added
  "$python" -c "import json,sys; d=json.load(sys.stdin)
d.update(round=$1, side='$2', binary='$3'); print(json.dumps(d))"
}
for ((r = 1; r <= rounds; r++)); do
  for bin in "$@"; do
    "$bin" bench --model "$model" "${task[@]}" --threads 1 --steps "$steps" --warmup "$warmup" \
      --json | tag "$r" memgrad "$bin" >>"$out"
  done
  OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
    "$python" "$here/$script" ${torch_task[@]+"${torch_task[@]}"} --threads 1 \
    --steps "$torch_steps" --warmup 5 --json | tag "$r" pytorch pytorch >>"$out"
done
"$python" - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def ms(side, binary, r):  # wall ms per step (each run's median), the round's last run of it
    m = [d["ms_per_step"] for d in rows if d["round"] == r and d.get("side") == side
         and d.get("binary") == binary]
    return m[-1] if m else None
rounds = sorted({d["round"] for d in rows})
for binary in dict.fromkeys(d["binary"] for d in rows if d.get("side") == "memgrad"):
    ratios = []
    for r in rounds:
        m, p = ms("memgrad", binary, r), ms("pytorch", "pytorch", r)
        if m and p:
            ratios.append(p / m)
            print(f"{binary} round {r}: memgrad {m:.2f} ms, pytorch {p:.2f} ms, {ratios[-1]:.2f}x")
    if ratios:
        print(f"{binary}: median speed-up {statistics.median(ratios):.2f}x "
              f"[{min(ratios):.2f}, {max(ratios):.2f}]")
PY
