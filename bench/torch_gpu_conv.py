"""PyTorch's conv2d on a CUDA GPU (cuDNN) for the 13 VGG-16 layers: the GPU peer of Table 3.

float32 with TF32 off (weft's kernels compute in fp32), batch 1, bias, padding 1,
cudnn.benchmark on (cuDNN picks its fastest algorithm per shape); 20 warm-up calls, then the
median of 50 calls each timed by CUDA events. Prints one line per layer and a JSON summary.
Needs a CUDA build of PyTorch (not Debian's python3-torch): weft_bench_table3 runs the CPU peer
(bench/baselines_torch.py). Used for bench/results/nvidia-h100/pytorch-cudnn.txt.
"""
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from baselines_torch import VGG16  # noqa: E402  (the 13 layers: name, C, H, W, M)

torch.backends.cudnn.benchmark = True
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
out = {}
with torch.no_grad():
    for name, c, hw, _, m in VGG16:
        x = torch.rand(1, c, hw, hw, device="cuda") * 2 - 1
        w = torch.rand(m, c, 3, 3, device="cuda") * 2 - 1
        b = torch.rand(m, device="cuda")
        for _ in range(20): torch.nn.functional.conv2d(x, w, b, padding=1)
        times = []
        for _ in range(50):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(); torch.nn.functional.conv2d(x, w, b, padding=1); e.record(); torch.cuda.synchronize()
            times.append(s.elapsed_time(e))
        ms = statistics.median(times)
        flops = 2 * c * 9 * m * hw * hw
        out[name] = {"ms": ms, "gflops": flops / ms / 1e6}
        print(f"{name}: {ms:.4f} ms {flops/ms/1e6:.0f} GFLOP/s")
print(json.dumps({"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(), "device": torch.cuda.get_device_name(), "layers": out}))
