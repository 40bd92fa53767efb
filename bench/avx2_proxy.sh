#!/usr/bin/env bash
# An AVX2 machine's software on an AVX-512 one: runs a command with every party kept to AVX2, so
# that weft's device-derived spaces and its peers can be compared at AVX2's vector width and
# register file where no AVX2-only CPU is at hand. The memory system, clock and core stay the
# host's, so its figures stand for the instruction set only, not for another CPU.
#   - PoCL compiles for Haswell (POCL_LLVM_CPU_NAME=haswell, its avx2 kernel library): 16 vector
#     registers of 8 floats. PoCL still reports the host's preferred float width (16), so the
#     profile weft uses is written here: the device's, queried under these settings, with the
#     float widths 8, registers per work-item (16 - 8) * 8 = 64 (host/device_profile.h's
#     heuristic for a 16-register file) and the arithmetic probe's float8 rate as the native one.
#   - Halide: HL_TARGET without AVX-512 (bench/pipelines_peers.py reads it).
#   - PyTorch's oneDNN: ONEDNN_MAX_CPU_ISA=AVX2 (its documented dispatch limit).
#   - OpenCV: OPENCV_CPU_DISABLE=AVX512-SKX (its one AVX-512 dispatch level in Debian's build).
# Usage: bash bench/avx2_proxy.sh PROFILE.json [COMMAND ...]
#   writes the profile to PROFILE.json, then runs COMMAND (pass it --profile PROFILE.json where
#   it explores) in that environment.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: bash bench/avx2_proxy.sh PROFILE.json [COMMAND ...]" >&2; exit 2; }
profile=$1
shift
export POCL_LLVM_CPU_NAME=haswell POCL_KERNELLIB_NAME=avx2
export HL_TARGET=x86-64-linux-avx-avx2-f16c-fma-sse41
export ONEDNN_MAX_CPU_ISA=AVX2 DNNL_MAX_CPU_ISA=AVX2
export OPENCV_CPU_DISABLE=AVX512-SKX
# A kernel cache of its own: PoCL's cache is keyed by the kernel, not the CPU it was built for.
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-/tmp}/avx2-proxy
mkdir -p "$POCL_CACHE_DIR"
"$root/build/weft" devices --json | python3 -c '
import json, sys
device = next(d for d in json.load(sys.stdin)["devices"] if d.get("default"))
profile = device["profile"]
if "haswell" not in profile["deviceName"]:
    sys.exit("PoCL did not take POCL_LLVM_CPU_NAME=haswell: " + profile["deviceName"])
width = 8
profile["name"] += "-avx2-proxy"
profile["preferredFloatVectorWidth"] = profile["nativeFloatVectorWidth"] = width
profile["registersPerWorkItem"] = (16 - 8) * width
# The probe measured float16 (two AVX2 instructions) and float8: float8 is now the native width.
if profile.get("fmaHalfWidthLanesPerCycle"):
    profile["fmaLanesPerCycle"] = profile["fmaHalfWidthLanesPerCycle"]
    profile["fmaHalfWidthLanesPerCycle"] = 0
if profile.get("vectorLoadsPerCycle"):
    profile["vectorLoadsPerCycle"] *= 2  # a float16 load was two float8 loads
profile["source"] += "; widths, registers and the float8 rate set by bench/avx2_proxy.sh"
json.dump(profile, open(sys.argv[1], "w"), indent=2)
name, fingerprint = profile["name"], profile["fingerprint"]
print(f"AVX2 proxy profile {name} ({fingerprint}) written to {sys.argv[1]}", file=sys.stderr)
' "$profile"
[ $# -eq 0 ] || exec "$@"
