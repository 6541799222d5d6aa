#!/usr/bin/env bash
# Every page and SVG the tools write, opened in headless Chromium: the main job (tools/main.sh on
# a tiny model trained 3 steps) and its page, `memgrad inspect --html` pages, and every figure of
# `memgrad figure --list` whose model and task can be trained here in seconds (sum2seq, bAbI on a
# hand-made story file, AMN's two figures among them; the EBmRNN figures need PhysioNet data and
# the GRNN figures CodiEsp, and are drawn when ../shared/data has them). Each must be
# self-contained (no URL but the SVG namespace), parse
# (Chromium's DOM holds no parser error and every <svg> of the file), and render: a screenshot
# with enough non-white pixels. Skipped (exit 77), saying why, where Chromium or Python 3 (which
# reads the screenshots' PNG) is missing. With MEMGRAD_RENDER_WRITE_ONLY=1 (the sanitized build's
# ctest entry) the pages are written and checked self-contained but not opened: Chromium runs no
# memgrad code, and the Release suite renders the same pages.
#   tests/scripts/render_pages.sh MEMGRAD_BINARY
set -euo pipefail
bin=$(realpath "$1")
cd "$(dirname "$0")/../.."
write_only=${MEMGRAD_RENDER_WRITE_ONLY:-}
if [ -z "$write_only" ]; then
  chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
  [ -n "$chrome" ] || { echo "render_pages.sh: Chromium is not installed (apt-get install chromium): skipped"; exit 77; }
  command -v python3 >/dev/null || { echo "render_pages.sh: python3 is not installed: skipped"; exit 77; }
fi
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail() { echo "render_pages test: $*" >&2; exit 1; }
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

pages=()
# The main job with tiny settings: it trains, prints the table, the sample and its write gates,
# and names its page.
tiny=(--hidden 8 --embedding 8 --memory-slots 4 --word-size 4 --batch 4 --test-samples 8)
MEMGRAD_BIN="$bin" tools/main.sh --iterations 3 "${tiny[@]}" --out "$tmp/main" \
  > "$tmp/main.out" 2>&1 || { cat "$tmp/main.out"; fail "tools/main.sh failed"; }
grep -q 'enc1/write_gate' "$tmp/main.out" || fail "the main job printed no write gates"
grep -q '^  predicted: ' "$tmp/main.out" || fail "the main job printed no prediction"
page=$(sed -n 's/^.*figures): //p' "$tmp/main.out")
[ "$page" = "$tmp/main/inspect.html" ] && [ -s "$page" ] || fail "the main job named no page ($page)"
pages+=("$page")
for name in dmnc-fig3 dmnc-fig4; do
  "$bin" figure "$name" --checkpoint "$tmp/main" --sample 4 --out "$tmp/$name.svg" >/dev/null
  "$bin" figure "$name" --checkpoint "$tmp/main" --out "$tmp/$name.html" >/dev/null
  pages+=("$tmp/$name.svg" "$tmp/$name.html")
done
"$bin" train --task sum2seq --model dmnc-early --iterations 2 "${tiny[@]}" --out "$tmp/early" \
  --quiet > /dev/null
"$bin" figure dmnc-fig3 --checkpoint "$tmp/early" --out "$tmp/early-fig3.svg" >/dev/null
pages+=("$tmp/early-fig3.svg")

