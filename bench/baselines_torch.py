#!/usr/bin/python3
"""PyTorch's CPU conv2d on convolution layers: the PyTorch column of the Table 3 benchmark.

For each layer (C,H,W,M,K,stride,pad; the 13 VGG-16 convolution layers by default) it times
torch.nn.functional.conv2d on one float32 image (1×C×H×W, weights M×C×K×K, bias M, data
uniform in [-1, 1)) with torch.set_num_threads(2) (--threads) under torch.no_grad(): one
warm-up call, then timed calls (time.perf_counter around each call; PyTorch's CPU ops are
synchronous) until at least --min-repeats calls adding up to --min-seconds, judging by the
warm-up; the figure is the median.

Memory: every layer runs in a fresh child process (this script with --child), and the figure
is the growth of the process's peak resident set size (resource.getrusage(RUSAGE_SELF)
.ru_maxrss, KiB on Linux) from just before the tensors are created (after `import torch` and a
tiny conv2d that initialises oneDNN and the thread pool) to after the last timed call: the
input, weights, bias, output and whatever conv2d allocates and touches (oneDNN's reordered
weights and scratchpad). tracemalloc is not used: it sees only Python's allocator, not
PyTorch's. The bytes of the four tensors themselves are reported as tensor_bytes.

Verification: --samples random outputs (the first and last among them) are recomputed in
float64 with NumPy from conv2d's definition and compared as bench/bench_support.h does:
|y − reference| / max(|reference|, 1) ≤ 1e-3.

Output: a JSON object on stdout (or --out FILE) with the torch version, the threads and one
entry per layer (layer name, shape, flops, time_ms {median, min, samples}, gflops_per_s,
memory_bytes, tensor_bytes, verification). bench/baselines.cpp runs this script with
Debian's /usr/bin/python3 (python3-torch, scripts/setup-bench.sh) and merges the entries.

  /usr/bin/python3 bench/baselines_torch.py [--layer conv1_1=3,224,224,64,3,1,1 ...]
"""

import argparse
import json
import resource
import signal
import subprocess
import sys
import time

# Ctrl-C ends the script at once: Python's own handler waits until control returns from
# native code (a Halide schedule or a oneDNN call can take seconds), leaving the benchmark's
# peer running after the benchmark itself stopped.
signal.signal(signal.SIGINT, signal.SIG_DFL)

# VGG-16's 13 convolution layers (Simonyan and Zisserman 2015, configuration D) for a 224×224
# RGB image, as ir/conv_layer.h vgg16Layers() lists them: name, C, H, W, M, K, stride, pad.
VGG16 = [
    ("conv1_1", 3, 224, 224, 64), ("conv1_2", 64, 224, 224, 64),
    ("conv2_1", 64, 112, 112, 128), ("conv2_2", 128, 112, 112, 128),
    ("conv3_1", 128, 56, 56, 256), ("conv3_2", 256, 56, 56, 256), ("conv3_3", 256, 56, 56, 256),
    ("conv4_1", 256, 28, 28, 512), ("conv4_2", 512, 28, 28, 512), ("conv4_3", 512, 28, 28, 512),
    ("conv5_1", 512, 14, 14, 512), ("conv5_2", 512, 14, 14, 512), ("conv5_3", 512, 14, 14, 512),
]
TOLERANCE = 1e-3


def parse_layer(spec):
    """'name=C,H,W,M,K,stride,pad' or 'C,H,W,M,K,stride,pad' -> dict."""
    name, _, numbers = spec.rpartition("=")
    values = [int(v) for v in numbers.split(",")]
    if len(values) != 7:
        raise SystemExit(f"baselines_torch.py: layer '{spec}': expected C,H,W,M,K,stride,pad")
    c, h, w, m, k, stride, pad = values
    if not name:
        name = "conv_" + "_".join(str(v) for v in values)
    out_h = (h + 2 * pad - k) // stride + 1
    out_w = (w + 2 * pad - k) // stride + 1
    return {"layer": name, "C": c, "H": h, "W": w, "M": m, "K": k, "stride": stride,
            "pad": pad, "outH": out_h, "outW": out_w, "flops": 2 * m * c * k * k * out_h * out_w}


def layer_spec(layer):
    keys = ("C", "H", "W", "M", "K", "stride", "pad")
    return layer["layer"] + "=" + ",".join(str(layer[k]) for k in keys)


