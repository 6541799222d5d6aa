#!/usr/bin/env bash
# tools/babi_table.sh on a hand-made 20-task data folder (two questions' worth of stories per file,
# 1 epoch per run): the table and its JSON for en (2 runs at once), EntNet per story (--per-story),
# and en-10k (task 3 trained on
# en's file, marked †, left out of the failed count, the 19-task mean); a second invocation keeps
# every run and resumes one stopped part-way; --also lets a second table's runs compete by validation error; a malformed line stops
# the table with file:line and exit 2, writing no table; bad options exit 2.
#   tests/scripts/babi_table.sh MEMGRAD_BINARY
set -euo pipefail
export MEMGRAD_BIN=$1
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail() { echo "babi_table test: $*" >&2; exit 1; }

story="1 Mary went to the kitchen.
2 John moved to the garden.
3 Where is Mary?	kitchen	1
1 Sandra went to the office.
2 Where is Sandra?	office	1
"
data="$tmp/data/tasks_1-20_v1-2"
for set in en en-10k; do
  mkdir -p "$data/$set"
  for t in $(seq 1 20); do
    for split in train test; do
      [ "$set" = en-10k ] && [ "$t" = 3 ] && [ "$split" = train ] && continue  # as our copy
      for i in 1 2 3 4 5; do printf '%s' "$story"; done > "$data/$set/qa${t}_fixture_$split.txt"
    done
  done
done
flags=(--data "$tmp/data" --epochs 1 --embedding-dim 4)

tools/babi_table.sh "$tmp/en" --jobs 2 "${flags[@]}" > "$tmp/en.md" 2> "$tmp/en.err" || {
  cat "$tmp/en.err"; fail "the en table failed"; }
[ -f "$tmp/en/table.json" ] || fail "no table.json"
grep -q '"complete": true' "$tmp/en/table.json" || fail "en table not complete"
grep -q '"mean_error_19_complete": null' "$tmp/en/table.json" || fail "en has no 19-task mean"
grep -q '^| 20 | ' "$tmp/en.md" || fail "no row 20 in the markdown"
grep -q 'MemN2N PE LS RN 1k' "$tmp/en.md" || fail "the 1k MemN2N table lost its paper column"
grep -q '| failed as printed in AMN Table 1 |' "$tmp/en.md" || fail "no printed-failed row"
[ "$(ls "$tmp/en/times" | wc -l)" -eq 20 ] || fail "not 20 wall times"
if command -v python3 >/dev/null; then
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert len(j["tasks"]) == 20' \
    "$tmp/en/table.json" || fail "table.json is not valid JSON"
fi
# A second invocation trains nothing.
tools/babi_table.sh "$tmp/en" --jobs 2 "${flags[@]}" > /dev/null 2> "$tmp/again.err"
[ "$(grep -c 'kept' "$tmp/again.err")" -eq 20 ] || fail "a second invocation retrained runs"
# A run stopped part-way (a checkpoint, no metrics.json) resumes with the settings it started with:
# asked again with --epochs 3, task 5 keeps its config's 1 epoch instead of training anew.
rm "$tmp/en/task5/metrics.json"
tools/babi_table.sh "$tmp/en" --tasks 5 --data "$tmp/data" --epochs 3 --embedding-dim 4 \
  > /dev/null 2> "$tmp/resume.err" || { cat "$tmp/resume.err"; fail "the resumed table failed"; }
grep -q 'task 5 seed 1: resuming' "$tmp/resume.err" || fail "task 5 was not resumed"
[ -f "$tmp/en/task5/metrics.json" ] || fail "the resumed run wrote no metrics.json"
tr -d ' \n' < "$tmp/en/task5/config.json" | grep -q '"epochs":1[,}]' ||
  fail "the resumed run did not keep its settings"

# More seeds for some tasks afterwards: --runs 2 --tasks "2 7" trains seed 2 of tasks 2 and 7 only,
# and seed 1 is the one-run table's run of each task.
tools/babi_table.sh "$tmp/en" --runs 2 --tasks "2 7" "${flags[@]}" > "$tmp/more.md" 2> "$tmp/more.err" ||
  { cat "$tmp/more.err"; fail "adding seeds failed"; }
[ -f "$tmp/en/task2/seed2/metrics.json" ] && [ -f "$tmp/en/task7/seed2/metrics.json" ] ||
  fail "--runs 2 --tasks '2 7' did not train seed 2 of tasks 2 and 7"
[ ! -e "$tmp/en/task3/seed2" ] && [ ! -e "$tmp/en/task2/seed1" ] || fail "trained more than asked"
grep -q 'task 2 seed 1: kept .*/en/task2$' "$tmp/more.err" || fail "the one-run table's run was not reused"
grep -q '"complete": true' "$tmp/en/table.json" || fail "the table with added seeds is not complete"
# Tasks other than 2 and 7 have one seed of the two: the label must not claim two for every task.
grep -q 'ours: memn2n en, best of up to 2 a task by valid error' "$tmp/more.md" ||
  { grep 'ours:' "$tmp/more.md"; fail "the label claims 2 seeds for every task"; }
# --also: a second table's runs (another learning rate) compete by validation error. Validation
# and test errors are set by hand: task 2's lr table run validates better (kept, named in the seed
# column and table.json), task 7's worse (OUT's seed 1 or 2 kept); no run is trained by --also.
tools/babi_table.sh "$tmp/en-lr" --tasks "2 7" "${flags[@]}" --lr 0.05 > /dev/null 2> "$tmp/lr.err" ||
  { cat "$tmp/lr.err"; fail "the lr table failed"; }
