#!/usr/bin/env python3
"""The numerical error of weft's Winograd family against a float64 reference.

For each 3x3 stride-1 layer given (VGG-16's by default), the Listing 3 convolution
(examples/conv.weft) is rewritten by the conv-winograd strategy with F(2x2, 3x3) and, where 4
divides the output, F(4x4, 3x3) (`weft rewrite --strategy`), run with OpenCL (`weft run --backend
opencl`) on random normal inputs, and compared with the same convolution computed in float64 by
numpy. The direct convolution (the register-blocked vector strategy, float32, the window summed
in one order) is measured the same way, as the yardstick for float32 rounding. Reported per layer
and method: the largest absolute error over the largest magnitude of the reference output, and
the root-mean-square error over the reference's root-mean-square. Lavin and Gray (2016, section
5) report that F(4x4, 3x3) loses accuracy against direct convolution in float32; this measures
how much on weft's kernels.

Writes bench/results/winograd_error.json and .md (--out). Needs Debian's python3-numpy.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np

VGG16 = [  # name, C, H, W, M (3x3 kernels, stride 1, pad 1)
    ("conv1_1", 3, 224, 224, 64), ("conv1_2", 64, 224, 224, 64),
    ("conv2_1", 64, 112, 112, 128), ("conv2_2", 128, 112, 112, 128),
    ("conv3_1", 128, 56, 56, 256), ("conv3_2", 256, 56, 56, 256),
    ("conv4_1", 256, 28, 28, 512), ("conv4_2", 512, 28, 28, 512),
    ("conv5_1", 512, 14, 14, 512),
]


def reference(weights, biases, image):
    """float64 direct convolution in Listing 3's layouts: weights (M, 3, 3, C), image (H, W, C)."""
    h, w, _ = image.shape
    padded = np.pad(image.astype(np.float64), ((1, 1), (1, 1), (0, 0)))
    out = np.zeros((h, w, weights.shape[0]))
    for ky in range(3):
        for kx in range(3):
            out += padded[ky:ky + h, kx:kx + w, :] @ weights[:, ky, kx, :].astype(np.float64).T
    out += biases.astype(np.float64)
    return out.transpose(2, 0, 1)  # (M, H, W)


def run_weft(weft, program_text, inputs, folder, sizes=("P=1",)):
    program = os.path.join(folder, "program.weft")
    with open(program, "w") as f:
        f.write(program_text)
    out = os.path.join(folder, "out.npy")
    size_options = [option for size in sizes for option in ("--size", size)]
    run = subprocess.run([weft, "run", program, "--backend", "opencl", *size_options, "--in",
                          *inputs, "--out", out], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError("weft run failed: " + run.stdout + run.stderr)
    return np.load(out).astype(np.float64)


def rewrite(weft, strategy):
    return subprocess.run([weft, "rewrite", "examples/conv.weft", "--strategy", strategy],
                          check=True, capture_output=True, text=True).stdout


def errors(result, expected):
    return {
        "max_abs_over_max": float(np.abs(result - expected).max() / np.abs(expected).max()),
        "rms_over_rms": float(np.sqrt(np.mean((result - expected) ** 2)) /
                              np.sqrt(np.mean(expected ** 2))),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", default="build/weft")
    parser.add_argument("--layers", nargs="*", default=[l[0] for l in VGG16],
                        help="VGG-16 layer names (default: every distinct 3x3 shape)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="bench/results/winograd_error")
    args = parser.parse_args()
    layers = [l for l in VGG16 if l[0] in args.layers]
    rng = np.random.default_rng(args.seed)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name, c, h, w, m in layers:
            weights = rng.standard_normal((m, 3, 3, c)).astype(np.float32)
            biases = rng.standard_normal(m).astype(np.float32)
            image = rng.standard_normal((h, w, c)).astype(np.float32)
            inputs = []
            for label, array in (("w", weights), ("b", biases), ("x", image)):
                path = os.path.join(folder, label + ".npy")
                np.save(path, array)
                inputs.append(path)
            expected = reference(weights, biases, image)
            row = {"layer": name, "C": c, "H": h, "W": w, "M": m}
            kappa = 16 if m % 16 == 0 else 8
            direct = rewrite(args.weft, f"conv-register-blocked-vector:kappa={kappa},sigma=1,rows=1")
            row["direct"] = errors(run_weft(args.weft, direct, inputs, folder, ("P=1", "S=1")),
                                   expected)
            for tile in (2, 4):
                if h % tile or w % tile:
                    continue
                program = rewrite(args.weft,
                                  f"conv-winograd:m={tile},kappa={kappa},sigma=1,rows=1")
                row[f"winograd{tile}"] = errors(run_weft(args.weft, program, inputs, folder),
                                                expected)
            print(json.dumps(row), flush=True)
            rows.append(row)
    model = platform.machine()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    meta = {"machine": model, "seed": args.seed,
            "inputs": "standard normal weights, biases and input"}
    with open(args.out + ".json", "w") as f:
        json.dump({"meta": meta, "layers": rows}, f, indent=1)
    with open(args.out + ".md", "w") as f:
        f.write("| layer | direct max/max | F(2x2) max/max | F(4x4) max/max | direct rms | "
                "F(2x2) rms | F(4x4) rms |\n|---|---|---|---|---|---|---|\n")
        for row in rows:
            def cell(method, key):
                return f"{row[method][key]:.1e}" if method in row else "-"
            f.write(f"| {row['layer']} | {cell('direct', 'max_abs_over_max')} | "
                    f"{cell('winograd2', 'max_abs_over_max')} | "
                    f"{cell('winograd4', 'max_abs_over_max')} | {cell('direct', 'rms_over_rms')} | "
                    f"{cell('winograd2', 'rms_over_rms')} | {cell('winograd4', 'rms_over_rms')} |\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
