#!/usr/bin/env bash
# Convolution layers of networks other than VGG-16, explored on this machine and compared with
# PyTorch (and CLBlast, the naive kernel) in one run like Table 3: strides 2 and 4 with a
# partial last window, 1x1, 5x5, 7x7 and 11x11 kernels, 3 input channels, 7x7 maps. Shapes
# from torchvision's AlexNet, ResNet-18/50 and MobileNet-v1 at 224x224, batch 1.
# Usage: bash bench/other_layers.sh [SAMPLES] [DB]   (default 50 samples each, a fresh database
# in bench/results/other-layers.db, committed compressed as .db.xz; one that exists is resumed)
# Writes bench/results/other-layers.md and .json (weft_bench_table3 --retime 2).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
samples=${1:-50}
db=${2:-$root/bench/results/other-layers.db}
layers=(
  "alexnet.conv1 3,224,224,64,11,4,2"       # 11x11 stride 4, C = 3, partial last window
  "alexnet.conv2 64,27,27,192,5,1,2"        # 5x5, 27x27 map
  "alexnet.conv3 192,13,13,384,3,1,1"       # 13x13 map
  "resnet18.conv1 3,224,224,64,7,2,3"       # 7x7 stride 2, C = 3, partial last window
  "resnet18.layer2.0.conv1 64,56,56,128,3,2,1"  # 3x3 stride 2, partial last window
  "resnet18.layer4.1.conv1 512,7,7,512,3,1,1"   # 7x7 map
  "resnet50.layer1.0.conv3 64,56,56,256,1,1,0"  # 1x1
  "resnet50.layer2.0.downsample 256,56,56,512,1,2,0"  # 1x1 stride 2
  "mobilenet.pointwise2 64,112,112,128,1,1,0"   # 1x1 on a large map
)
args=()
for entry in "${layers[@]}"; do
  read -r name spec <<<"$entry"
  echo "== $name ($spec)" >&2
  "$root/build/weft" explore --layer "$spec" --samples "$samples" --db "$db" --quiet
  args+=(--layer "$spec")
done
"$root/build/bench/weft_bench_table3" --db "$db" "${args[@]}" --retime 2 \
  --out "$root/bench/results/other-layers.json" --markdown "$root/bench/results/other-layers.md"
