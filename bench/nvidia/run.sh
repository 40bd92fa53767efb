#!/usr/bin/env bash
# Runs weft's GPU measurements on a lent NVIDIA machine (bench/nvidia/README.md), from the
# repository root, with what bench/nvidia/pack.sh packed in .gpu-session/pack.tar.xz:
#   1. the device as NVIDIA's OpenCL reports it (nvidia-smi, weft devices);
#   1b. with phase matmul (not in the default PHASES): examples/matmul.weft explored by the
#      rewrite-sequence search and its fastest re-timed against CLBlast and cuBLAS (MATMUL_S,
#      MATMUL_SIZE, MATMUL_SAMPLES, MATMUL_TIMEOUT: the cap on a variant's phase, default 30 s,
#      since NVIDIA's compiler took 86-91 s on kernels that then spilled; MATMUL_START_DB);
#   2. `weft explore` of the given VGG-16 layers on the GPU, each measuring for EXPLORE_S seconds
#      (--time-limit: its preparation not counted; cut off PREPARE_S seconds later at the
#      latest, its database keeping every variant measured before the cut);
#   3. weft_bench_table3 on that database: the explored best re-timed with CLBlast and the naive
#      kernel in the same run;
#   4. PyTorch + cuDNN on the same layers (bench/torch_gpu_conv.py: TF32 off and default);
#   5. the OpenCL tests (ctest label `opencl`; those whose name matches TESTS, a grep -E
#      pattern, when given) on NVIDIA's driver, several at once.
# Every file lands in $OUT/results.tar.xz (the device tool brings it back): log.txt, nvidia.db, table3.json,
# table3.md, pytorch-cudnn.txt, opencl-tests.txt, explore-vgg16-N.txt (each exploration's
# output), and with phase matmul matmul.db, explore-matmul.txt, programs-matmul.{txt,json} and
# cublas-matmul.txt. ALL_VGG16_S explores all 13 layers in one process instead (see below). SAMPLES
# (default 1000) is the samples per layer; FAMILY (e.g. workgroup-tiled) explores only those
# families (weft explore --family); START_DB a database of an earlier
# run to go on from. PHASES (default "explore table3 torch tests")
# selects the steps; TABLE3_S, TORCH_S and TESTS_S bound steps 3-5 (seconds); the script stops
# at once when NVIDIA's OpenCL shows no GPU.
# Usage: bash bench/nvidia/run.sh [LAYERS]   (LAYERS: the paper's numbers, default "2 10 24",
# each optionally with its own measuring time: "2:60 10:50 24:40", or as N=M for a layer of the
# same shape as layer M, which is not explored: M's measured variants are copied under N's name,
# and Table 3 re-times the best of them on N)
set -uo pipefail
layers=${1:-"2 10 24"}
# The device tool brings back at most 8 files: everything is written to a folder of its own and
# packed, on exit, into $OUT/results.tar.xz (with log.txt and table3.md beside it to read).
RESULTS=${OUT:-/tmp/weft-gpu-out}
OUT=/tmp/weft-gpu-results
rm -rf "$OUT" && mkdir -p "$RESULTS"
trap 'tar -C "$OUT" -cJf "$RESULTS/results.tar.xz" . && cp "$OUT/log.txt" "$RESULTS/" &&
  { [ ! -f "$OUT/table3.md" ] || cp "$OUT/table3.md" "$RESULTS/"; }' EXIT
EXPLORE_S=${EXPLORE_S:-60}
PREPARE_S=${PREPARE_S:-60}
TESTS_S=${TESTS_S:-150}
TABLE3_S=${TABLE3_S:-150}
TORCH_S=${TORCH_S:-120}
mkdir -p "$OUT"
root=$(pwd)
work=/tmp/weft-gpu
mkdir -p "$work" && tar -C "$work" -xJf .gpu-session/pack.tar.xz
export LD_LIBRARY_PATH="$work/lib:${LD_LIBRARY_PATH:-}"
export WEFT_BINARY="$work/bin/weft" WEFT_SOURCE_DIR="$root"
exec > >(tee -a "$OUT/log.txt") 2>&1
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }
# A database's write-ahead log folded into it, so that one file comes back.
single_file() {
  python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('pragma journal_mode=delete'); c.close()" "$1"
}

# NVIDIA's OpenCL driver registered with the ocl-icd loader (the image may list only PoCL).
lib=$(ldconfig -p | awk '/libnvidia-opencl\.so\.1/ {print $NF; exit}')
[ -n "$lib" ] || lib=$(find /usr/local/nvidia /usr/lib /usr/lib64 /usr/lib/x86_64-linux-gnu \
  -name 'libnvidia-opencl.so.1' 2>/dev/null | head -1)
