#!/usr/bin/env bash
# Trains one model per bAbI task (20 runs, or K seeds each) and prints the per-task test error
# table (markdown) next to the paper columns of the AMN paper's Table 1 (AMN | EntNet | DMN+ |
# MemN2N | EncDec, plus the DNC paper's joint 10k column), and writes it as JSON (OUT_DIR/table.json).
#   tools/babi_table.sh [OUT_DIR] [--model M] [--set en|en-10k] [--runs K] [--select valid|train]
#                       [--seed S] [--tasks "T1 T2 ..."] [--jobs N] [--per-story] [--report-only]
#                       [--also DIR ...] [extra memgrad train flags...]
# --model (default memn2n) is any model of the babi task (its registration picks the view it reads).
# --per-story (EntNet) trains every task in per-story mode: --babi-view memory-story, one memory
# pass per story answering all its questions (docs/entnet.md). A question whose story prefix is
# longer than the window (--memory-size, the recipe's 70: qa3's long stories, some of en-10k qa5's)
# keeps its window as a sample of its own, so every question sees what it sees per question and
# task 3 is, in effect, per-question; nothing to set per task.
# --set (default en) is en (1k) or en-10k. en-10k has no task 3 training file: task 3 then trains on
# en's file (the task says so in metrics.json, train_sets) and is marked † in the table; the JSON
# has the mean over the 20 tasks and over the 19 complete ones, and the failed count leaves † out.
# --runs K (default 1) trains K seeds per task (--seed S, default 1, is the first: S..S+K-1) and
# keeps, per task, the run with the lowest validation error (--select valid, the default) or the
# lowest training error (--select train, the official MemN2N code's rule), ties going to the other
# error and then to the lower seed. The test error is never used to select. Runs go to
# OUT_DIR/taskT (K = 1) or OUT_DIR/taskT/seedS; their output to OUT_DIR/logs/, their wall time to
# OUT_DIR/times/. With K > 1 a finished one-run table's OUT_DIR/taskT counts as that task's run of
# the seed it was trained with, so more seeds can be added to a table after the fact.
# --tasks (default all 20) trains only the tasks listed (e.g. the failed ones, with --runs K); the
# table still reports every task from the runs that exist.
# --jobs N (default 1) trains N runs at once; with N > 1 each run gets --threads 1 unless the extra
# flags set --threads. A run whose directory has metrics.json is kept, so an interrupted table is
# completed by running the same command again; a run stopped part-way (a checkpoint and no
# metrics.json) resumes from its checkpoint with the settings it started with (`memgrad train
# --resume`; only --threads and --data of the extra flags are passed on). --report-only trains nothing and reports the runs
# that exist (missing tasks as "-", "complete": false in the JSON).
# A run that fails (bad data: the loader names file and line) is reported with its log's last line;
# the script then exits with the run's code (2 for bad input) and writes no table.
# --also DIR (repeatable) adds the runs of another table of the same model and set (DIR/taskT and
# DIR/taskT/seedS, e.g. trained with another learning rate) as candidates for the report: per task
# the run of least validation (--select) error over OUT's seeds and every DIR's runs is kept,
# ties to the lower seed and then to OUT; the seed column names the table a kept run came from and
# table.json gives each kept run's directory. DIR's runs are never trained here.
# For MemN2N on en the table also has the column it always had: Sukhbaatar et al.'s PE LS RN 1k.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
me="babi_table.sh"
out="runs/babi-memn2n"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then out=$1; shift; fi
model=memn2n set=en runs=1 select=valid seed=1 jobs=1 report_only=0 tasks=$(seq 1 20)
extra=() also=()
need() { [ $# -ge 2 ] || { echo "$me: $1 takes a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --model) need "$@"; model=$2; shift 2 ;;
    --set) need "$@"; set=$2; shift 2 ;;
    --runs) need "$@"; runs=$2; shift 2 ;;
    --select) need "$@"; select=$2; shift 2 ;;
    --seed) need "$@"; seed=$2; shift 2 ;;
    --tasks) need "$@"; tasks=$2; shift 2 ;;
    --jobs) need "$@"; jobs=$2; shift 2 ;;
    --report-only) report_only=1; shift ;;
    --also) need "$@"; also+=("${2%/}"); shift 2 ;;
    --per-story) extra+=(--babi-view memory-story); shift ;;
    --babi-set | --babi-task | --out)
      echo "$me: $1 is set by the script (use --set; one run per task)" >&2; exit 2 ;;
    *) extra+=("$1"); shift ;;
  esac
