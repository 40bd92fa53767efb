#!/usr/bin/env bash
# Installs the Debian packages the benchmarks under bench/ need beyond scripts/setup.sh:
# CLBlast (libclblast-dev, the im2col + SGEMM baseline of bench/baselines.cpp), PyTorch and
# NumPy for Debian's /usr/bin/python3 (bench/baselines_torch.py), Halide 14 with its
# autoscheduler plugins and OpenCV 4.6 (python3-halide; libhalide14-0-dev, which ships the
# plugins libautoschedule_{adams2019,mullapudi2016,li2018}.so; python3-opencv: the peers of the
# pipelines benchmark, bench/pipelines_peers.py, issue 9). The baselines of the Table 3
# benchmark (issue 6) and the pipelines' peers are measured against these, never against pip
# wheels, so that the figures come from the same packages on every machine. Idempotent: when
# every package is already installed (per dpkg -s) apt-get is not touched at all and the
# script returns at once.
# It installs packages only; build with scripts/setup.sh (re-run it after this script so that
# CMake finds CLBlast and adds the weft_bench_baselines target).
set -euo pipefail

PACKAGES=(
  libclblast-dev
  python3 python3-torch python3-numpy
  python3-halide libhalide14-0-dev python3-opencv
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  # "Status: install ok installed" (a removed package may still answer dpkg -s)
  if ! dpkg -s "$pkg" 2>/dev/null | grep -q '^Status: install ok installed'; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "[setup-bench] all ${#PACKAGES[@]} benchmark packages present"
  exit 0
fi

echo "[setup-bench] installing ${#missing[@]} missing package(s): ${missing[*]}"
SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo -n)
  else
    echo "[setup-bench] error: not root and sudo is not available; install: ${missing[*]}" >&2
    exit 1
  fi
fi
"${SUDO[@]}" apt-get update -qq </dev/null
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
echo "[setup-bench] packages installed"
