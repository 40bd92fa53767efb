#!/usr/bin/env bash
# The project's main job: build weft alone (scripts/setup.sh weft), typecheck every
# example program with `weft check`, run examples/dot.weft in the reference
# interpreter and on OpenCL (PoCL unless a GPU is present), and run a
# convolution layer on OpenCL and in the interpreter; every result is compared
# with NumPy and a mismatch fails the job. Then it explores a VGG-16 layer: the
# conv-direct strategy's space is sampled (Z3 + exact counting), every sampled
# variant is built, run, verified against the reference and timed on the device,
# the results go to a SQLite database (results/main-job.db, kept: a re-run
# resumes) and `weft report` prints the time/space Pareto front. Inputs and
# outputs of the checks live in a temporary directory that is removed at exit.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR="${WEFT_BUILD_DIR:-build}"
WEFT="${BUILD_DIR}/weft"
PY=/usr/bin/python3   # Debian's python, the one that has numpy

bash scripts/setup.sh weft   # the main job needs weft alone; scripts/test.sh builds the rest

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

# The same on OpenCL (the default device: the first GPU, else PoCL), then a convolution layer
# (PyTorch conventions) default-lowered to OpenCL, compared with the interpreter and NumPy.
echo "[main] weft devices"
"$WEFT" devices
echo "[main] weft run examples/dot.weft --backend opencl"
"$WEFT" run examples/dot.weft --backend opencl --in "$tmp/a.npy" --in "$tmp/b.npy" --out "$tmp/y_cl.npy"

LAYER="${WEFT_LAYER:-16,32,32,32,3,1,1}"
echo "[main] convolution layer ${LAYER} (C,H,W,M,K,stride,pad) on OpenCL and in the interpreter"
"$PY" -c '
import sys, numpy as np
d, spec = sys.argv[1], [int(v) for v in sys.argv[2].split(",")]
C, H, W, M, K, s, p = spec
rng = np.random.default_rng(2)
np.save(f"{d}/x.npy", rng.standard_normal((C, H, W)).astype("<f4"))
np.save(f"{d}/w.npy", rng.standard_normal((M, C, K, K)).astype("<f4"))
np.save(f"{d}/bias.npy", rng.standard_normal(M).astype("<f4"))
' "$tmp" "$LAYER"
"$WEFT" run --layer "$LAYER" --backend opencl --in "$tmp/x.npy" --in "$tmp/w.npy" --in "$tmp/bias.npy" --out "$tmp/conv_cl.npy"
"$WEFT" run --layer "$LAYER" --backend interp --in "$tmp/x.npy" --in "$tmp/w.npy" --in "$tmp/bias.npy" --out "$tmp/conv_interp.npy"

"$PY" -c '
import sys, numpy as np
d, spec = sys.argv[1], [int(v) for v in sys.argv[2].split(",")]
C, H, W, M, K, s, p = spec
x, w, b = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in ("x", "w", "bias"))
xp = np.pad(x, ((0, 0), (p, p), (p, p)))
oh, ow = (H + 2 * p - K) // s + 1, (W + 2 * p - K) // s + 1
ref = np.empty((M, oh, ow))
for i in range(oh):
    for j in range(ow):
        win = xp[:, i * s:i * s + K, j * s:j * s + K]
        ref[:, i, j] = np.tensordot(w, win, axes=([1, 2, 3], [0, 1, 2])) + b
ok = True
for name in ("y_cl", "conv_cl", "conv_interp"):
    y = np.load(f"{d}/{name}.npy")
    if name == "y_cl":
        a, bb = np.load(f"{d}/a.npy"), np.load(f"{d}/b.npy")
        err = abs(float(y.ravel()[0]) - float(np.dot(a.astype(np.float64), bb.astype(np.float64))))
        print(f"[main] dot on OpenCL = {y.ravel()[0]:.6f} (error {err:.2e})")
        ok &= err < 1e-3
        continue
    err = np.max(np.abs(y - ref) / (1 + np.abs(ref)))
    print(f"[main] {name}: shape {y.shape}, max relative error vs NumPy {err:.2e}")
    ok &= bool(err < 1e-4)
print("[main] all results agree" if ok else "[main] MISMATCH")
sys.exit(0 if ok else 1)
' "$tmp" "$LAYER"

# Exploration: a short one of VGG-16's conv5_3 (512x14x14 -> 512, the paper's layer 28):
# 10 sampled variants, a few minutes on 2 cores (WEFT_MAIN_LAYER / WEFT_MAIN_SAMPLES change it).
mkdir -p results
EXPLORE_LAYER="${WEFT_MAIN_LAYER:-vgg16:28}"
SAMPLES="${WEFT_MAIN_SAMPLES:-10}"
echo "[main] weft explore --layer ${EXPLORE_LAYER} --samples ${SAMPLES} --db results/main-job.db"
"$WEFT" explore --layer "$EXPLORE_LAYER" --samples "$SAMPLES" --seed 1 --db results/main-job.db
"$WEFT" report --db results/main-job.db
