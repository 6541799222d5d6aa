#!/usr/bin/env bash
# Installs what memgrad needs from Debian's packages (only what is missing; with sudo when not
# root), then configures and builds. Idempotent: a second run only rebuilds what changed.
#   tools/setup.sh                  -> Release build in ./build
#   MEMGRAD_BUILD_DIR=build-asan MEMGRAD_SANITIZE=ON tools/setup.sh   -> ASan+UBSan build
set -euo pipefail
cd "$(dirname "$0")/.."

source tools/debian_packages.sh
install_debian_packages g++ cmake make libopenblas-dev libtbb-dev doctest-dev nlohmann-json3-dev zlib1g-dev pkgconf \
  libxsmm-dev libopenmpi-dev openmpi-bin
# Graphviz's dot draws the tape (memgrad inspect --tape --format svg; docs/inspect.md).
install_debian_packages graphviz

build_dir="${MEMGRAD_BUILD_DIR:-build}"
sanitize="${MEMGRAD_SANITIZE:-OFF}"
build_type="Release"
[ "$sanitize" = "ON" ] && build_type="RelWithDebInfo"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="$build_type" -DMEMGRAD_SANITIZE="$sanitize" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
