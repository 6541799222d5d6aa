#!/usr/bin/env bash
# Builds a bAbI data folder whose en-10k task 3 trains on the official 1k file plus N generated
# questions (memgrad babi-gen, default 9,000: the notes' "†regenerated" substitute for the
# missing en-10k training file), tested on the official test file; and, with --only-generated,
# an en folder whose task 3 trains on 1,000 generated questions alone (the generator's check:
# MemN2N trained on it against MemN2N trained on the official 1k file). Writes nothing else.
#   tools/babi_qa3_mix.sh OUT_DIR [--data DIR] [--questions N] [--seed S] [--only-generated]
# Then: memgrad train --task babi --babi-set en-10k --babi-task 3 --data OUT_DIR ...
set -euo pipefail
cd "$(dirname "$0")/.."
me=babi_qa3_mix.sh
[ $# -ge 1 ] && [ "${1#-}" = "$1" ] || { echo "usage: $me OUT_DIR [--data DIR] [--questions N] [--seed S] [--only-generated]" >&2; exit 2; }
out=$1; shift
data=../shared/data/babi questions=9000 seed=1 only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --data) data=$2; shift 2 ;;
    --questions) questions=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --only-generated) only=1; shift ;;
    *) echo "$me: unknown option $1" >&2; exit 2 ;;
  esac
done
bin="${MEMGRAD_BIN:-${MEMGRAD_BUILD_DIR:-build}/memgrad}"
[ -x "$bin" ] || tools/setup.sh >&2
src=$data/tasks_1-20_v1-2
[ -d "$src" ] || src=$data
for f in "$src/en/qa3_three-supporting-facts_train.txt" "$src/en/qa3_three-supporting-facts_test.txt"; do
  [ -f "$f" ] || { echo "$me: $f not found (--data DIR holds tasks_1-20_v1-2/)" >&2; exit 2; }
done
set_dir=en-10k; [ "$only" = 1 ] && set_dir=en && questions=${questions/9000/1000}
dir=$out/tasks_1-20_v1-2/$set_dir
mkdir -p "$dir"
tmp=$(mktemp "$dir/.qa3.XXXXXX")
trap 'rm -f "$tmp"' EXIT
if [ "$only" = 1 ]; then
  "$bin" babi-gen --task 3 --questions "$questions" --seed "$seed" > "$tmp"
else
  { cat "$src/en/qa3_three-supporting-facts_train.txt"
    "$bin" babi-gen --task 3 --questions "$questions" --seed "$seed"; } > "$tmp"
fi
mv "$tmp" "$dir/qa3_three-supporting-facts_train.txt"
cp "$src/en/qa3_three-supporting-facts_test.txt" "$dir/"  # en-10k's test file is en's, byte for byte
echo "$dir: $(grep -c $'\t' "$dir/qa3_three-supporting-facts_train.txt") training questions"
