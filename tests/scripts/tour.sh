#!/usr/bin/env bash
# docs/tour.md cannot rot: every command in its ```sh blocks is run, in order, in a scratch
# directory (memgrad being the binary under test), and every file a command writes (--out,
# --html) must exist and be non-empty. The tour's SVG drawings need Graphviz's dot: without it
# the test is skipped (77).
#   tests/scripts/tour.sh MEMGRAD_BINARY
set -euo pipefail
bin=$(realpath "$1")
tour=$(realpath "$(dirname "$0")/../../docs/tour.md")
fail() { echo "tour test: $*" >&2; exit 1; }
command -v dot >/dev/null || { echo "SKIPPED: the tour draws with Graphviz's dot, which is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The commands: the lines of ```sh blocks (a trailing \ continues a line), memgrad -> the binary.
awk '/^```sh$/ {on = 1; next} /^```$/ {on = 0; next} on {print}' "$tour" > "$tmp/commands.sh"
[ -s "$tmp/commands.sh" ] || fail "no \`\`\`sh blocks in $tour"
cd "$tmp"
mkdir bin
ln -s "$bin" bin/memgrad
n=0
while IFS= read -r command; do
  n=$((n + 1))
  echo "tour command $n: $command"
  PATH="$tmp/bin:$PATH" bash -euo pipefail -c "$command" < /dev/null > "out.$n" 2>&1 ||
    fail "command $n failed: $command
$(tail -20 "out.$n")"
  for file in $(grep -oE -- '--(out|html) [^ ]+' <<< "$command" | awk '{print $2}'); do
    [ -s "$file" ] || fail "command $n did not write $file: $command"
  done
done < <(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$tmp/commands.sh")
[ "$n" -ge 8 ] || fail "only $n commands found in the tour"
echo "tour: $n commands ran"
