# Sourced by check_install.sh and check_deb.sh: doc_block N prints the N-th ```sh block of
# docs/library.md (from 1), which the caller runs as the test, so the page shows what is tested.
doc_block() {
  awk -v want="$1" '/^```sh$/ { n++; inside = (n == want); next }
                    /^```$/ { inside = 0; next }
                    inside { print }' "$MEMGRAD_SOURCE/docs/library.md"
}
# A scratch directory holding `build` (a link to the build under test) and `tests` (a link to the
# sources' tests), where the docs' commands run as they are written; removed on exit.
make_scratch() {
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/memgrad-library.XXXXXX")
  trap 'rm -rf "$scratch"' EXIT
  ln -s "$MEMGRAD_BUILD" "$scratch/build"
  ln -s "$MEMGRAD_SOURCE/tests" "$scratch/tests"
  cd "$scratch"
}
