// The built-in convolution layer with PyTorch's conventions (torch.nn.functional.conv2d on one
// image): input C×H×W, weights M×C×K×K, bias M, output M×outH×outW with
// outH = (H + 2·pad − K) / stride + 1 (windows that do not fit are dropped, as conv2d does),
// and the table of VGG-16's convolution layers, the benchmark layers of the LIFT paper.
//
// convLayerDefinition builds the layer as a high-level weft program specialised to the layer's
// numbers (every length in it is a constant): zero padding (pad2D), K×K windows every `stride`
// pixels (slide2D) per channel, views (transpose, map(transpose)) that bring the channels inside
// each output pixel, and per kernel and output pixel one reduce over the window's C·K·K values
// zipped with the kernel's, starting from the kernel's bias. The kernels are the outer map, so
// the result is M×outH×outW directly, and the default lowering (codegen/lowering.h) maps the
// three nested maps onto a 3D mapGlb nest: one work-item per output value, one kernel, no
// temporary buffers — the naive direct convolution that is the baseline of exploration.
//
// VGG-16 numbering. vgg16Layers() lists the 13 convolution layers of VGG-16 (Simonyan and
// Zisserman 2015, configuration D) for a 224×224 RGB image in network order, positions 0..12,
// named conv1_1 … conv5_3. The LIFT paper (Mogers et al. 2020, Table 3) and the issue number
// them differently: by the layer's index in the network's list of layers, where ReLU and max-pool
// layers count too (the numbering of torchvision's vgg16().features). There layer 0 is conv1_1
// (3×224×224 → 64), layer 2 conv1_2, 5 conv2_1, 7 conv2_2, 10 conv3_1 (128×56×56 → 256), 12 and
// 14 conv3_2/3, 17, 19, 21 conv4_x and 24, 26, 28 conv5_x. `vgg16:N` (parseConvLayer, `weft run
// --layer`, the benchmarks) uses the paper's N, which matches the description of its
// benchmark layers "0 (3×224×224 → 64)" and "10 (128×56×56 → 256)"; vgg16PaperNumber converts
// a position in vgg16Layers() to it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/expr.h"

namespace weft {

struct ConvLayer {
  int64_t C = 1;       // input channels
  int64_t H = 1;       // input height
  int64_t W = 1;       // input width
  int64_t M = 1;       // output channels (kernels)
  int64_t K = 1;       // kernel height and width
  int64_t stride = 1;  // the same along both axes
  int64_t pad = 0;     // zero padding on every side

  int64_t outH() const;  // (H + 2·pad − K) / stride + 1
  int64_t outW() const;  // (W + 2·pad − K) / stride + 1

  // The definition's name (an identifier): "conv1_1" for VGG layers; empty gives "convLayer".
  std::string name;

  // Multiply-adds times two: 2·M·C·K²·outH·outW (the bias additions are not counted).
  int64_t flops() const;
  // "conv3_1: 128x56x56 -> 256x56x56 (3x3 kernels, stride 1, pad 1)".
  std::string describe() const;
  // Throws std::invalid_argument with a message naming the bad number unless every size is at
  // least 1, pad >= 0, a K×K window fits the padded image (K <= H + 2·pad and K <= W + 2·pad),
  // and every array has fewer than 2^31 elements (generated kernels index with int).
  void validate() const;
};

// The layer as a high-level weft definition named layer.name (or "convLayer"), with params
//   input   [[[float]W]H]C
//   weights [[[[float]K]K]C]M
//   bias    [float]M
// and the declared result type [[[float]outW]outH]M. Calls layer.validate() first.
Definition convLayerDefinition(const ConvLayer& layer);

// The paper's Listing 3 (the input of the direct-convolution strategy, rewrite/strategies.h
// conv-direct), with symbolic sizes C, H, W, M, K, P (padding, >= 0) and S (stride, >= 1) and
// the channels innermost: weights [[[[float]C]K]K]M, biases [float]M, input [[[float]C]W]H,
// result [[[float]OW]OH]M. The same definition as examples/conv.weft.
Definition convListing3Definition();
// The sizes of `layer` for convListing3Definition: C, H, W, M, K, P = pad, S = stride.
ArithBinding convListing3Sizes(const ConvLayer& layer);

// The 13 convolution layers of VGG-16 for a 224×224 input, in network order (positions 0..12):
// conv1_1 3→64 and conv1_2 64→64 at 224×224; conv2_1 64→128, conv2_2 128→128 at 112; conv3_1
// 128→256, conv3_2 and conv3_3 256→256 at 56; conv4_1 256→512, conv4_2 and conv4_3 512→512 at
// 28; conv5_1 … conv5_3 512→512 at 14; all K = 3, stride 1, pad 1.
const std::vector<ConvLayer>& vgg16Layers();

// The LIFT paper's number (Table 3) of the layer at `position` in vgg16Layers():
// 0, 2, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28. Throws std::out_of_range past position 12.
int vgg16PaperNumber(size_t position);

// The VGG-16 layer with the paper's number N; throws std::invalid_argument listing the valid
// numbers when N names no convolution layer (e.g. 1, a ReLU).
const ConvLayer& vgg16Layer(int paperNumber);

// A layer from the command line's spelling: "C,H,W,M,K,stride,pad" (seven integers, e.g.
// "3,224,224,64,3,1,1"; the name becomes "conv_C_H_W_M_K_stride_pad" with the numbers) or
// "vgg16:N" with the paper's number N. Throws std::invalid_argument saying what was expected;
// the layer is validated.
ConvLayer parseConvLayer(const std::string& spec);

}  // namespace weft
