// Random small layers for tests of the convolution strategies: Listing 3 (examples/conv.weft,
// channels innermost) with real-valued random weights, biases and input, and the sizes bound.
// Header-only: every .cpp under tests/<folder>/ is a test executable of its own.
#pragma once

#include <random>
#include <vector>

#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/value.h"
#include "tests/support/random_values.h"

namespace weft::testing {

struct Listing3Layer {
  std::vector<Value> inputs;  // weights, biases, input
  ArithBinding sizes;         // C, H, W, M, K, P, S
};

// Random real-valued inputs for conv.weft: C channels, M kernels of K×K, an H×W image, P, S.
inline Listing3Layer randomListing3Layer(const Definition& conv, int channels, int kernels,
                                         int kernelSize, int height, int width, int padding,
                                         int stride, std::mt19937_64& rng) {
  ArithBinding shape = {
      {"C", channels}, {"M", kernels}, {"K", kernelSize}, {"H", height}, {"W", width}};
  Listing3Layer layer;
  RandomValueOptions options;
  options.realFloats = true;
  for (const Expr& param : conv.function.params()) {
    layer.inputs.push_back(randomValue(param.paramType(), shape, rng, options));
  }
  layer.sizes = bindSizes(conv, layer.inputs, {{"P", padding}, {"S", stride}});
  return layer;
}

// examples/conv.weft's definition (tests run in the source folder).
inline Definition listing3FromExample() {
  return parseFile("examples/conv.weft").definitions.back();
}

}  // namespace weft::testing
