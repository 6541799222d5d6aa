#!/usr/bin/env bash
# Sets up, builds, and runs the whole test suite (doctest executables and script checks) under
# ctest. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
build_dir="${MEMGRAD_BUILD_DIR:-build}"
ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" "$@"
