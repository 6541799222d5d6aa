#!/bin/bash
# Cross-checks `memgrad metrics` against scikit-learn on a few hundred random cases
# (tests/scripts/metrics_vs_sklearn.py). usage: bash metrics_vs_sklearn.sh /path/to/memgrad
# Exits 77 (skipped) when the system Python lacks scikit-learn or numpy.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 /path/to/memgrad" >&2
  exit 2
fi
binary=$1
if [[ ! -x $binary ]]; then
  echo "error: memgrad binary '$binary' not found or not executable" >&2
  exit 2
fi
if ! /usr/bin/python3 -c "import sklearn, numpy" 2>/dev/null; then
  echo "SKIPPED: python3-sklearn not installed (apt-get install python3-sklearn)"
  exit 77
fi
exec /usr/bin/python3 "$(dirname "$0")/metrics_vs_sklearn.py" "$binary" "${@:2}"