def median(values):
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def max_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def verify(layer, x, w, b, y, samples, seed):
    """Recomputes `samples` outputs in float64 from conv2d's definition."""
    import numpy as np

    c, k, s, p = layer["C"], layer["K"], layer["stride"], layer["pad"]
    out_h, out_w, m_count = layer["outH"], layer["outW"], layer["M"]
    xp = np.pad(x[0].numpy().astype(np.float64), ((0, 0), (p, p), (p, p)))
    wd = w.numpy().astype(np.float64)
    bd = b.numpy().astype(np.float64)
    yf = y.numpy().reshape(-1)
    count = m_count * out_h * out_w
    rng = np.random.default_rng(seed + 1000)
    indices = [0, count - 1] + list(rng.integers(0, count, size=max(samples - 2, 0)))
    if samples >= count:
        indices = range(count)
    checked = failures = 0
    worst = 0.0
    first_failure = None
    for index in indices:
        index = int(index)
        m, rest = divmod(index, out_h * out_w)
        oy, ox = divmod(rest, out_w)
        window = xp[:, oy * s:oy * s + k, ox * s:ox * s + k]
        expected = bd[m] + float(np.sum(window * wd[m]))
        got = float(yf[index])
        error = abs(got - expected) / max(abs(expected), 1.0)
        worst = max(worst, error)
        if not error <= TOLERANCE:
            if failures == 0:
                first_failure = f"y[{m}][{oy}][{ox}] = {got} instead of {expected}"
            failures += 1
        checked += 1
    result = {"outputs_checked": checked, "outputs": count, "failures": failures,
              "max_relative_error": worst, "tolerance": TOLERANCE,
              "reference": "NumPy float64 from conv2d's definition"}
    if first_failure:
        result["first_failure"] = first_failure
    return result


def run_child(args):
    """Measures one layer in this (fresh) process; prints its JSON entry."""
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(args.threads)
    layer = parse_layer(args.child)
    with torch.no_grad():
        # Initialise oneDNN and the thread pool before the memory baseline.
        F.conv2d(torch.ones(1, 1, 4, 4), torch.ones(1, 1, 3, 3), torch.ones(1), padding=1)
        rss_before = max_rss_bytes()

        generator = torch.Generator().manual_seed(args.seed)
        shape_x = (1, layer["C"], layer["H"], layer["W"])
        shape_w = (layer["M"], layer["C"], layer["K"], layer["K"])
        # uniform_ fills in place: no temporaries in the memory figure.
        x = torch.empty(shape_x, dtype=torch.float32).uniform_(-1, 1, generator=generator)
        w = torch.empty(shape_w, dtype=torch.float32).uniform_(-1, 1, generator=generator)
        b = torch.empty(layer["M"], dtype=torch.float32).uniform_(-1, 1, generator=generator)

        def call():
            return F.conv2d(x, w, b, stride=layer["stride"], padding=layer["pad"])

        start = time.perf_counter()
        y = call()
        warm_up = time.perf_counter() - start
        repeats = max(args.min_repeats, min(1000, int(args.min_seconds / max(warm_up, 1e-6)) + 1))
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            y = call()
            samples.append((time.perf_counter() - start) * 1e3)
        rss_after = max_rss_bytes()

    tensor_bytes = 4 * (x.numel() + w.numel() + b.numel() + y.numel())
    verification = verify(layer, x, w, b, y, args.samples, args.seed)
    time_ms = median(samples)
    entry = dict(layer)
    entry.update({
        "time_ms": {"median": time_ms, "min": min(samples), "samples": samples},
        "warmup_ms": warm_up * 1e3,
        "gflops_per_s": layer["flops"] / (time_ms * 1e-3) / 1e9,
        "memory_bytes": rss_after - rss_before,
        "tensor_bytes": tensor_bytes,
        "verified": verification["failures"] == 0,
        "verification": verification,
    })
    json.dump(entry, sys.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layer", action="append", default=[],
                        help="name=C,H,W,M,K,stride,pad (repeatable; default: VGG-16's 13)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--min-repeats", type=int, default=5)
    parser.add_argument("--min-seconds", type=float, default=1.0)
    parser.add_argument("--samples", type=int, default=2000,
                        help="outputs verified per layer")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", help="write the JSON here instead of stdout")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args)
        return

    layers = [parse_layer(spec) for spec in args.layer] or [
        parse_layer(f"{n}={c},{h},{w},{m},3,1,1") for n, c, h, w, m in VGG16]
    import torch  # only for the version; the children do the work

    entries = []
    for layer in layers:
        print(f"pytorch: {layer['layer']}", file=sys.stderr, flush=True)
        command = [sys.executable, __file__, "--child", layer_spec(layer),
                   "--threads", str(args.threads), "--min-repeats", str(args.min_repeats),
                   "--min-seconds", str(args.min_seconds), "--samples", str(args.samples),
                   "--seed", str(args.seed)]
        done = subprocess.run(command, stdout=subprocess.PIPE, check=True, text=True)
        entries.append(json.loads(done.stdout))
    report = {
        "benchmark": "baselines_torch",
        "description": "torch.nn.functional.conv2d, float32, batch 1, with bias, under "
                       "torch.no_grad(); time_ms: perf_counter around each call, median over the "
                       "timed calls after one warm-up call; memory_bytes: growth of ru_maxrss "
                       "in a fresh process per layer; tensor_bytes: input + weights + bias + "
                       "output",
        "torch_version": torch.__version__,
        "mkldnn": bool(torch.backends.mkldnn.is_available()),
        "threads": args.threads,
        "python": sys.executable,
        "layers": entries,
    }
    text = json.dumps(report, indent=2)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
