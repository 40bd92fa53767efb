#!/usr/bin/env bash
# The project's main job: build weft (scripts/setup.sh), typecheck every
# example program with `weft check`, then run examples/dot.weft in the
# reference interpreter on two generated random vectors and print the result
# next to NumPy's dot product for comparison. Inputs and outputs live in a
# temporary directory that is removed at exit.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR="${WEFT_BUILD_DIR:-build}"
WEFT="${BUILD_DIR}/weft"
PY=/usr/bin/python3   # Debian's python, the one that has numpy

bash scripts/setup.sh

if [[ ! -x "$WEFT" ]]; then
  echo "[main] error: ${WEFT} was not built (does cli/ have sources yet?)" >&2
  exit 1
fi

shopt -s nullglob
examples=(examples/*.weft)
if ((${#examples[@]} == 0)); then
  echo "[main] error: no examples/*.weft found" >&2
  exit 1
fi
for prog in "${examples[@]}"; do
  echo "[main] weft check ${prog}"
  "$WEFT" check "$prog"
done

tmp="$(mktemp -d "${TMPDIR:-/tmp}/weft_main.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

N="${WEFT_DOT_N:-1024}"
echo "[main] generating two random float32 vectors of length ${N}"
"$PY" -c '
import sys, numpy as np
d, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(1)
np.save(f"{d}/a.npy", rng.standard_normal(n).astype("<f4"))
np.save(f"{d}/b.npy", rng.standard_normal(n).astype("<f4"))
' "$tmp" "$N"

echo "[main] weft run examples/dot.weft --in a.npy --in b.npy --out y.npy"
"$WEFT" run examples/dot.weft --in "$tmp/a.npy" --in "$tmp/b.npy" --out "$tmp/y.npy"

"$PY" -c '
import sys, numpy as np
d = sys.argv[1]
a, b, y = (np.load(f"{d}/{n}.npy") for n in ("a", "b", "y"))
ref = np.dot(a.astype(np.float64), b.astype(np.float64))
print(f"[main] weft dot = {y.ravel().tolist()}  shape={y.shape} dtype={y.dtype}")
print(f"[main] numpy dot = {ref:.6f}")
' "$tmp"
