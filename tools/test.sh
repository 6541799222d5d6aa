#!/usr/bin/env bash
# Sets up, builds, and runs the whole test suite (doctest executables and script checks) under
# ctest. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
# Headless Chromium for tests/scripts/render_pages.sh, which opens every page and figure the tools
# write. Measured here: 115 MB, 67 s to install (10 s of CPU) on a loaded machine, once per machine
# (the ASan pass finds it installed); without it that test is skipped and nothing in CI would see a
# page render. Not a build dependency: when it cannot be installed the suite still runs.
source tools/debian_packages.sh
install_debian_packages chromium ||
  echo "test: chromium could not be installed: the render test will be skipped" >&2
# jq: the table scripts (tools/mimic_table.sh, tools/progression_table.sh) read metrics.json with
# it, and their script tests skip without it.
install_debian_packages jq ||
  echo "test: jq could not be installed: the table script tests will be skipped" >&2
build_dir="${MEMGRAD_BUILD_DIR:-build}"
ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" "$@"
