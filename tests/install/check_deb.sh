#!/usr/bin/env bash
# ctest deb_package: builds the Debian package from the build (docs/library.md's second command
# block, which also asks apt whether its dependencies resolve here), unpacks it into a scratch
# root and checks its control fields and contents, and runs the packaged program.
#   usage: check_deb.sh BUILD_DIR
set -euo pipefail
MEMGRAD_BUILD=$(cd "$1" && pwd)
MEMGRAD_SOURCE=$(cd "$(dirname "$0")/../.." && pwd)
source "$MEMGRAD_SOURCE/tests/install/doc_commands.sh"
make_scratch

echo "== docs/library.md, second block"
doc_block 2
bash -euxo pipefail <(doc_block 2)

deb=deb/memgrad_0.1.0_amd64.deb
depends=$(dpkg-deb --field "$deb" Depends)
echo "Depends: $depends"
for p in libopenblas0 libtbb12 zlib1g libstdc++6; do
  grep -q "$p" <<<"$depends" || { echo "Depends lacks $p"; exit 1; }
done
dpkg-deb -x "$deb" root
for f in usr/bin/memgrad usr/lib/libmemgrad.so usr/lib/libmemgrad.a \
         usr/lib/cmake/memgrad/memgrad-config.cmake usr/lib/pkgconfig/memgrad.pc \
         usr/include/memgrad/engine/tape.hpp usr/include/memgrad/models/registry_check.hpp \
         usr/share/doc/memgrad/library.md; do
  [ -e "root/$f" ] || { echo "missing from the package: /$f"; exit 1; }
done
# Nothing outside /usr, and the packaged program runs (its libraries from the system).
[ "$(ls root)" = usr ] || { echo "the package installs outside /usr: $(ls root)"; exit 1; }
root/usr/bin/memgrad gradcheck --op softmax
echo "deb_package: all checks passed"