# bAbI: one task file of a few stories, each model one epoch.
data="$tmp/babi/tasks_1-20_v1-2/en"
mkdir -p "$data"
story="1 Mary went to the kitchen.
2 John moved to the garden.
3 Where is Mary?	kitchen	1
4 Sandra went to the office.
5 Where is Sandra?	office	4
"
for split in train test; do for i in 1 2 3; do printf '%s' "$story"; done > "$data/qa1_fixture_$split.txt"; done
for pair in memn2n:memn2n-hops dmn-plus:dmn-plus-episodes entnet:entnet-gates; do
  model=${pair%%:*} name=${pair#*:}
  "$bin" train --task babi --model "$model" --babi-task 1 --data "$tmp/babi" --epochs 1 \
    --embedding-dim 8 --out "$tmp/$model" --quiet > /dev/null 2> "$tmp/$model.err" ||
    { cat "$tmp/$model.err"; fail "training $model failed"; }
  "$bin" figure "$name" --checkpoint "$tmp/$model" --sample 1 --out "$tmp/$name.svg" >/dev/null
  "$bin" inspect --checkpoint "$tmp/$model" --sample 1 --html "$tmp/$model.html" >/dev/null
  grep -q "memgrad figure $name" "$tmp/$model.html" || fail "the $model page lacks its figure"
  pages+=("$tmp/$name.svg" "$tmp/$model.html")
done

# EntNet per story: the gates of a whole story and a row of output attention per question.
"$bin" train --task babi --model entnet --babi-view memory-story --babi-task 1 --data "$tmp/babi" \
  --epochs 1 --embedding-dim 8 --out "$tmp/entnet-story" --quiet > /dev/null 2> "$tmp/entnet-story.err" ||
  { cat "$tmp/entnet-story.err"; fail "training entnet per story failed"; }
"$bin" figure entnet-gates --checkpoint "$tmp/entnet-story" --sample 1 --out "$tmp/entnet-story.svg" >/dev/null
grep -q "output attention, question 2" "$tmp/entnet-story.svg" || fail "per-story gates lack question 2's row"
"$bin" inspect --checkpoint "$tmp/entnet-story" --sample 1 --html "$tmp/entnet-story.html" >/dev/null
grep -q "memgrad figure entnet-gates" "$tmp/entnet-story.html" || fail "the per-story page lacks its figure"
pages+=("$tmp/entnet-story.svg" "$tmp/entnet-story.html")

# AMN draws two figures (the paper's Figs. 3 and 4), each as SVG and as a page.
"$bin" train --task babi --model amn --babi-task 1 --data "$tmp/babi" --epochs 1 --embedding-dim 8 \
  --out "$tmp/amn" --quiet > /dev/null 2> "$tmp/amn.err" || { cat "$tmp/amn.err"; fail "training amn failed"; }
for name in amn-fig3 amn-fig4; do
  "$bin" figure "$name" --checkpoint "$tmp/amn" --sample 1 --out "$tmp/$name.svg" >/dev/null
  "$bin" figure "$name" --checkpoint "$tmp/amn" --sample 1 --out "$tmp/$name.html" >/dev/null
  pages+=("$tmp/$name.svg" "$tmp/$name.html")
done
"$bin" inspect --checkpoint "$tmp/amn" --sample 1 --html "$tmp/amn.html" >/dev/null
for name in amn-fig3 amn-fig4; do
  grep -q "memgrad figure $name" "$tmp/amn.html" || fail "the amn page lacks $name"
done
pages+=("$tmp/amn.html")

shared="${MEMGRAD_SHARED_DIR:-../shared}/data"
if [ -d "$shared/physionet-challenge-2012" ]; then
  "$bin" train --task physionet2012 --model ebmrnn --data "$shared/physionet-challenge-2012" \
    --iterations 1 --bootstrap-resamples 10 --out "$tmp/ebmrnn" --quiet > /dev/null \
    2> "$tmp/ebmrnn.err" || { cat "$tmp/ebmrnn.err"; fail "training ebmrnn failed"; }
  for name in ebmrnn-fig2 ebmrnn-fig3; do
    "$bin" figure "$name" --checkpoint "$tmp/ebmrnn" --out "$tmp/$name.svg" >/dev/null
    pages+=("$tmp/$name.svg")
  done
  "$bin" inspect --checkpoint "$tmp/ebmrnn" --html "$tmp/ebmrnn.html" >/dev/null
  pages+=("$tmp/ebmrnn.html")
else
  echo "render_pages.sh: no PhysioNet data in $shared: the EBmRNN figures are not drawn"
fi

if [ -d "$shared/codiesp" ]; then
  # A tiny GRNN, one epoch of two steps on notes cut to 30 words: the figure's rows and words.
  "$bin" train --task codiesp --model grnn --data "$shared/codiesp" --epochs 1 --batch 250 \
    --max-length 30 --embedding 8 --control 4 --out "$tmp/grnn" --quiet > /dev/null \
    2> "$tmp/grnn.err" || { cat "$tmp/grnn.err"; fail "training grnn failed"; }
  "$bin" figure grnn-fig4 --checkpoint "$tmp/grnn" --sample 2 --out "$tmp/grnn-fig4.svg" >/dev/null
  "$bin" figure grnn-fig4 --checkpoint "$tmp/grnn" --out "$tmp/grnn-fig4.html" >/dev/null
  grep -q '\[gold\]' "$tmp/grnn-fig4.svg" || fail "grnn-fig4 has no gold label row"
  "$bin" inspect --checkpoint "$tmp/grnn" --html "$tmp/grnn.html" >/dev/null
  grep -q "memgrad figure grnn-fig4" "$tmp/grnn.html" || fail "the grnn page lacks its figure"
  # Fig. 3 left from the run's metrics.json (per_label), with its table on the page.
  "$bin" figure grnn-fig3 --checkpoint "$tmp/grnn" --out "$tmp/grnn-fig3.svg" >/dev/null
  "$bin" figure grnn-fig3 --checkpoint "$tmp/grnn" --out "$tmp/grnn-fig3.html" >/dev/null
  grep -q "labels per bin" "$tmp/grnn-fig3.svg" || fail "grnn-fig3 has no frequency axis"
  grep -q "<td>grnn</td>" "$tmp/grnn-fig3.html" || fail "the grnn-fig3 page lacks its table"
  pages+=("$tmp/grnn-fig4.svg" "$tmp/grnn-fig4.html" "$tmp/grnn.html" "$tmp/grnn-fig3.svg")
else
  echo "render_pages.sh: no CodiEsp data in $shared: the GRNN figures are not drawn"
fi

if [ -d "$shared/mimic-iii-demo" ]; then
  # The DMNC figures on MIMIC-III (the paper's own data): a tiny dmnc-early, one epoch; Figs. 3-4
  # with the codes' titles and the page with the paper's Table 4.
  "$bin" train --task mimic-drugs --model dmnc-early --data "$shared/mimic-iii-demo" --epochs 1 \
    --batch 16 "${tiny[@]:0:8}" --out "$tmp/mimic" --quiet > /dev/null 2> "$tmp/mimic.err" ||
    { cat "$tmp/mimic.err"; fail "training dmnc-early on mimic-drugs failed"; }
  "$bin" figure dmnc-fig3 --checkpoint "$tmp/mimic" --out "$tmp/mimic-fig3.svg" >/dev/null 2>&1
  "$bin" figure dmnc-fig4 --checkpoint "$tmp/mimic" --out "$tmp/mimic-fig4.html" >/dev/null 2>&1
  grep -q "Case study (the paper's Table 4)" "$tmp/mimic-fig4.html" || fail "no Table 4 on the page"
  pages+=("$tmp/mimic-fig3.svg" "$tmp/mimic-fig4.html")
else
  echo "render_pages.sh: no MIMIC-III demo in $shared: the DMNC figures on mimic-drugs are not drawn"
fi

# The knowledge-base memory networks on CodiEsp (one epoch of a tiny C-MemNN): C-MemNN Fig. 3 from
# the run's log and the addressing weights per hop of test note 0.
codiesp="$shared/codiesp"
if [ -d "$codiesp" ] && [ -d "$shared/disease-ontology" ]; then
  "$bin" train --task codiesp-kb --model c-memnn --data "$codiesp" \
    --kb-dir "$shared/disease-ontology" --icd-dir "$shared/icd-code-tables" \
    --titles "$shared/icd-code-tables/icd10cm-order-Jan-2021.csv.gz" --hops 3 --embedding-dim 8 \
    --gate-hidden 4 --epochs 2 --out "$tmp/c-memnn" --quiet > /dev/null 2> "$tmp/c-memnn.err" ||
    { cat "$tmp/c-memnn.err"; fail "training c-memnn failed"; }
  "$bin" figure cmemnn-fig3 --checkpoint "$tmp/c-memnn" --out "$tmp/cmemnn-fig3.svg" >/dev/null
  "$bin" figure kb-hops --checkpoint "$tmp/c-memnn" --out "$tmp/kb-hops.svg" >/dev/null 2>&1
  pages+=("$tmp/cmemnn-fig3.svg" "$tmp/kb-hops.svg")
else
  echo "render_pages.sh: no CodiEsp data in $shared: the C-MemNN figures are not drawn"
fi

# Every figure of the registry is drawn above (the EBmRNN, GRNN and C-MemNN ones where the data are).
for name in $("$bin" figure --list | awk '/^[a-z]/ {print $1}'); do
  [ -s "$tmp/$name.svg" ] || [[ $name == ebmrnn-* && ! -d "$shared/physionet-challenge-2012" ]] ||
    [[ $name == grnn-* && ! -d "$shared/codiesp" ]] ||
    [[ ( $name == cmemnn-fig3 || $name == kb-hops ) && ! -d "$shared/codiesp" ]] ||
    fail "figure $name is not drawn by this test"
done

# A figure's bars, cells and labels cover well over 0.2 % of the window; a blank page none: a page
# renders when more than 1 / ink_share of its pixels are not white.
ink_share=500
# count_ink PNG SHARE: "ink total" of an 8-bit RGB(A) PNG, ink being its non-white pixels counted
# row by row until there are more than total / SHARE: undoing the PNG filters in Python took 2-3 s
# for a whole 1200x900 screenshot, most of this test's time, and a page's ink is near its top.
count_ink() {
  python3 - "$1" "$2" <<'EOF'
import struct, sys, zlib
data, share = open(sys.argv[1], "rb").read(), int(sys.argv[2])
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, width = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        assert depth == 8 and colour in (2, 6), "unexpected PNG format"
        bpp = 3 if colour == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw, stride = zlib.decompress(idat), width * bpp
need = width * height // share + 1
prev, ink = bytearray(stride), 0
for y in range(height):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):  # undo the PNG filters
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    ink += sum(1 for x in range(0, stride, bpp) if min(line[x:x + 3]) < 200)
    if ink >= need:
        break
    prev = line
print(ink, width * height)
EOF
}

flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --mute-audio
       --host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$tmp/profile")
for p in "${pages[@]}"; do
  [ -s "$p" ] || fail "$p was not written"
  # Self-contained: no address but the SVG (and XML) namespace.
  if grep -o 'https\?://[^" ]*' "$p" | grep -qv '^http://www.w3.org/'; then
    fail "$p refers to the network: $(grep -o 'https\?://[^" ]*' "$p" | grep -v w3.org | head -1)"
  fi
  [ -z "$write_only" ] || continue
  dom=$(timeout 120 "$chrome" "${flags[@]}" --dump-dom "file://$p" 2>/dev/null) ||
    fail "Chromium could not open $p"
  if grep -q 'parsererror' <<<"$dom"; then fail "$p does not parse: $(grep -o 'parsererror.*' <<<"$dom" | head -c 300)"; fi
  want=$(grep -o '<svg' "$p" | wc -l)
  got=$(grep -o '<svg' <<<"$dom" | wc -l)
  [ "$got" -eq "$want" ] || fail "$p: Chromium's DOM holds $got <svg> of the file's $want"
  shot="$tmp/shot-$(basename "$p").png"
  timeout 120 "$chrome" "${flags[@]}" --window-size=1200,900 --screenshot="$shot" "file://$p" \
    > /dev/null 2>&1 || fail "Chromium could not take a screenshot of $p"
  read -r ink total < <(count_ink "$shot" "$ink_share")
  [ "$ink" -gt $((total / ink_share)) ] || fail "$p renders blank ($ink of $total pixels not white)"
  echo "rendered $(basename "$p"): at least $ink of $total pixels drawn"
done
if [ -n "$write_only" ]; then
  echo "render_pages: ${#pages[@]} pages and figures written, self-contained (not opened: MEMGRAD_RENDER_WRITE_ONLY)"
else
  echo "render_pages: ${#pages[@]} pages and figures render in Chromium"
fi
