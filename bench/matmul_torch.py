"""An M x K by K x N float32 product through PyTorch on the CPU, timed for weft_bench_programs.

Two ways, each after a warm-up, at least --min-repeats runs and until they add up to
--min-seconds, wall clock:
  - onednn: oneDNN's SGEMM through torch's mkldnn linear (A and B^T as mkldnn tensors, B^T laid
    out once, as a layer's weights are), the fast path torch has on x86;
  - matmul: torch.matmul on dense tensors, which Debian's torch (BLAS_INFO=generic) sends to
    whatever libblas.so.3 the system's alternatives select (the reference BLAS unless OpenBLAS
    is installed).
Prints one JSON object with both (the median and every sample), the threads, torch's version
and its build configuration, and the largest difference between the two products.

  /usr/bin/python3 bench/matmul_torch.py --size 1024 1024 1024 --threads 2
"""
import argparse
import json
import signal
import statistics
import time

# Ctrl-C ends the script at once: Python's own handler waits until control returns from
# native code (a Halide schedule or a oneDNN call can take seconds), leaving the benchmark's
# peer running after the benchmark itself stopped.
signal.signal(signal.SIGINT, signal.SIG_DFL)

import torch


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, nargs=3, metavar=("M", "N", "K"), required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--min-repeats", type=int, default=5)
    parser.add_argument("--min-seconds", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    m, n, k = args.size
    torch.set_num_threads(args.threads)
    generator = torch.Generator().manual_seed(args.seed)
    a = torch.rand(m, k, generator=generator) * 2 - 1
    b = torch.rand(k, n, generator=generator) * 2 - 1
    a_mkldnn = a.to_mkldnn()
    bt_mkldnn = b.t().contiguous().to_mkldnn()

    def onednn():
        return torch._C._nn.mkldnn_linear(a_mkldnn, bt_mkldnn, None)

    def dense():
        return torch.matmul(a, b)

    def timed(product):
        product()  # warm-up
        samples = []
        start = time.perf_counter()
        while len(samples) < args.min_repeats or (time.perf_counter() - start < args.min_seconds
                                                  and len(samples) < 1000):
            t0 = time.perf_counter()
            product()
            samples.append((time.perf_counter() - t0) * 1e3)
        return {"median": statistics.median(samples), "min": min(samples), "samples": samples}

    difference = (onednn().to_dense() - dense()).abs().max().item()
    print(json.dumps({
        "onednn": {"time_ms": timed(onednn),
                   "timing": "wall clock of torch._C._nn.mkldnn_linear (time.perf_counter)"},
        "matmul": {"time_ms": timed(dense),
                   "timing": "wall clock of torch.matmul (time.perf_counter)"},
        "max_difference": difference,
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "config": torch.__config__.show().splitlines(),
    }))


if __name__ == "__main__":
    main()
