#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang in build-fuzz/ and runs each one on its
# seed corpus (tests/fuzz/README.md), as many at once as there are cores. Installs clang and
# libclang-rt-14-dev (libFuzzer and the sanitizer runtimes) when missing, and runs tools/setup.sh
# first (build/memgrad writes the seed run directory).
#   tools/fuzz.sh                      every target for 1 minute
#   tools/fuzz.sh --minutes N          every target for N minutes
#   tools/fuzz.sh --seconds N          every target for N seconds
#   tools/fuzz.sh --seconds 8          what .ci/run does
#   tools/fuzz.sh --quick-build ...    the targets built at -O0, not -O1: half the build time and
#                                      2-9x fewer executions a second, for a quick check
#   tools/fuzz.sh ... babi metrics     only these targets
# Prints one line per target (executions, coverage, corpus size) and exits 1 when any target
# found a crash, a sanitizer report, a leak, a hang (10 s per input) or memory above 2 GB; the
# input that did it is in build-fuzz/artifacts/TARGET/, its log in build-fuzz/logs/TARGET.log.
# Replay one: build-fuzz/fuzz_TARGET build-fuzz/artifacts/TARGET/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
opt=-O1
targets=()
while (($#)); do
  case "$1" in
    --minutes) seconds=$(($2 * 60)); shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --quick-build) opt=-O0; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: the time must be a whole number >= 1" >&2; exit 2; }

source tools/debian_packages.sh
install_debian_packages clang libclang-rt-14-dev
tools/setup.sh >/dev/null
cmake --build build --target memgrad_fuzz_support >/dev/null  # ops/ and models/ as g++ built them

out=build-fuzz
cmake -S tests/fuzz -B "$out" -DCMAKE_CXX_COMPILER=clang++ -DMEMGRAD_FUZZ_OPT="$opt" \
  -DMEMGRAD_SUPPORT_LIB="$PWD/build/libmemgrad_fuzz_support.a" >/dev/null
