#!/usr/bin/env bash
# Durable run directories, watched with strace: every file memgrad train replaces (config.json, the
# checkpoint, metrics.json, the log cut back by a resume) is written to a temporary, fsync'ed,
# renamed, and then the directory is fsync'ed, so that the rename itself survives a power loss;
# log.jsonl is fsync'ed before each checkpoint, which counts its lines. Skipped (exit 77) where
# strace is missing or may not trace.
#   tests/scripts/durable_writes.sh MEMGRAD_BINARY
set -euo pipefail
bin=$1
command -v strace >/dev/null || { echo "durable_writes.sh: strace is not installed: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
strace -f -o "$tmp/probe" true 2>/dev/null ||
  { echo "durable_writes.sh: strace may not trace here (ptrace not permitted): skipped"; exit 77; }

# LeakSanitizer cannot run under ptrace (an ASan build's memgrad would abort at exit under strace).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

run="$tmp/run"
words=(--task sum2seq --model lstm --embedding 4 --hidden 4 --batch 2 --lmax 3 --test-samples 2
  --test-lmax 3 --threads 1 --quiet --log-every 1 --checkpoint-every 2)
strace -f -qq -o "$tmp/trace" -e trace=openat,fsync,rename,renameat,renameat2 \
  "$bin" train "${words[@]}" --iterations 3 --out "$run" >/dev/null
strace -f -qq -o "$tmp/trace2" -e trace=openat,fsync,rename,renameat,renameat2 \
  "$bin" train --resume "$run" --iterations 5 --quiet >/dev/null
cat "$tmp/trace2" >>"$tmp/trace"

# Each line: PID syscall(args) = result. Files are followed from openat to fsync by pid and fd.
awk -v run="$run" '
  function fail(why) { print "durable_writes.sh: " why; bad = 1 }
  function quoted(s, n,   parts) { split(s, parts, "\""); return parts[2 * n] }
  /openat\(/ {
    fd = $NF
    if (fd ~ /^[0-9]+$/) path[$1 ":" fd] = quoted($0, 1)
  }
  /fsync\(/ {
    match($0, /fsync\([0-9]+\)/)
    p = path[$1 ":" substr($0, RSTART + 6, RLENGTH - 7)]
    synced[p] = 1
    if (p == run && pending != "") { pending = ""; dir_syncs++ }
  }
  /rename(at2?)?\(/ && $NF == "0" {
    from = quoted($0, 1); to = quoted($0, 2)
    if (index(to, run "/") != 1) next
    renames++
    if (pending != "") fail("the directory was not synced after replacing " pending)
    if (!synced[from]) fail(from " was renamed over " to " without an fsync")
    if (to == run "/checkpoint.safetensors" && !((run "/log.jsonl") in synced))
      fail("a checkpoint was written before log.jsonl was synced")
    if (to == run "/checkpoint.safetensors") delete synced[run "/log.jsonl"]
    pending = to
  }
  END {
    if (pending != "") fail("the directory was not synced after replacing " pending)
    if (renames < 6) fail("only " renames " files replaced in " run " (expected config, log, checkpoints, metrics)")
    if (!bad) printf "durable_writes.sh: %d replacements, each synced before its rename and followed by a directory fsync\n", renames
    exit bad
  }' "$tmp/trace"