done
positive() { case "$2" in '' | *[!0-9]* | 0) echo "$me: $1 takes a positive number, got '$2'" >&2; exit 2 ;; esac; }
positive --runs "$runs"
positive --jobs "$jobs"
case "$seed" in '' | *[!0-9]*) echo "$me: --seed takes a whole number, got '$seed'" >&2; exit 2 ;; esac
case "$select" in valid | train) ;; *) echo "$me: --select takes valid or train, got '$select'" >&2; exit 2 ;; esac
case "$set" in en | en-10k) ;; *) echo "$me: --set takes en or en-10k, got '$set'" >&2; exit 2 ;; esac
case "$model" in '' | *[!a-z0-9-]*) echo "$me: bad --model '$model'" >&2; exit 2 ;; esac
for t in $tasks; do
  case "$t" in [1-9] | 1[0-9] | 20) ;; *) echo "$me: --tasks takes task numbers 1-20, got '$t'" >&2; exit 2 ;; esac
done
[ -n "${tasks// /}" ] || { echo "$me: --tasks needs at least one task" >&2; exit 2; }
for d in ${also[@]+"${also[@]}"}; do
  [ -d "$d" ] || { echo "$me: --also $d: no such directory" >&2; exit 2; }
done
has_flag() { local f; for f in ${extra[@]+"${extra[@]}"}; do [ "$f" = "$1" ] && return 0; done; return 1; }
if [ "$jobs" -gt 1 ] && ! has_flag --threads; then extra+=(--threads 1); fi
bin="${MEMGRAD_BIN:-${MEMGRAD_BUILD_DIR:-build}/memgrad}"
[ -x "$bin" ] || tools/setup.sh >&2
mkdir -p "$out/logs" "$out/times"

# A number field of a metrics.json ("mean_error", "valid_mean_error", ...).
field() {
  local v
  v=$(tr -d '\n ' < "$1" | sed -n "s/.*[{,]\"$2\":\([0-9.eE+-]*\).*/\1/p")
  [ -n "$v" ] || { echo "$me: no $2 in $1" >&2; exit 1; }
  echo "$v"
}
# Task $1's run of seed $2: OUT/taskT with one run per task, else OUT/taskT/seedS, or the one-run
# table's OUT/taskT when it was trained with that seed.
run_dir() {
  if [ "$runs" -eq 1 ]; then echo "$out/task$1"; return; fi
  if [ ! -f "$out/task$1/seed$2/metrics.json" ] && [ -f "$out/task$1/metrics.json" ] &&
    [ "$(field "$out/task$1/config.json" seed)" = "$2" ]; then
    echo "$out/task$1"
  else
    echo "$out/task$1/seed$2"
  fi
}
tag() { echo "task$1_seed$2"; }

