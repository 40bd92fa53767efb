#!/usr/bin/env bash
# Builds weft (installing system packages if needed, via scripts/setup.sh)
# and runs the whole CTest suite. This is the project's one test command,
# used by the README and by CI (.ci/run). Extra arguments go to ctest, e.g.
#   bash scripts/test.sh -L unit        bash scripts/test.sh -R infra
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR="${WEFT_BUILD_DIR:-build}"

WEFT_SETUP_TESTS=1 bash scripts/setup.sh
echo "[test] running ctest in ${BUILD_DIR}"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 "$@" </dev/null
