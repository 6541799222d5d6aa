#!/usr/bin/env bash
# Keeps the record of a table's finished runs in docs/results/runs/, so that a table filled across
# sittings survives the sitting (runs/ is local to the machine): for every run directory under
# TABLE_DIR that has metrics.json, its config.json, metrics.json and best.json (when there), and
# TABLE_DIR/times/ (the table runner's wall times). Never a checkpoint or a log. To go on with the
# table in a later sitting: cp -r docs/results/runs/NAME runs/ and run the table's command again;
# the runner keeps every run that has metrics.json and trains the rest.
#   tools/keep_runs.sh TABLE_DIR [DEST]     DEST defaults to docs/results/runs/$(basename TABLE_DIR)
set -euo pipefail
me=keep_runs.sh
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $me TABLE_DIR [DEST]" >&2; exit 2; }
src=${1%/}
[ -d "$src" ] || { echo "$me: $src: no such directory" >&2; exit 2; }
dest=${2:-"$(cd "$(dirname "$0")/.." && pwd)/docs/results/runs/$(basename "$src")"}
n=0
while IFS= read -r metrics; do
  run=$(dirname "$metrics")
  rel=${run#"$src"}
  mkdir -p "$dest$rel"
  for f in config.json metrics.json best.json; do
    [ -f "$run/$f" ] && cp "$run/$f" "$dest$rel/$f"
  done
  n=$((n + 1))
done < <(find "$src" -name metrics.json -not -path "*/times/*" | sort)
[ -d "$src/times" ] && { mkdir -p "$dest/times"; cp "$src/times/"* "$dest/times/" 2>/dev/null || true; }
echo "$me: $n finished run(s) of $src kept in $dest"