# ---- training (N runs at once), each run's wall time to OUT_DIR/times, its output to OUT_DIR/logs
# The extra flags a resumed run may take (its settings come from its config.json).
resume_flags=()
for ((i = 0; i < ${#extra[@]}; i++)); do
  case "${extra[i]}" in --threads | --data) resume_flags+=("${extra[i]}" "${extra[i + 1]:-}") ;; esac
done
one_run() {  # task seed: never fails; the exit code goes to OUT_DIR/logs/<tag>.rc
  local t=$1 s=$2 d st rc=0 log
  d=$(run_dir "$t" "$s")
  log="$out/logs/$(tag "$t" "$s").log"
  st=$(date +%s.%N)
  if [ -f "$d/checkpoint.safetensors" ] && [ -f "$d/config.json" ]; then
    echo "task $t seed $s: resuming $d from its checkpoint" >&2
    "$bin" train --resume "$d" --quiet ${resume_flags[@]+"${resume_flags[@]}"} >> "$log" 2>&1 || rc=$?
  else
    "$bin" train --task babi --model "$model" --babi-set "$set" --babi-task "$t" --seed "$s" \
      --out "$d" --overwrite --quiet ${extra[@]+"${extra[@]}"} > "$log" 2>&1 || rc=$?
  fi
  echo "$rc" > "$out/logs/$(tag "$t" "$s").rc"
  if [ "$rc" -eq 0 ]; then
    awk -v a="$st" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f\n", b-a}' > "$out/times/$(tag "$t" "$s").tmp"
    mv "$out/times/$(tag "$t" "$s").tmp" "$out/times/$(tag "$t" "$s")"
    echo "task $t seed $s done in $(cat "$out/times/$(tag "$t" "$s")") s" >&2
  fi
}
started=$(date +%s.%N)
pending=()
for t in $tasks; do
  for s in $(seq "$seed" $((seed + runs - 1))); do
    if [ -f "$(run_dir "$t" "$s")/metrics.json" ]; then
      [ "$report_only" -eq 1 ] || echo "task $t seed $s: kept $(run_dir "$t" "$s")" >&2
    elif [ "$report_only" -eq 0 ]; then
      pending+=("$t:$s")
    fi
  done
done
if [ ${#pending[@]} -gt 0 ]; then
  for p in "${pending[@]}"; do rm -f "$out/logs/$(tag "${p%:*}" "${p#*:}").rc"; done
  running=0
  for p in "${pending[@]}"; do
    if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
    one_run "${p%:*}" "${p#*:}" &
    running=$((running + 1))
  done
  wait
  worst=0
  for p in "${pending[@]}"; do
    t=${p%:*} s=${p#*:}
    rc=$(cat "$out/logs/$(tag "$t" "$s").rc" 2>/dev/null || echo 1)
    if [ "$rc" -ne 0 ]; then
      last=$(grep -v '^[[:space:]]*$' "$out/logs/$(tag "$t" "$s").log" | tail -n 1 || true)
      echo "$me: task $t seed $s failed (exit $rc): ${last:-no output} (log: $out/logs/$(tag "$t" "$s").log)" >&2
      [ "$worst" -eq 2 ] || worst=$rc
    fi
  done
  [ "$worst" -eq 0 ] || exit "$worst"
fi
wall=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')

# ---- paper columns: AMN Table 1 (% test error; the paper does not say 1k or 10k: the EntNet,
# DMN+ and MemN2N columns are those papers' 10k results) and the DNC paper's joint 10k mean ± sd.
amn=(0.0 2.1 4.7 0.0 2.7 3.1 0.0 0.0 1.3 1.2 2.7 2.2 4.6 2.1 1.8 4.2 4.3 2.0 2.4 0.0)
entnet=(0.0 0.1 4.1 0.0 0.3 0.2 0.0 0.5 0.1 0.6 0.3 0.0 1.3 0.0 0.0 0.0 0.5 0.3 2.3 0.0)
dmn=(0.0 0.3 1.1 0.0 0.5 0.0 2.4 0.0 0.0 0.0 0.0 0.0 0.0 0.2 0.0 45.3 4.2 2.1 0.0 0.0)
memn2n=(0.0 0.3 2.1 0.0 0.8 0.1 2.0 0.9 0.3 0.0 0.1 0.0 0.0 0.1 0.0 51.8 18.6 5.3 2.3 0.0)
encdec=(52.0 66.1 71.9 29.2 14.3 31.0 21.8 27.6 36.4 36.4 31.7 35.0 6.8 67.2 62.2 54.0 43.1 6.6 89.6 2.3)
dnc=(9.0±12.6 39.2±20.5 39.6±16.4 0.4±0.7 1.5±1.0 6.9±7.5 9.8±7.0 5.5±5.9 7.7±8.3 9.6±11.4
  3.3±5.7 5.0±6.3 3.1±3.6 11.0±7.5 27.2±20.1 53.6±1.9 32.4±8.0 4.2±1.8 64.6±37.4 0.0±0.1)
# Sukhbaatar et al. 2015, Table 1, 1k, PE LS RN (best of 10), as recorded in reference-notes.md.
pelsrn=(0.0 8.3 40.3 2.8 13.1 7.6 17.3 10.0 13.2 15.1 0.9 0.2 0.4 1.7 0.0 1.3 51.0 11.1 82.8 0.0)
with_pelsrn=0; [ "$model" = memn2n ] && [ "$set" = en ] && with_pelsrn=1
colmean() { printf '%s\n' "$@" | awk -v skip="${skip:-0}" '{ if (NR != skip) { s += $1; n++ } } END { printf "%.2f", s / n }'; }
colfail() { printf '%s\n' "$@" | awk -v skip="${skip:-0}" '{ if (NR != skip && $1 > 5.0) n++ } END { print n + 0 }'; }

# ---- our column: per task the selected run (OUT's seeds, then the runs of each --also table)
other=train; [ "$select" = train ] && other=valid
errors=() seeds=() secs=() daggers=() kept=() sources=() missing=0
fewer=0  # tasks with fewer than K of OUT's seeds trained (the label says "up to K")
for t in $(seq 1 20); do
  cands=()
  for s in $(seq "$seed" $((seed + runs - 1))); do
    [ -f "$(run_dir "$t" "$s")/metrics.json" ] && cands+=("$(run_dir "$t" "$s")")
  done
  [ ${#cands[@]} -lt "$runs" ] && fewer=$((fewer + 1))
  for d in ${also[@]+"${also[@]}"}; do
    for r in "$d/task$t" "$d/task$t"/seed*; do [ -f "$r/metrics.json" ] && cands+=("$r"); done
  done
  best="" key=""
  for i in ${cands[@]+"${!cands[@]}"}; do
    r=${cands[$i]}
    if [ "$runs" -eq 1 ] && [ ${#also[@]} -eq 0 ]; then best=$r; break; fi
    k=$(printf "%09.3f %09.3f %06d %04d" "$(field "$r/metrics.json" "${select}_mean_error")" \
      "$(field "$r/metrics.json" "${other}_mean_error")" "$(field "$r/config.json" seed)" "$i")
    if [ -z "$key" ] || [[ "$k" < "$key" ]]; then key=$k best=$r; fi
  done
  if [ -z "$best" ]; then
    errors+=("-") seeds+=("-") secs+=("-") daggers+=(0) kept+=("-") sources+=("$out")
    missing=$((missing + 1)); continue
  fi
  m="$best/metrics.json"
  s=$(field "$best/config.json" seed)
  errors+=("$(field "$m" mean_error)") seeds+=("$s") kept+=("$best")
  source=$out  # the table the kept run belongs to
  for d in ${also[@]+"${also[@]}"}; do case "$best" in "$d"/*) source=$d ;; esac; done
  sources+=("$source")
  secs+=("$(cat "$source/times/$(tag "$t" "$s")" 2>/dev/null || echo "-")")
  if tr -d '\n ' < "$m" | grep -q '"train_sets":{"3":"en"'; then daggers+=(1); else daggers+=(0); fi
done
dag_task=0
for t in $(seq 1 20); do [ "${daggers[$((t-1))]}" -eq 1 ] && dag_task=$t; done
mark() { [ "${daggers[$(($1-1))]}" -eq 1 ] && echo "$1 †" || echo "$1"; }

# ---- the markdown table
label="$model $set"
seeds_of="$runs seed(s)"; [ "$fewer" -gt 0 ] && [ "$runs" -gt 1 ] && seeds_of="up to $runs seeds a task"
if [ ${#also[@]} -gt 0 ]; then
  label="$label, best by $select error of $out's $seeds_of and the runs of ${also[*]}"
elif [ "$runs" -eq 1 ]; then label="$label, 1 run (seed $seed)"
elif [ "$fewer" -gt 0 ]; then label="$label, best of up to $runs a task by $select error"
else label="$label, best of $runs by $select error"; fi
seed_col=0; [ "$runs" -gt 1 ] || [ ${#also[@]} -gt 0 ] && seed_col=1
hdr="| task | ours: $label | s |"
sep="|---|---|---|"
[ "$seed_col" -eq 1 ] && { hdr="$hdr seed |"; sep="$sep---|"; }
[ "$with_pelsrn" -eq 1 ] && { hdr="$hdr MemN2N PE LS RN 1k (paper, best of 10) |"; sep="$sep---|"; }
echo "$hdr AMN | EntNet | DMN+ | MemN2N | EncDec | DNC (joint, mean±sd) |"
echo "$sep---|---|---|---|---|---|"
for t in $(seq 1 20); do
  i=$((t-1))
  e=${errors[$i]}; [ "$e" = "-" ] || e=$(printf "%.1f" "$e")
  row="| $(mark "$t") | $e | ${secs[$i]} |"
  if [ "$seed_col" -eq 1 ]; then
    from=""; [ "${sources[$i]}" = "$out" ] || from=" (${sources[$i]})"
    row="$row ${seeds[$i]}$from |"
  fi
  [ "$with_pelsrn" -eq 1 ] && row="$row ${pelsrn[$i]} |"
  echo "$row ${amn[$i]} | ${entnet[$i]} | ${dmn[$i]} | ${memn2n[$i]} | ${encdec[$i]} | ${dnc[$i]} |"
done
ours_done=()
for t in $(seq 1 20); do [ "${errors[$((t-1))]}" = "-" ] || ours_done+=("${errors[$((t-1))]}"); done
blank=""; [ "$seed_col" -eq 1 ] && blank=" |"
pel_mean=""; [ "$with_pelsrn" -eq 1 ] && pel_mean=" $(colmean "${pelsrn[@]}") |"
pel_fail=""; [ "$with_pelsrn" -eq 1 ] && pel_fail=" $(colfail "${pelsrn[@]}") |"
if [ "$missing" -eq 0 ]; then
  our_mean=$(colmean "${errors[@]}"); our_mean19=$(skip=$dag_task colmean "${errors[@]}")
  our_fail=$(skip=$dag_task colfail "${errors[@]}")
  echo "| mean (20 tasks) | $our_mean | $wall |$blank$pel_mean $(colmean "${amn[@]}") | $(colmean "${entnet[@]}") | $(colmean "${dmn[@]}") | $(colmean "${memn2n[@]}") | $(colmean "${encdec[@]}") | 16.7±7.6 |"
  if [ "$dag_task" -gt 0 ]; then
    echo "| mean (19, without † $dag_task) | $our_mean19 | |$blank$pel_mean $(skip=$dag_task colmean "${amn[@]}") | $(skip=$dag_task colmean "${entnet[@]}") | $(skip=$dag_task colmean "${dmn[@]}") | $(skip=$dag_task colmean "${memn2n[@]}") | $(skip=$dag_task colmean "${encdec[@]}") | |"
  fi
  echo "| failed (> 5%, computed)$([ "$dag_task" -gt 0 ] && echo ", † not counted") | $our_fail | |$blank$pel_fail $(colfail "${amn[@]}") | $(colfail "${entnet[@]}") | $(colfail "${dmn[@]}") | $(colfail "${memn2n[@]}") | $(colfail "${encdec[@]}") | 11.2±5.4 |"
  echo "| failed as printed in AMN Table 1 | | |$blank$([ "$with_pelsrn" -eq 1 ] && echo " |") 0 | 0 | 5 | 6 | 20 | |"
else
  our_mean="" our_mean19="" our_fail=""
  echo "| (incomplete: $missing of 20 tasks missing; mean and failed count need all 20) | | |"
fi
echo
echo "s: wall time of the task's run in seconds (the mean row: this invocation's wall time)."
[ "$dag_task" -gt 0 ] && echo "†: en-10k has no task $dag_task training file; task $dag_task trained on the en (1k) file."
echo "The AMN paper's printed failed counts for DMN+, MemN2N and EncDec (5, 6, 20) disagree with its own"
echo "columns (1, 3, 19 tasks above 5%); the computed counts are the ones to compare."

# ---- the JSON, written whole or not at all
json="$out/table.json"
{
  printf '{\n  "model": "%s", "set": "%s", "runs": %d, "select": "%s", "first_seed": %d,\n' \
    "$model" "$set" "$runs" "$select" "$seed"
  printf '  "complete": %s, "wall_seconds_this_invocation": %s,\n' "$([ "$missing" -eq 0 ] && echo true || echo false)" "$wall"
  printf '  "also": [%s],\n' "$(for d in ${also[@]+"${also[@]}"}; do printf '"%s",' "$d"; done | sed 's/,$//')"
  printf '  "extra_flags": "%s",\n' "$(printf '%s ' ${extra[@]+"${extra[@]}"} | sed 's/ $//; s/\\/\\\\/g; s/"/\\"/g')"
  printf '  "tasks": {\n'
  for t in $(seq 1 20); do
    i=$((t-1))
    e=${errors[$i]}; [ "$e" = "-" ] && e=null
    sd=${seeds[$i]}; [ "$sd" = "-" ] && sd=null
    sc=${secs[$i]}; [ "$sc" = "-" ] && sc=null
    tr_set="$set"; [ "${daggers[$i]}" -eq 1 ] && tr_set=en
    rd=${kept[$i]}; [ "$rd" = "-" ] && rd=null || rd="\"$rd\""
    printf '    "%d": {"test_error": %s, "seed": %s, "wall_seconds": %s, "train_set": "%s", "dagger": %s, "run": %s}%s\n' \
      "$t" "$e" "$sd" "$sc" "$tr_set" "$([ "${daggers[$i]}" -eq 1 ] && echo true || echo false)" "$rd" "$([ "$t" -lt 20 ] && echo ,)"
  done
  printf '  },\n'
  printf '  "mean_error_20": %s,\n' "${our_mean:-null}"
  printf '  "mean_error_19_complete": %s,\n' "$([ "$dag_task" -gt 0 ] && echo "${our_mean19:-null}" || echo null)"
  printf '  "failed_tasks": %s,\n' "${our_fail:-null}"
  printf '  "failed_definition": "test error > 5%%; the dagger task (trained on another set) not counted",\n'
  printf '  "paper": {"source": "AMN Table 1 (set not stated; EntNet, DMN+, MemN2N columns are 10k results); DNC: Graves et al. 2016 joint 10k mean/sd",\n'
  printf '    "AMN": [%s], "EntNet": [%s], "DMN+": [%s], "MemN2N": [%s], "EncDec": [%s],\n' \
    "$(IFS=,; echo "${amn[*]}")" "$(IFS=,; echo "${entnet[*]}")" "$(IFS=,; echo "${dmn[*]}")" \
    "$(IFS=,; echo "${memn2n[*]}")" "$(IFS=,; echo "${encdec[*]}")"
  printf '    "DNC_mean_sd": ["%s"],\n' "$(printf '%s\n' "${dnc[@]}" | paste -sd, - | sed 's/,/","/g')"
  printf '    "failed_printed": {"AMN": 0, "EntNet": 0, "DMN+": 5, "MemN2N": 6, "EncDec": 20},\n'
  printf '    "failed_computed": {"AMN": %s, "EntNet": %s, "DMN+": %s, "MemN2N": %s, "EncDec": %s}}\n' \
    "$(colfail "${amn[@]}")" "$(colfail "${entnet[@]}")" "$(colfail "${dmn[@]}")" "$(colfail "${memn2n[@]}")" "$(colfail "${encdec[@]}")"
  printf '}\n'
} > "$json.tmp"
mv "$json.tmp" "$json"
echo "table written to $json; this invocation took $wall s" >&2
