#!/usr/bin/env bash
# ctest install_example: installs memgrad from the build into a scratch prefix and builds and
# tests tests/install against that install tree (docs/library.md's first command block), then
# checks what the install holds: pkg-config builds (shared and static) whose registry holds every
# op and model, headers free of build paths and `using namespace`, and the op without a check
# failing as it must.   usage: check_install.sh BUILD_DIR
set -euo pipefail
MEMGRAD_BUILD=$(cd "$1" && pwd)
MEMGRAD_SOURCE=$(cd "$(dirname "$0")/../.." && pwd)
source "$MEMGRAD_SOURCE/tests/install/doc_commands.sh"
make_scratch
export PREFIX="$scratch/prefix"

echo "== docs/library.md, first block"
doc_block 1
bash -euxo pipefail <(doc_block 1)

echo "== installed files"
for f in bin/memgrad lib/libmemgrad.so lib/libmemgrad.a lib/cmake/memgrad/memgrad-config.cmake \
         lib/pkgconfig/memgrad.pc lib/pkgconfig/memgrad-static.pc \
         include/memgrad/engine/tape.hpp include/memgrad/ops/ops.hpp \
         include/memgrad/models/model.hpp include/memgrad/models/registry_check.hpp \
         include/memgrad/models/dnc/dnc_memory.hpp include/memgrad/tasks/task.hpp \
         share/doc/memgrad/library.md share/doc/memgrad/README.md; do
  [ -e "$PREFIX/$f" ] || { echo "missing: $PREFIX/$f"; exit 1; }
done
[ ! -e "$PREFIX/include/memgrad/engine/alloc_counter.hpp" ] ||
  { echo "the allocation counter (it replaces operator new) must not be installed"; exit 1; }
# The libraries must not replace their users' operator new.
if nm -C --defined-only "$PREFIX/lib/libmemgrad.a" 2>/dev/null | grep -q " T operator new("; then
  echo "libmemgrad.a defines operator new"; exit 1
fi
# No build-only detail: no path of the source or build tree, no `using namespace`, and every
# include of ours goes through memgrad/.
if grep -rlE "$MEMGRAD_SOURCE|$MEMGRAD_BUILD" "$PREFIX/include" "$PREFIX/lib/cmake" "$PREFIX/lib/pkgconfig"; then
  echo "installed files above name the source or build tree"; exit 1
fi
if grep -rn "using namespace" "$PREFIX/include"; then echo "using namespace in a header"; exit 1; fi
if grep -rnE '#include "(engine|ops|models|tasks)/' "$PREFIX/include"; then
  echo "installed headers above include ours without memgrad/"; exit 1
fi

echo "== pkg-config: the registry of a program linked with memgrad and memgrad-static"
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
# shellcheck disable=SC2046
g++ -c tests/install/pkgconfig_probe.cpp -o probe.o $(pkg-config --cflags memgrad)
for pc in memgrad memgrad-static; do
  # shellcheck disable=SC2046
  g++ probe.o -o "probe-$pc" $(pkg-config --libs "$pc") -Wl,-rpath,"$PREFIX/lib"
  "./probe-$pc"
done

echo "== an op without a gradient-check case fails the user's check, naming it"
set +e
out=$(example/missing_check)
code=$?
set -e
echo "$out"
[ "$code" -eq 1 ] || { echo "missing_check exited $code, not 1"; exit 1; }
grep -q "op 'unchecked_double' has no gradient-check case" <<<"$out"
echo "install_example: all checks passed"
