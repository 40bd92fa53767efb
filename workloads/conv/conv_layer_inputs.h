// A convolution layer's inputs as users hold them, in PyTorch's conventions: the input x
// (C, H, W), the weights w (M, C, K, K) and the bias b (M,) as float32 .npy files, checked
// against the layer with messages that name the file and both shapes; and the same arrays in
// the layouts of Listing 3 (channels innermost), which the explored variants read. What
// `weft run --layer` reads.
#pragma once

#include <string>
#include <vector>

#include "ir/npy.h"
#include "ir/value.h"
#include "workloads/conv/conv_layer.h"

namespace weft::explore {

// The three arrays at `paths` (x, w, b), checked against `layer`; `layerSpec` is the layer as
// the user gave it, for messages. Throws std::runtime_error.
std::vector<NpyArray> readLayerArrays(const ConvLayer& layer, const std::vector<std::string>& paths,
                                      const std::string& layerSpec);

// The inputs of Listing 3 (convListing3Definition: weights (M, K, K, C), biases (M), input
// (H, W, C)) from arrays in PyTorch's layouts.
std::vector<Value> listing3Inputs(const ConvLayer& layer, const std::vector<NpyArray>& arrays);

}  // namespace weft::explore
