// A convolution layer's inputs in PyTorch's conventions (see
// workloads/conv/conv_layer_inputs.h).
#include "workloads/conv/conv_layer_inputs.h"

#include <stdexcept>

namespace weft::explore {

// The inputs of the built-in layer as read: x (C, H, W), w (M, C, K, K), b (M), float32,
// checked against the layer's numbers with messages that name the file, the expected and the
// found shape.
std::vector<NpyArray> readLayerArrays(const ConvLayer& layer, const std::vector<std::string>& paths,
                                     const std::string& layerSpec) {
  struct Expected {
    const char* what;
    const char* dims;
    std::vector<int64_t> shape;
  };
  const std::vector<Expected> expected = {
      {"input x", "(C, H, W)", {layer.C, layer.H, layer.W}},
      {"weights w", "(M, C, K, K)", {layer.M, layer.C, layer.K, layer.K}},
      {"bias b", "(M,)", {layer.M}}};
  if (paths.size() != expected.size()) {
    throw std::runtime_error(
        "--layer " + layerSpec + " takes 3 inputs, --in x.npy w.npy b.npy: the input " +
        shapeToString(expected[0].shape) + ", the weights " + shapeToString(expected[1].shape) +
        " and the bias " + shapeToString(expected[2].shape) + "; " +
        std::to_string(paths.size()) + " --in file(s) were given");
  }
  std::vector<NpyArray> arrays;
  for (size_t index = 0; index < expected.size(); ++index) {
    const std::string& path = paths[index];
    NpyArray array = readNpy(path);
    if (array.dtype != NpyDType::Float32) {
      throw std::runtime_error(path + ": the layer's " + expected[index].what +
                               " must be float32 (or float64), not int32");
    }
    if (array.shape != expected[index].shape) {
      throw std::runtime_error(path + ": the layer's " + expected[index].what +
                               " must have shape " + expected[index].dims + " = " +
                               shapeToString(expected[index].shape) + " for " + layer.describe() +
                               ", but has shape " + shapeToString(array.shape));
    }
    arrays.push_back(std::move(array));
  }
  return arrays;
}

// The inputs of Listing 3 (convListing3Definition: weights (M, K, K, C), biases (M), input
// (H, W, C), channels innermost) from the arrays in PyTorch's layouts.
std::vector<Value> listing3Inputs(const ConvLayer& layer, const std::vector<NpyArray>& arrays) {
  const std::vector<float>& x = arrays[0].f32;
  const std::vector<float>& w = arrays[1].f32;
  const size_t C = static_cast<size_t>(layer.C), H = static_cast<size_t>(layer.H),
               W = static_cast<size_t>(layer.W), M = static_cast<size_t>(layer.M),
               K = static_cast<size_t>(layer.K);
  std::vector<float> input(x.size()), weights(w.size());
  for (size_t c = 0; c < C; ++c) {
    for (size_t h = 0; h < H; ++h) {
      for (size_t col = 0; col < W; ++col) input[(h * W + col) * C + c] = x[(c * H + h) * W + col];
    }
  }
  for (size_t m = 0; m < M; ++m) {
    for (size_t c = 0; c < C; ++c) {
      for (size_t ky = 0; ky < K; ++ky) {
        for (size_t kx = 0; kx < K; ++kx) {
          weights[((m * K + ky) * K + kx) * C + c] = w[((m * C + c) * K + ky) * K + kx];
        }
      }
    }
  }
  const Definition listing3 = convListing3Definition();
  const ArithBinding sizes = convListing3Sizes(layer);
  const std::vector<Expr>& params = listing3.function.params();  // weights, biases, input
  return {valueFromFlat(params[0].paramType(), sizes, weights),
          valueFromFlat(params[1].paramType(), sizes, arrays[2].f32),
          valueFromFlat(params[2].paramType(), sizes, input)};
}

}  // namespace weft::explore