mkdir -p /etc/OpenCL/vendors
[ -n "$lib" ] && echo "$lib" >/etc/OpenCL/vendors/nvidia.icd
stamp device
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
"$work/bin/weft" devices | tee /tmp/devices.txt
# DEVICE (default gpu) selects the OpenCL device as weft's --device does; another than gpu (a
# dry run of the script on PoCL, say) skips the check that a GPU shows.
DEVICE=${DEVICE:-gpu}
if [ "$DEVICE" = gpu ] && ! grep -q "(gpu)" /tmp/devices.txt; then
  echo "no OpenCL GPU: libnvidia-opencl.so.1 at '${lib}'"; ls -la /etc/OpenCL/vendors
  cat /etc/OpenCL/vendors/*.icd; exit 2
fi
PHASES=${PHASES:-"explore table3 torch tests"}
has() { case " $PHASES " in *" $1 "*) return 0 ;; esac; return 1; }

# Phase matmul: examples/matmul.weft at MATMUL_SIZE (M N K) explored by the rewrite-sequence
# search on the GPU, measuring MATMUL_S seconds; its fastest re-timed against CLBlast's SGEMM on
# the same OpenCL device (weft_bench_programs) and cuBLAS through PyTorch (TF32 off and on).
if has matmul; then
  read -r mm_m mm_n mm_k <<<"${MATMUL_SIZE:-1024 1024 1024}"
  MATMUL_S=${MATMUL_S:-120}
  # MATMUL_START_DB: an earlier call's matmul.db to go on from (carried in .gpu-session).
  [ -n "${MATMUL_START_DB:-}" ] && cp "$MATMUL_START_DB" "$OUT/matmul.db"
  stamp "explore examples/matmul.weft M=$mm_m N=$mm_n K=$mm_k (measuring ${MATMUL_S} s)"
  timeout -s INT "$((MATMUL_S + PREPARE_S))" "$work/bin/weft" explore examples/matmul.weft \
    --size "M=$mm_m" --size "N=$mm_n" --size "K=$mm_k" --samples "${MATMUL_SAMPLES:-1000}" \
    --seed 1 --db "$OUT/matmul.db" --device "$DEVICE" --jobs 15 --build-while-timing --min-time 20 \
    --time-limit "$MATMUL_S" --timeout "${MATMUL_TIMEOUT:-30}" >"$OUT/explore-matmul.txt" 2>&1
  echo "exit $?"; grep -v '^\[' "$OUT/explore-matmul.txt" | tail -12
  stamp "matmul: the explored fastest re-timed against CLBlast"
  timeout 90 "$work/bin/weft_bench_programs" --db "$OUT/matmul.db" --program examples/matmul.weft \
    --size "$mm_m" "$mm_n" "$mm_k" --device "$DEVICE" --no-torch --retime 4 --min-seconds 0.5 \
    --out "$OUT/programs-matmul.json" >"$OUT/programs-matmul.txt" 2>&1
  echo "exit $?"; cat "$OUT/programs-matmul.txt"
  stamp "matmul: cuBLAS through PyTorch"
  timeout 60 python3 bench/matmul_torch_gpu.py --size "$mm_m" "$mm_n" "$mm_k" \
    >"$OUT/cublas-matmul.txt" 2>&1
  echo "exit $?"; grep -v '^{' "$OUT/cublas-matmul.txt"
  single_file "$OUT/matmul.db"
fi

db="$OUT/nvidia.db"
family=()
[ -n "${FAMILY:-}" ] && family=(--family "$FAMILY")
# START_DB: a database of an earlier run to go on from (the explorer skips what it measured).
[ -n "${START_DB:-}" ] && cp "$START_DB" "$db"
names=()
same_shape=()
# ALL_VGG16_S: the 13 layers in one `weft explore --all-vgg16` process, each measuring that many
# seconds; the structures every layer shares are built once (LAYERS then only name the layers
# Table 3 and PyTorch time, default all 13).
if [ -n "${ALL_VGG16_S:-}" ] && has explore; then
  stamp "explore --all-vgg16 (each layer measuring ${ALL_VGG16_S} s)"
  timeout -s INT "$((13 * (ALL_VGG16_S + PREPARE_S)))" "$work/bin/weft" explore --all-vgg16 \
    --samples "${SAMPLES:-1000}" --seed 1 --db "$db" --device "$DEVICE" --jobs 15 \
    --build-while-timing --min-time 20 --time-limit "$ALL_VGG16_S" "${family[@]}" \
    >"$OUT/explore-all-vgg16.txt" 2>&1
  echo "exit $?"; grep -v '^\[' "$OUT/explore-all-vgg16.txt" | tail -60
  [ $# -gt 0 ] || layers="0 2 5 7 10 12 14 17 19 21 24 26 28"
fi
for entry in $layers; do
  case $entry in *=*) same_shape+=("$entry"); continue ;; esac
  has explore || break
  [ -n "${ALL_VGG16_S:-}" ] && break
  layer=${entry%%:*} seconds=$EXPLORE_S
  [ "$entry" = "$layer" ] || seconds=${entry#*:}
  stamp "explore vgg16:$layer (measuring ${seconds} s)"
  timeout -s INT "$((seconds + PREPARE_S))" "$work/bin/weft" explore --layer "vgg16:$layer" \
    --samples "${SAMPLES:-1000}" --seed 1 --db "$db" --device "$DEVICE" --jobs 15 \
    --build-while-timing --min-time 20 --time-limit "$seconds" "${family[@]}" \
    >"$OUT/explore-vgg16-$layer.txt" 2>&1
  echo "exit $?"; grep -v '^\[' "$OUT/explore-vgg16-$layer.txt" | head -4
  tail -c 300 "$OUT/explore-vgg16-$layer.txt"; echo
done
layers=$(for entry in $layers; do entry=${entry%%=*}; printf '%s ' "${entry%%:*}"; done)
# Layers of the same shape as an explored one: its measured variants copied under their names.
[ -f "$db" ] && [ ${#same_shape[@]} -gt 0 ] && python3 - "$db" "${same_shape[@]}" <<'PY'
import sqlite3, sys
sys.path.insert(0, "bench")
from baselines_torch import VGG16
paper = [0, 2, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28]
name = lambda n: VGG16[paper.index(int(n))][0]
db = sqlite3.connect(sys.argv[1])
columns = [r[1] for r in db.execute("pragma table_info(variants)") if r[1] not in ("id", "program")]
for pair in sys.argv[2:]:
    to, source = (name(n) for n in pair.split("="))
    copied = db.execute(
        f"insert or ignore into variants (program, {', '.join(columns)}) "
        f"select ?, {', '.join(columns)} from variants where program = ? and status = 'ok'",
        (to, source)).rowcount
    print(f"{to}: {copied} variants of {source} (the same shape) copied")
db.commit()
PY
for layer in $layers; do names+=(--layer "vgg16:$layer"); done
# What each exploration measured.
[ -f "$db" ] && python3 - "$db" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for program, status, n in db.execute(
        "select program, status, count(*) from variants group by program, status"):
    print(f"{program}: {status} {n}")
for program, ns in db.execute("select program, median_ns from reference_runs"):
    print(f"{program}: reference (naive) {ns / 1e6:.4f} ms")
best = {}
for program, ns, params in db.execute(
        "select program, median_ns, parameters from variants where status = 'ok'"):
    p = json.loads(params)
    family = ("conv-direct" if "v" in p else
              f"vector interleave={p.get('vector_interleave', 0)} "
              f"channels_first={p.get('vector_channels_first', 0)} "
              f"split={p.get('vector_split', 1)}")
    key = (program, family)
    if key not in best or ns < best[key][0]:
        best[key] = (ns, params)
for (program, family), (ns, params) in sorted(best.items()):
    print(f"{program}: best {family}: {ns / 1e6:.4f} ms {params}")
db.close()
PY

has table3 && stamp "table3 (re-timed best, CLBlast, naive)" &&
timeout "$TABLE3_S" "$work/bin/weft_bench_table3" --device "$DEVICE" --db "$db" "${names[@]}" --no-torch \
  --retime 2 --out "$OUT/table3.json" --markdown "$OUT/table3.md"
echo "exit $?"

if has torch; then
stamp "PyTorch + cuDNN"
torch_layers=$(python3 - "$layers" <<'PY'
import sys
sys.path.insert(0, "bench")
from baselines_torch import VGG16
paper = [0, 2, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28]
print(",".join(VGG16[paper.index(int(n))][0] for n in sys.argv[1].split()))
PY
)
timeout "$TORCH_S" python3 bench/torch_gpu_conv.py "$torch_layers" >"$OUT/pytorch-cudnn.txt"
echo "exit $?"; cat "$OUT/pytorch-cudnn.txt"
fi

[ -f "$db" ] && single_file "$db"
ls "$OUT"
has tests || { stamp done; exit 0; }
stamp "OpenCL tests (at most ${TESTS_S} s, 6 at once)"
ls "$work/bin/tests" | grep -E "${TESTS:-.}" | xargs -P 6 -I{} sh -c \
  "timeout $((TESTS_S - 10)) '$work/bin/tests/{}' >'/tmp/{}.log' 2>&1; echo \"{} exit \$?\"" \
  >"$OUT/opencl-tests.txt"
sort -o "$OUT/opencl-tests.txt" "$OUT/opencl-tests.txt"
for t in $(awk '$3 != 0 {print $1}' "$OUT/opencl-tests.txt"); do
  echo "---- $t"; tail -40 "/tmp/$t.log"
done >>"$OUT/opencl-tests.txt"
cat "$OUT/opencl-tests.txt" | head -40
stamp done
