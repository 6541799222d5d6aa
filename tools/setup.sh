#!/usr/bin/env bash
# Installs what memgrad needs from Debian's packages (only what is missing; with sudo when not
# root), then configures and builds. Idempotent: a second run only rebuilds what changed.
#   tools/setup.sh                  -> Release build in ./build
#   MEMGRAD_BUILD_DIR=build-asan MEMGRAD_SANITIZE=ON tools/setup.sh   -> ASan+UBSan build
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake make libopenblas-dev libtbb-dev doctest-dev nlohmann-json3-dev zlib1g-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build_dir="${MEMGRAD_BUILD_DIR:-build}"
sanitize="${MEMGRAD_SANITIZE:-OFF}"
build_type="Release"
[ "$sanitize" = "ON" ] && build_type="RelWithDebInfo"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="$build_type" -DMEMGRAD_SANITIZE="$sanitize" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
