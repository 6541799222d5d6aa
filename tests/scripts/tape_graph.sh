#!/usr/bin/env bash
# memgrad inspect --tape --format dot|svg through Graphviz: the DOT text of a tiny DNC's tape
# parses with dot, --format svg writes a self-contained SVG of one step's memory (clusters drawn),
# and without dot (MEMGRAD_DOT= ) svg is a clear error (exit 2) while dot and json still work.
# Skipped (77) where Graphviz's dot is not installed.
#   tests/scripts/tape_graph.sh MEMGRAD_BINARY
set -euo pipefail
bin=$1
fail() { echo "tape_graph test: $*" >&2; exit 1; }
command -v dot >/dev/null || { echo "SKIPPED: Graphviz's dot is not installed (apt-get install graphviz)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(--model dnc --task sum2seq --embedding 4 --hidden 6 --word-size 3 --memory-slots 5
      --threads 1 --input "3 1 / 4 1" --tape)

"$bin" inspect "${args[@]}" --format dot > "$tmp/tape.dot"
dot -Tsvg "$tmp/tape.dot" -o "$tmp/tape.svg" 2> "$tmp/dot.err" || fail "dot rejects the DOT text: $(cat "$tmp/dot.err")"
[ ! -s "$tmp/dot.err" ] || fail "dot warns: $(cat "$tmp/dot.err")"
grep -q '<svg' "$tmp/tape.svg" || fail "no SVG from dot"

"$bin" inspect "${args[@]}" --format svg --only enc/t1/memory --out "$tmp/step.svg" 2> "$tmp/wrote"
grep -q "^wrote $tmp/step.svg (" "$tmp/wrote" || fail "no 'wrote' line: $(cat "$tmp/wrote")"
for part in allocation usage write link read; do
  grep -q "<title>cluster_" "$tmp/step.svg" || fail "no clusters in the SVG"
  grep -q ">$part</text>" "$tmp/step.svg" || fail "the cluster '$part' is not drawn"
done
grep -q '>cumprod_exclusive</text>' "$tmp/step.svg" || fail "the allocation's cumprod_exclusive is not drawn"
if grep -qE '<script|<image|href="http' "$tmp/step.svg"; then fail "the SVG is not self-contained"; fi

# Without dot: svg names the fix and exits 2; dot and json still work.
set +e
MEMGRAD_DOT= "$bin" inspect "${args[@]}" --format svg > /dev/null 2> "$tmp/err"
code=$?
set -e
[ "$code" = 2 ] || fail "svg without dot exited $code, want 2"
grep -q "apt-get install graphviz" "$tmp/err" || fail "svg without dot: $(cat "$tmp/err")"
MEMGRAD_DOT= "$bin" inspect "${args[@]}" --format dot > "$tmp/no-dot.dot"
grep -q '^digraph tape {' "$tmp/no-dot.dot" || fail "--format dot without dot"
MEMGRAD_DOT= "$bin" inspect "${args[@]}" --format json > "$tmp/no-dot.json"
grep -q '"clusters"' "$tmp/no-dot.json" || fail "--format json without dot"
echo "tape_graph: ok"
