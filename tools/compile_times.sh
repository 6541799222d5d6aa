#!/usr/bin/env bash
# Where a build's time goes: builds memgrad from scratch in a scratch directory with a compiler
# launcher that records every file's CPU time (user + system), then prints the slowest files and
# the sum per folder. For keeping CI (both builds, .ci/run) under its 30 minutes.
#   tools/compile_times.sh [--sanitize] [--top N] [--target T]... [DIR]
#     --sanitize   the ASan+UBSan build of .ci/run instead of the Release one
#     --top N      how many of the slowest files to list (default 25)
#     --target T   build only T (repeatable; default everything)
#     DIR          the scratch build directory (default build-times or build-times-asan), emptied
# Run it on an otherwise idle machine: the CPU times are the figure, the wall time is printed too.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=OFF
top=25
targets=()
dir=""
while (($#)); do
  case "$1" in
    --sanitize) sanitize=ON; shift ;;
    --top) top=$2; shift 2 ;;
    --target) targets+=(--target "$2"); shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "compile_times.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) dir=$1; shift ;;
  esac
done
[[ "$top" =~ ^[1-9][0-9]*$ ]] || { echo "compile_times.sh: --top needs a whole number >= 1" >&2; exit 2; }
[ -n "$dir" ] || dir=$([ "$sanitize" = ON ] && echo build-times-asan || echo build-times)
build_type=Release
[ "$sanitize" = ON ] && build_type=RelWithDebInfo

command -v cmake >/dev/null || { echo "compile_times.sh: no cmake: run tools/setup.sh first" >&2; exit 2; }
rm -rf "$dir"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
log="$dir/compile_times.log"
launcher="$dir/time_compile.sh"
# The launcher runs the compiler and appends "cpu_seconds source" to the log (bash's time: user
# and system seconds of the compiler and its children, cc1plus and as).
cat > "$launcher" <<EOF
#!/usr/bin/env bash
source=""
for a; do case \$a in *.cpp|*.cxx) source=\$a ;; esac; done
TIMEFORMAT="%U %S"
times=\$(mktemp)
{ time "\$@" 2>&3; } 3>&2 2>"\$times" && status=0 || status=\$?
read -r user system < "\$times"
rm -f "\$times"
echo "\$user \$system \$source" >> "$log"
exit \$status
EOF
chmod +x "$launcher"

cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$build_type" -DMEMGRAD_SANITIZE="$sanitize" \
  -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" >/dev/null
start=$(date +%s)
(cd "$dir" && cmake --build . -j"$(nproc)" "${targets[@]}" >/dev/null)
wall=$(($(date +%s) - start))

root="$PWD/"
echo "$(wc -l < "$log") files, $wall s of wall time"
echo
echo "CPU s by folder:"
awk -v root="$root" '{ file = $3; sub(root, "", file); sub(/\/[^\/]*$/, "", file)
                      cpu[file] += $1 + $2; n[file]++; total += $1 + $2 }
                    END { for (f in cpu) printf "%8.1f  %3d files  %s\n", cpu[f], n[f], f
                          printf "%8.1f  all\n", total }' "$log" | sort -nr
echo
echo "slowest files (CPU s):"
awk -v root="$root" '{ file = $3; sub(root, "", file); printf "%8.1f  %s\n", $1 + $2, file }' "$log" |
  sort -nr | head -n "$top"
