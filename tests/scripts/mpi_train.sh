#!/usr/bin/env bash
# Data-parallel training over MPI (tools/ranks.hpp): `mpirun -np 2` with one shard per rank gives
# the losses and test metrics of one process with --shards 2, bit for bit (the gradients are
# summed in the same order); --resume under mpirun continues exactly; a checkpoint of another rank
# count, ranks given different settings, and a rank that dies stop with a clear error and leave
# the last checkpoint good. Skipped (exit 77) where mpirun is missing or memgrad was built without
# MPI.
#   tests/scripts/mpi_train.sh MEMGRAD_BINARY
set -uo pipefail
bin=$1
command -v mpirun >/dev/null || { echo "mpi_train.sh: mpirun is not installed: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "mpi_train.sh: $*"; exit 1; }

# Two processes on any machine (--oversubscribe), as root too (containers, CI); shared memory
# without the single-copy mechanism that containers often forbid.
mpi=(mpirun -np 2 --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
# Open MPI keeps what MPI_Init allocated to the end: not memgrad's leaks (an ASan build's
# LeakSanitizer would report them and fail the run).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
words=(--task sum2seq --model lstm --embedding 4 --hidden 6 --batch 6 --lmax 4 --test-samples 8
  --test-lmax 4 --threads 1 --quiet --log-every 1)

"${mpi[@]}" "$bin" train "${words[@]}" --iterations 4 --out "$tmp/mpi" >"$tmp/mpi.out" 2>&1
status=$?
if grep -q "built without MPI" "$tmp/mpi.out"; then
  echo "mpi_train.sh: this memgrad was built without MPI: skipped"
  exit 77
fi
[ $status = 0 ] || { cat "$tmp/mpi.out"; fail "mpirun -np 2 train failed ($status)"; }
"$bin" train "${words[@]}" --iterations 4 --shards 2 --out "$tmp/one" >/dev/null ||
  fail "one process with --shards 2 failed"

losses() { grep -o '"loss":[^,]*' "$1/log.jsonl"; }
[ "$(losses "$tmp/mpi" | wc -l)" = 4 ] || fail "expected 4 loss lines from mpirun"
[ "$(losses "$tmp/mpi")" = "$(losses "$tmp/one")" ] ||
  fail "losses differ: mpirun -np 2 $(losses "$tmp/mpi" | tr '\n' ' ') vs --shards 2 $(losses "$tmp/one" | tr '\n' ' ')"
cmp -s "$tmp/mpi/metrics.json" "$tmp/one/metrics.json" || fail "test metrics differ"

# --resume under mpirun: 2 steps, then 2 more, as 4 at once.
"${mpi[@]}" "$bin" train "${words[@]}" --iterations 2 --out "$tmp/res" >/dev/null 2>&1 ||
  fail "mpirun 2 steps failed"
"${mpi[@]}" "$bin" train --resume "$tmp/res" --iterations 4 --quiet >/dev/null 2>&1 ||
  fail "mpirun --resume failed"
[ "$(losses "$tmp/res")" = "$(losses "$tmp/mpi")" ] || fail "resumed losses differ"

# A checkpoint of 2 processes resumed by one: exit 2, a message naming the rank counts.
cp -r "$tmp/res" "$tmp/res1"
"$bin" train --resume "$tmp/res1" --iterations 6 --quiet >"$tmp/res1.out" 2>&1
status=$?
[ $status = 2 ] || fail "one process resuming a 2-process checkpoint: exit $status, expected 2"
grep -q "written by a run of 2 processes" "$tmp/res1.out" || { cat "$tmp/res1.out"; fail "no clear message"; }
cmp -s "$tmp/res1/checkpoint.safetensors" "$tmp/res/checkpoint.safetensors" ||
  fail "the refused resume changed the checkpoint"

# Ranks given different settings (rank 1 another learning rate): exit 2, nothing written.
"${mpi[@]}" bash -c '"$@" --lr "0.00$((OMPI_COMM_WORLD_RANK + 1))"' _ "$bin" train "${words[@]}" \
  --iterations 2 --out "$tmp/disagree" >"$tmp/disagree.out" 2>&1
status=$?
[ $status = 2 ] || { cat "$tmp/disagree.out"; fail "ranks that disagree: exit $status, expected 2"; }
grep -q "disagree on the run's settings" "$tmp/disagree.out" || fail "no clear message for ranks that disagree"
[ ! -e "$tmp/disagree/checkpoint.safetensors" ] || fail "ranks that disagree wrote a checkpoint"

# A rank that dies (SIGKILL) once the first checkpoint is written: the other stops, mpirun fails,
# and the checkpoint left is good: the run resumes from it and finishes.
"${mpi[@]}" bash -c '"$@" & pid=$!
  if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then
    while [ ! -e "'"$tmp/dead"'/checkpoint.safetensors" ]; do sleep 0.02; done
    kill -9 $pid
  fi
  wait $pid' _ "$bin" train "${words[@]}" --iterations 100000 --checkpoint-every 1 \
  --out "$tmp/dead" >"$tmp/dead.out" 2>&1
status=$?
[ $status != 0 ] || fail "mpirun succeeded although a rank was killed"
"${mpi[@]}" "$bin" train --resume "$tmp/dead" --iterations 3 --quiet >"$tmp/dead2.out" 2>&1 ||
  { cat "$tmp/dead.out" "$tmp/dead2.out"; fail "the checkpoint left by a dead rank does not resume"; }
echo "mpi_train.sh: ok"
