// The text of a small convolution layer in PyTorch's conventions (C=3, H=W=8, M=4, 3x3, pad 1)
// as the conv workload builds it (workloads/conv/conv_layer.h convLayerDefinition): the
// lowering's test reads it (tests/codegen links no workload) and the workload's test checks the
// builder still prints exactly this.
#pragma once

namespace weft::testing {

inline const char* const kConvLayerText =
    "def layer(input: [[[float]8]8]3, weights: [[[[float]3]3]3]4, bias: [float]4): [[[float]8]8]4 =\n"
    "  map(\n"
    "    kernel -> map(\n"
    "      row -> join(map(\n"
    "        window -> reduce(\n"
    "          kernel._1,\n"
    "          (acc, p) -> acc + p._0 * p._1,\n"
    "          zip(join(join(window)), join(join(kernel._0)))),\n"
    "        row)),\n"
    "      map(\n"
    "        rowOfChannels -> transpose(rowOfChannels),\n"
    "        transpose(map(channel -> slide2D(3, 1, pad2D(1, constant(0.0f), channel)), input)))),\n"
    "    zip(weights, bias))\n";

}  // namespace weft::testing
