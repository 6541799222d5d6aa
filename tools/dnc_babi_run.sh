#!/usr/bin/env bash
# Starts, or resumes where its checkpoint stands, the DNC bAbI run of docs/dnc-babi.md: dnc-babi
# trained jointly on the 20 tasks of en-10k (qa3 on the en file), one story a step, in the
# background. Safe to call again after a stop (SIGTERM checkpoints first) or a reboot: with a
# checkpoint in RUN it resumes, else it starts.
#   tools/dnc_babi_run.sh [RUN [FLAGS...]]   RUN defaults to runs/dnc-babi-en10k; FLAGS go to
#                                            memgrad train (on a resume: --eval-every N,
#                                            --epochs N, ... as `memgrad train --resume` allows)
# Environment: MEMGRAD_BUILD_DIR (default build), THREADS (default 1), DATA (default
# ../shared/data/babi). Output: RUN/log.jsonl (loss every 500 stories, test and validation errors
# every 25,000), RUN/checkpoint.safetensors (every 2,000), RUN.out (the program's messages),
# RUN.pid (the process id).
set -euo pipefail
cd "$(dirname "$0")/.."
run="${1:-runs/dnc-babi-en10k}"
shift || true
bin="${MEMGRAD_BUILD_DIR:-build}/memgrad"
threads="${THREADS:-1}"
data="${DATA:-../shared/data/babi}"
[ -x "$bin" ] || { echo "$bin: not built (tools/setup.sh)" >&2; exit 2; }
if [ -f "$run.pid" ] && kill -0 "$(cat "$run.pid")" 2>/dev/null; then
  echo "$run: already running as PID $(cat "$run.pid")" >&2
  exit 1
fi
mkdir -p "$(dirname "$run")"
if [ -f "$run/checkpoint.safetensors" ]; then
  args=(train --resume "$run" --threads "$threads" --data "$data")
else
  args=(train --task babi --babi-view story --babi-set en-10k --babi-task all --model dnc-babi
        --data "$data" --out "$run" --threads "$threads"
        --log-every 500 --eval-every 25000 --checkpoint-every 2000)
fi
args+=("$@")
echo "$(date -u +%FT%TZ) memgrad ${args[*]}" >> "$run.out"
nohup "$bin" "${args[@]}" --quiet >> "$run.out" 2>&1 &
echo $! > "$run.pid"
echo "$run: PID $! (log $run/log.jsonl, messages $run.out)"
