#!/usr/bin/env bash
# Installs the Debian packages weft's build, tests and main job need, then
# configures and builds the project with CMake + Ninja. It is idempotent: when
# every package is already installed (per dpkg -s) apt-get is not touched at
# all, so repeated runs (CI, scripts/test.sh, scripts/main.sh) cost only the
# incremental build. The build directory defaults to ./build and can be
# overridden with WEFT_BUILD_DIR. Arguments name the CMake targets to build
# (scripts/main.sh builds only `weft`); none builds everything. Compiles go
# through ccache, so a fresh clone on a machine that built weft before (CI, a
# second checkout) rebuilds from the cache. WEFT_SETUP_TESTS=1 (scripts/test.sh)
# adds what only the tests need: Chromium. clang-15 (also PoCL's) builds the libFuzzer targets
# of fuzz/.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

PACKAGES=(
  g++ cmake ninja-build pkg-config
  libz3-dev libcli11-dev doctest-dev librapidcheck-dev
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
  libsqlite3-dev nlohmann-json3-dev libfmt-dev
  python3 python3-numpy xz-utils ccache
  clang-15
)
# The tests also open the HTML report in a real browser (tests/cli/cli_browser_report.cpp).
if [[ "${WEFT_SETUP_TESTS:-0}" == 1 ]]; then
  PACKAGES+=(chromium)
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  # "Status: install ok installed" (a removed package may still answer dpkg -s)
  if ! dpkg -s "$pkg" 2>/dev/null | grep -q '^Status: install ok installed'; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "[setup] all ${#PACKAGES[@]} system packages present"
else
  echo "[setup] installing ${#missing[@]} missing package(s): ${missing[*]}"
  SUDO=()
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
      SUDO=(sudo -n)
    else
      echo "[setup] error: not root and sudo is not available; install: ${missing[*]}" >&2
      exit 1
    fi
  fi
  "${SUDO[@]}" apt-get update -qq </dev/null
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
  echo "[setup] packages installed"
fi

BUILD_DIR="${WEFT_BUILD_DIR:-build}"
echo "[setup] configuring in ${BUILD_DIR}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
# ccache shares compiles between clones: paths relative to the clone, the build folder's path
# kept out of the hash (debug information then names the first clone's folders).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
targets=()
for target in "$@"; do targets+=(--target "$target"); done
echo "[setup] building ${*:-everything} with $(nproc) job(s)"
cmake --build "$BUILD_DIR" -j"$(nproc)" "${targets[@]}"
echo "[setup] build ok: ${BUILD_DIR}"