if ((${#targets[@]} == 0)); then
  for f in tests/fuzz/fuzz_*.cpp; do n=$(basename "$f" .cpp); targets+=("${n#fuzz_}"); done
fi
cmake --build "$out" -j"$(nproc)" --target "${targets[@]/#/fuzz_}" >/dev/null

# ---- seeds from real files, added to the committed ones (tests/fuzz/seeds/TARGET/) -------------
data=../shared/data
run="$out/seed-run"
seed_run_dir() {  # a tiny training run of the current build: config.json, log.jsonl, checkpoint
  [ -f "$run/checkpoint.safetensors" ] && return 0
  build/memgrad train --task sum2seq --model lstm --hidden 4 --iterations 4 --batch 2 \
    --log-every 1 --checkpoint-every 2 --threads 1 --out "$run" --overwrite >/dev/null 2>&1 || true
}
seed_babi() {  # the first stories of a few tasks (list answers: 8, directions: 19)
  local f
  for f in "$data"/babi/tasks_1-20_v1-2/en/qa{1,8,19,20}_*_train.txt; do
    [ -f "$f" ] && head -n 40 "$f" > "$1/real-$(basename "$f")"
  done
  return 0
}
physio="$data/physionet-challenge-2012"
seed_physionet_record() {  # four records and the first outcomes
  local f
  for f in "$physio"/set-a/{132539,132540,132541,132543}.txt; do
    [ -f "$f" ] && cp "$f" "$1/real-$(basename "$f")"
  done
  [ -f "$physio/Outcomes-a.txt" ] && head -n 20 "$physio/Outcomes-a.txt" > "$1/real-outcomes.txt"
  return 0
}
seed_tar_gz() {  # a set-b.tar.gz-like archive of two records (the hand-written one without data)
  local files=()
  [ -f "$physio/set-a/132540.txt" ] && files=("$physio/set-a/132540.txt" "$physio/set-a/132541.txt")
  ((${#files[@]})) || files=(tests/fuzz/seeds/physionet_record/record.txt)
  tar czf "$1/records.tar.gz" --transform 's|.*/|set-b/|' "${files[@]}" 2>/dev/null || true
}
seed_mimic() {  # the heads of the MIMIC-III demo's tables, and one MIMIC-IV table gzipped
  local t
  for t in ADMISSIONS DIAGNOSES_ICD PROCEDURES_ICD PRESCRIPTIONS; do
    [ -f "$data/mimic-iii-demo/$t.csv" ] && head -n 12 "$data/mimic-iii-demo/$t.csv" > "$1/real-$t.csv"
  done
  local iv="$data/mimic-iv-demo/hosp/diagnoses_icd.csv.gz"
  # head closes the pipe early: gzip -dc's SIGPIPE is expected, not a failure
  if [ -f "$iv" ]; then (gzip -dc "$iv" | head -n 12 | gzip > "$1/real-diagnoses_icd.csv.gz") || true; fi
  return 0
}
seed_kb_obo() {  # the header and first terms of the Disease Ontology
  local f="$data/disease-ontology/doid.obo"
  [ -f "$f" ] && head -n 120 "$f" > "$1/real-doid.obo"
  return 0
}
seed_codiesp() {  # two real notes' first lines with their diagnosis rows
  local d="$data/codiesp/final_dataset_v4_to_publish/train" id
  for id in S0004-06142005000700014-1 S0004-06142005000900013-1; do
    [ -f "$d/text_files_en/$id.txt" ] || continue
    { head -n 1 "$d/text_files_en/$id.txt"; grep "^$id" "$d/trainD.tsv" | sed "s/^$id/n1/"; } > "$1/real-$id.txt"
  done
  return 0
}
seed_safetensors() { seed_run_dir; [ -f "$run/checkpoint.safetensors" ] && cp "$run/checkpoint.safetensors" "$1/real-run.safetensors"; return 0; }
seed_run_config() { seed_run_dir; [ -f "$run/config.json" ] && cp "$run/config.json" "$1/real-config.json"; return 0; }
seed_run_log() { seed_run_dir; [ -f "$run/log.jsonl" ] && cp "$run/log.jsonl" "$1/real-log.jsonl"; return 0; }

# The corpora first, one target after another (three targets' seeds come from one tiny run).
for t in "${targets[@]}"; do
  [ -x "$out/fuzz_$t" ] || { echo "fuzz.sh: no target $t (tests/fuzz/fuzz_$t.cpp)" >&2; exit 2; }
  corpus="$out/corpus/$t"
  mkdir -p "$corpus" "$out/artifacts/$t" "$out/logs"
  [ -d "tests/fuzz/seeds/$t" ] && cp -n tests/fuzz/seeds/"$t"/* "$corpus"/ 2>/dev/null || true
  declare -F "seed_$t" >/dev/null && "seed_$t" "$corpus"
done

row_format='%-12s %10s %8s %8s %8s %8s  %s\n'  # the table's columns: its header and every target's row

# fuzz_target T: runs target T for the time given and writes its table row to logs/T.row (the
# result column "ok" or "FAILED ...": the one record of how the run went).
fuzz_target() {
  local t=$1 corpus="$out/corpus/$1" log="$out/logs/$1.log" status=0 dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  "$out/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$t/" "${dict[@]}" "$corpus" >"$log" 2>&1 || status=$?
  local runs time cov files rate result=ok
  # A log without a figure (a crash before the stats) leaves it "?".
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  time=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2) || true
  files=$(find "$corpus" -type f | wc -l)
  rate=$(( ${runs:-0} / (${time:-0} > 0 ? ${time:-1} : 1) ))
  if ((status != 0)); then
    result="FAILED (exit $status; $(grep -m1 -oE 'ERROR: [A-Za-z]+: [a-z-]+|deadly signal|timeout|out-of-memory|uncaught exception' "$log" || echo see log)): $log"
  fi
  printf "$row_format" "$t" "${runs:-?}" "${time:-?}" "$rate" "${cov:-?}" "$files" "$result" \
    > "$out/logs/$t.row"
}

# Then the targets, one a core at a time (each fuzzer is one process on one core).
running=0
for t in "${targets[@]}"; do
  # (the exit status of a run is not its result: that is its row, read below)
  if ((running >= $(nproc))); then wait -n || true; running=$((running - 1)); fi
  rm -f "$out/logs/$t.row"
  fuzz_target "$t" &
  running=$((running + 1))
done
wait || true

failed=0
printf "$row_format" target runs seconds exec/s cov corpus result
for t in "${targets[@]}"; do
  if [ -f "$out/logs/$t.row" ]; then
    cat "$out/logs/$t.row"
    grep -q '  ok$' "$out/logs/$t.row" || failed=1
  else
    echo "$t: no result: $out/logs/$t.log"
    failed=1
  fi
done
exit $failed
