"""An M x K by K x N float32 product through PyTorch on a CUDA GPU (cuBLAS): the GPU peer of
weft_bench_programs' matrix multiplication (issue 31).

torch.matmul on row-major float32 tensors, timed twice: with TF32 off
(`torch.backends.cuda.matmul.allow_tf32 = False`, true fp32 like weft's kernels, the figure the
issue asks for) and with TF32 allowed (tensor cores, for reference). 20 warm-up calls, then the
median of 50 calls each timed by CUDA events. The CUDA kernels of one call are named from
torch.profiler, so a reader sees which cuBLAS kernel ran. Each product is checked against the
product in float64 on the GPU (largest relative difference). Prints one JSON object.

Usage: python3 bench/matmul_torch_gpu.py [--size M N K]   (default 1024 1024 1024)
Needs a CUDA build of PyTorch (not Debian's python3-torch).
"""
import argparse
import json
import statistics

import torch


def timed(product):
    for _ in range(20):
        product()
    times = []
    for _ in range(50):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        product()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return {"median": statistics.median(times), "min": min(times)}


def kernel_names(product):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        product()
        torch.cuda.synchronize()
    return sorted({event.name for event in profile.events()
                   if event.device_type == torch.autograd.DeviceType.CUDA})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, nargs=3, metavar=("M", "N", "K"),
                        default=[1024, 1024, 1024])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    m, n, k = args.size
    generator = torch.Generator(device="cuda").manual_seed(args.seed)
    a = torch.rand(m, k, generator=generator, device="cuda") * 2 - 1
    b = torch.rand(k, n, generator=generator, device="cuda") * 2 - 1
    reference = a.double() @ b.double()
    flops = 2.0 * m * n * k
    result = {"size": {"M": m, "N": n, "K": k}, "device": torch.cuda.get_device_name(),
              "torch": torch.__version__, "cublas": "torch.matmul, CUDA events"}
    for name, tf32 in (("fp32", False), ("tf32", True)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        product = lambda: torch.matmul(a, b)  # noqa: E731
        error = ((product().double() - reference).abs()
                 / reference.abs().clamp(min=1.0)).max().item()
        time_ms = timed(product)
        result[name] = {"time_ms": time_ms, "tflops": flops / (time_ms["median"] * 1e9),
                        "max_relative_error": error, "kernels": kernel_names(product)}
        print(f"cuBLAS {name}: {time_ms['median']:.4f} ms median "
              f"({result[name]['tflops']:.1f} TFLOP/s), max relative error {error:.2e}, "
              f"kernels {result[name]['kernels']}", flush=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
