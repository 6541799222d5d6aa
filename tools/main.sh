#!/usr/bin/env bash
# The main job on its embedded default data: set up, build, then check every registered op's
# gradient in float64 (until the first model lands, this is what memgrad demonstrates).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh >&2
exec "${MEMGRAD_BUILD_DIR:-build}/memgrad" gradcheck --op all "$@"
