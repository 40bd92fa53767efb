#!/usr/bin/env bash
# Packs what a lent NVIDIA machine needs to run weft's GPU measurements (bench/nvidia/run.sh):
# stripped weft, weft_bench_table3, weft_bench_programs and the OpenCL test executables built here (Debian 12), and
# the shared libraries they load that such a machine lacks (Z3, fmt, SQLite, the ocl-icd
# loader, CLBlast). The machine has NVIDIA's OpenCL driver; run.sh registers it with the loader.
# Output: .gpu-session/pack.tar.xz (git-ignored through .git/info/exclude), a few tens of MB.
# Usage: bash bench/nvidia/pack.sh [BUILD_DIR]   (default build; build it first)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin/tests" "$stage/lib"
strip -o "$stage/bin/weft" "$build/weft"
strip -o "$stage/bin/weft_bench_table3" "$build/bench/weft_bench_table3"
strip -o "$stage/bin/weft_bench_programs" "$build/bench/weft_bench_programs"
# The OpenCL tests: every executable ctest labels `opencl`.
(cd "$build" && ctest -N -V -L opencl) |
  sed -n 's/^.*Test command: \([^ ]*\).*$/\1/p' | sort -u | while read -r exe; do
    strip -o "$stage/bin/tests/$(basename "$exe")" "$exe"
  done
for lib in libz3.so.4 libfmt.so.9 libsqlite3.so.0 libOpenCL.so.1 libclblast.so.1; do
  cp -L "/usr/lib/x86_64-linux-gnu/$lib" "$stage/lib/"
done
mkdir -p "$root/.gpu-session"
grep -qx '/.gpu-session/' "$root/.git/info/exclude" 2>/dev/null ||
  { mkdir -p "$root/.git/info"; echo '/.gpu-session/' >>"$root/.git/info/exclude"; }
tar -C "$stage" -cJf "$root/.gpu-session/pack.tar.xz" bin lib
ls -la "$root/.gpu-session/pack.tar.xz"
