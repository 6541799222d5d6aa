#!/usr/bin/env bash
# memgrad figure's command line: --list names every figure with its paper; a figure is drawn from
# a tiny trained run (the DMNC write gates: one bar per event plus the end marker, values printed,
# the sample's target and prediction); bad usage exits 2 naming what is wrong, writing no file.
# (tests/scripts/render_pages.sh opens the figures in Chromium.)
#   tests/scripts/figure_cli.sh MEMGRAD_BINARY
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "figure_cli test: $*" >&2; exit 1; }
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

list=$("$bin" figure --list)
for name in dmnc-fig3 dmnc-fig4 memn2n-hops dmn-plus-episodes entnet-gates ebmrnn-fig2 ebmrnn-fig3 \
  amn-fig3 amn-fig4; do
  grep -q "^$name " <<<"$list" || fail "--list lacks $name"
done
grep -q 'DMNC (Le et al. 2018), Fig. 3' <<<"$list" || fail "--list lacks the paper of dmnc-fig3"

"$bin" train --task sum2seq --model dmnc-late --iterations 2 --hidden 8 --embedding 8 \
  --memory-slots 4 --word-size 4 --batch 4 --test-samples 6 --out "$tmp/run" --quiet >/dev/null
"$bin" figure dmnc-fig3 --checkpoint "$tmp/run" --sample 4 --out "$tmp/f.svg" >/dev/null
# Test sample 4's first view, as inspect prints it; one bar per number and one for the end marker.
x1=$("$bin" inspect --checkpoint "$tmp/run" --sample 4 --only write_gate | sed -n 's/^  x1: //p')
bars=$(grep -o 'class="bar"' "$tmp/f.svg" | wc -l)
[ "$bars" -eq $(($(wc -w <<<"$x1") + 1)) ] || fail "$bars bars for x1 = '$x1' and its end marker"
grep -q '>end</text>' "$tmp/f.svg" || fail "no end-marker bar"
grep -q "M1's write gate" "$tmp/f.svg" || fail "no title"
grep -q 'predicted: ' "$tmp/f.svg" || fail "no prediction under the figure"
head -c 5 "$tmp/f.svg" | grep -q '<?xml' || fail "the SVG file has no XML declaration"
"$bin" figure dmnc-fig4 --checkpoint "$tmp/run" --out "$tmp/f.html" >/dev/null
grep -q '<table>' "$tmp/f.html" && grep -q '<svg' "$tmp/f.html" || fail "the page lacks its lines or figure"
"$bin" inspect --checkpoint "$tmp/run" --sample 4 --html "$tmp/page.html" >/dev/null
for name in dmnc-fig3 dmnc-fig4; do
  grep -q "memgrad figure $name" "$tmp/page.html" || fail "the inspect page lacks $name"
done

# AMN (Figs. 3 and 4) on a bAbI file of a few stories: a cell per bank (3) and sentence, a graph
# panel per sentence and one for the answer.
data="$tmp/babi/tasks_1-20_v1-2/en"
mkdir -p "$data"
story="1 Mary went to the kitchen.
2 John moved to the garden.
3 Sandra went to the office.
4 Where is Mary?	kitchen	1
"
for split in train test; do for i in 1 2 3; do printf '%s' "$story"; done > "$data/qa1_fixture_$split.txt"; done
"$bin" train --task babi --model amn --babi-task 1 --data "$tmp/babi" --epochs 1 --embedding-dim 4 \
  --max-banks 3 --out "$tmp/amn" --quiet > /dev/null
"$bin" figure amn-fig3 --checkpoint "$tmp/amn" --sample 1 --out "$tmp/amn3.svg" >/dev/null
"$bin" figure amn-fig4 --checkpoint "$tmp/amn" --sample 1 --out "$tmp/amn4.html" >/dev/null
cells=$(( $(grep -o 'class="bank-cell' "$tmp/amn3.svg" | wc -l) + $(grep -o 'class="absent"' "$tmp/amn3.svg" | wc -l) ))
[ "$cells" -eq 9 ] || fail "amn-fig3 has $cells cells for 3 banks and 3 sentences"
[ "$(grep -o 'class="entered"' "$tmp/amn3.svg" | wc -l)" -eq 10 ] ||
  fail "amn-fig3 does not mark the story's 10 distinct words entering m_0"
grep -q '>3. sandra went to the office</text>' "$tmp/amn3.svg" || fail "amn-fig3 lacks the story"
[ "$(grep -o 'class="panel"' "$tmp/amn4.html" | wc -l)" -eq 4 ] ||
  fail "amn-fig4 has no panel per sentence and for the answer"
[ "$(grep -o 'class="edge-now"' "$tmp/amn4.html" | wc -l)" -eq 12 ] ||
  fail "amn-fig4 does not highlight each sentence's 4 edges"

expect_2() { # expect_2 PATTERN ARGS...: memgrad exits 2 with PATTERN in its message
  local pattern=$1 rc=0
  shift
  "$bin" "$@" > /dev/null 2> "$tmp/err" || rc=$?
  [ "$rc" -eq 2 ] || fail "memgrad $* exited $rc, expected 2"
  grep -q -- "$pattern" "$tmp/err" || fail "memgrad $*: no '$pattern' in: $(cat "$tmp/err")"
}
expect_2 "unknown figure 'nope'" figure nope --checkpoint "$tmp/run" --out "$tmp/x.svg"
expect_2 "is drawn for model memn2n" figure memn2n-hops --checkpoint "$tmp/run" --out "$tmp/x.svg"
expect_2 "FILE.svg or --out FILE.html" figure dmnc-fig3 --checkpoint "$tmp/run" --out "$tmp/x.png"
expect_2 "checkpoint DIR is required" figure dmnc-fig3 --out "$tmp/x.svg"
expect_2 "out of range" figure dmnc-fig3 --checkpoint "$tmp/run" --sample 99 --out "$tmp/x.svg"
expect_2 "one figure NAME" figure --checkpoint "$tmp/run" --out "$tmp/x.svg"
expect_2 "is drawn for model amn" figure amn-fig3 --checkpoint "$tmp/run" --out "$tmp/x.svg"
[ ! -e "$tmp/x.svg" ] && [ ! -e "$tmp/x.png" ] || fail "a refused command wrote a file"
echo "figure_cli: ok"