set_errors() {  # run-dir valid test
  sed -i "s/\"valid_mean_error\": *[0-9.eE+-]*/\"valid_mean_error\": $2/; s/\"mean_error\": *[0-9.eE+-]*/\"mean_error\": $3/" "$1/metrics.json"
}
for r in "$tmp/en/task2" "$tmp/en/task2/seed2"; do set_errors "$r" 40 41.5; done
for r in "$tmp/en/task7" "$tmp/en/task7/seed2"; do set_errors "$r" 10 12.5; done
set_errors "$tmp/en-lr/task2" 5 7.5
set_errors "$tmp/en-lr/task7" 20 3.5
tools/babi_table.sh "$tmp/en" --runs 2 --also "$tmp/en-lr/" --report-only > "$tmp/also.md" 2> "$tmp/also.err" ||
  { cat "$tmp/also.err"; fail "--also failed"; }
grep -q "ours: memn2n en, best by valid error of $tmp/en's up to 2 seeds a task and the runs of" "$tmp/also.md" ||
  { grep 'ours:' "$tmp/also.md"; fail "the --also label claims 2 seeds for every task"; }
grep -q "^| 2 | 7.5 | [0-9.]* | 1 ($tmp/en-lr) |" "$tmp/also.md" || { cat "$tmp/also.md"; fail "task 2 did not keep the lr run"; }
grep -q "^| 7 | 12.5 | [0-9.]* | [12] |" "$tmp/also.md" || { cat "$tmp/also.md"; fail "task 7 did not keep its own run"; }
grep -q "\"2\": {\"test_error\": 7.5, [^}]*\"run\": \"$tmp/en-lr/task2\"}" "$tmp/en/table.json" ||
  fail "table.json does not name the kept lr run"
[ ! -e "$tmp/en-lr/task1" ] || fail "--also trained a run"
rc=0; tools/babi_table.sh "$tmp/en" --also "$tmp/nowhere" --report-only > /dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "--also with a missing directory exited $rc, not 2"
for bad in "--tasks 21" "--tasks x"; do
  rc=0; tools/babi_table.sh "$tmp/x" $bad > /dev/null 2>&1 || rc=$?
  [ "$rc" -eq 2 ] || fail "'$bad' exited $rc, not 2"
done

# EntNet per story: every task's run reads the memory-story view.
tools/babi_table.sh "$tmp/story" --model entnet --per-story --jobs 2 "${flags[@]}" --memory-slots 2 \
  > "$tmp/story.md" 2> "$tmp/story.err" || { cat "$tmp/story.err"; fail "the per-story table failed"; }
grep -q '"complete": true' "$tmp/story/table.json" || fail "per-story table not complete"
for t in 1 3 20; do
  grep -q '"babi_view": *"memory-story"' "$tmp/story/task$t/config.json" ||
    fail "task $t did not train per story"
done

tools/babi_table.sh "$tmp/tenk" --set en-10k --jobs 2 "${flags[@]}" > "$tmp/tenk.md" 2> "$tmp/tenk.err" || {
  cat "$tmp/tenk.err"; fail "the en-10k table failed"; }
grep -q '^| 3 † | ' "$tmp/tenk.md" || fail "task 3 not marked † on en-10k"
grep -q '^| mean (19, without † 3) | ' "$tmp/tenk.md" || fail "no 19-task mean"
grep -q '"3": {[^}]*"train_set": "en", "dagger": true' "$tmp/tenk/table.json" || fail "JSON lacks the † task"
grep -q '"mean_error_19_complete": [0-9]' "$tmp/tenk/table.json" || fail "JSON lacks the 19-task mean"

# A malformed line in task 5: file and line named, exit 2, no table written.
rm -rf "$tmp/en/task5"
printf '1 Mary went home.\n2 Where is Mary? home 1\n' > "$data/en/qa5_fixture_train.txt"
rm -f "$tmp/en/table.json"
rc=0; tools/babi_table.sh "$tmp/en" "${flags[@]}" > "$tmp/bad.md" 2> "$tmp/bad.err" || rc=$?
[ "$rc" -eq 2 ] || fail "a malformed line exited $rc, not 2"
grep -q 'task 5 seed 1 failed (exit 2):.*qa5_fixture_train.txt:2: question without a tab-separated answer' \
  "$tmp/bad.err" || { cat "$tmp/bad.err"; fail "the error does not name file and line"; }
[ ! -e "$tmp/en/table.json" ] && [ ! -e "$tmp/en/table.json.tmp" ] || fail "a table was written"
[ ! -s "$tmp/bad.md" ] || fail "a table was printed"
# A missing file: named.
rm "$data/en/qa5_fixture_train.txt"
rc=0; tools/babi_table.sh "$tmp/en" "${flags[@]}" > /dev/null 2> "$tmp/missing.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q 'en/qa5_\*_train.txt: no such file' "$tmp/missing.err" ||
  { cat "$tmp/missing.err"; fail "a missing file is not named (exit $rc)"; }
# Bad options.
for bad in "--set en-1k" "--jobs 0" "--runs x" "--select test" "--babi-task 3" "--model"; do
  rc=0; tools/babi_table.sh "$tmp/x" $bad > /dev/null 2>&1 || rc=$?
  [ "$rc" -eq 2 ] || fail "'$bad' exited $rc, not 2"
done
echo "babi_table test: ok"
