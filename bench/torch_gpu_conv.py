"""PyTorch's conv2d on a CUDA GPU (cuDNN) for VGG-16 layers: the GPU peer of Table 3.

float32, batch 1, bias, padding 1, cudnn.benchmark on (cuDNN picks its fastest algorithm per
shape); 20 warm-up calls, then the median of 50 calls each timed by CUDA events. Each layer is
timed twice: with TF32 off (`torch.backends.cudnn.allow_tf32 = False`, true fp32 like weft's
kernels, the figure targets compare with) and with PyTorch's default (TF32 allowed on tensor
cores). The CUDA kernels of one call are named from torch.profiler, so a reader sees which
algorithm cuDNN chose (implicit GEMM, Winograd, FFT). Prints one line per layer and setting, then
a JSON summary.

Usage: python3 bench/torch_gpu_conv.py [conv1_2,conv3_1,...]   (default: all 13 layers)
Needs a CUDA build of PyTorch (not Debian's python3-torch): weft_bench_table3 runs the CPU peer
(bench/baselines_torch.py). Used for bench/results/nvidia-*/pytorch-cudnn.txt.
"""
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from baselines_torch import VGG16  # noqa: E402  (the 13 layers: name, C, H, W, M)


def time_layer(x, w, b):
    for _ in range(20):
        torch.nn.functional.conv2d(x, w, b, padding=1)
    times = []
    for _ in range(50):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.nn.functional.conv2d(x, w, b, padding=1)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def kernel_names(x, w, b):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        torch.nn.functional.conv2d(x, w, b, padding=1)
        torch.cuda.synchronize()
    names = []
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA and event.name not in names:
            names.append(event.name)
    return names


def main():
    wanted = sys.argv[1].split(",") if len(sys.argv) > 1 else [layer[0] for layer in VGG16]
    torch.backends.cudnn.benchmark = True
    out = {}
    with torch.no_grad():
        for name, c, hw, _, m in VGG16:
            if name not in wanted:
                continue
            x = torch.rand(1, c, hw, hw, device="cuda") * 2 - 1
            w = torch.rand(m, c, 3, 3, device="cuda") * 2 - 1
            b = torch.rand(m, device="cuda")
            flops = 2 * c * 9 * m * hw * hw
            entry = {}
            for setting, tf32 in (("fp32", False), ("default", True)):
                torch.backends.cudnn.allow_tf32 = tf32
                torch.backends.cuda.matmul.allow_tf32 = tf32
                ms = time_layer(x, w, b)
                try:
                    kernels = kernel_names(x, w, b)
                except Exception as error:  # the profiler is optional for the timing
                    kernels = [f"(profiler failed: {error})"]
                entry[setting] = {"ms": ms, "gflops": flops / ms / 1e6, "kernels": kernels}
                print(f"{name} {setting}: {ms:.4f} ms {flops / ms / 1e6:.0f} GFLOP/s "
                      f"kernels: {'; '.join(kernels)}", flush=True)
            # The fp32 figure at the top level, as bench/results/nvidia-h100 recorded it.
            out[name] = {"ms": entry["fp32"]["ms"], "gflops": entry["fp32"]["gflops"], **entry}
    print(json.dumps({"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                      "device": torch.cuda.get_device_name(), "layers": out}))


if __name__ == "__main__":
    main()
